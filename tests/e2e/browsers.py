"""Debian's chromium driven by playwright for the UI's tests and benchmarks (no browser
download): skipped, saying why, where chromium is not installed (scripts/setup.sh installs it
when run as root)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium (a playwright ``Browser``), closed on the way out."""
    if shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()
