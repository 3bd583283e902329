"""The feature package's refusals as the unit tests check them."""

from __future__ import annotations

from typing import Any

import pytest

from spine.errors import FeatureError, SpineError


def raises(symbol: str, call: Any) -> FeatureError:
    """The FeatureError ``call`` raises: a SpineError and a ValueError, its detail led by
    ``symbol``."""
    with pytest.raises(FeatureError) as caught:
        call()
    assert isinstance(caught.value, SpineError) and isinstance(caught.value, ValueError)
    assert caught.value.symbol == symbol and str(caught.value).startswith(symbol + ": ")
    return caught.value
