"""The factory a venue's data client is built by: the node hands nautilus the factory class,
and nautilus calls ``create`` with the venue's config, which must be the venue's own."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from nautilus_trader.config import LiveDataClientConfig
from nautilus_trader.live.data_client import LiveMarketDataClient
from nautilus_trader.live.factories import LiveDataClientFactory

__all__ = ["VenueClientFactory"]


class VenueClientFactory(LiveDataClientFactory):
    """Builds ``CLIENT`` from a ``CONFIG``; any other config is refused, naming ``VENUE``."""

    CLIENT: ClassVar[type[LiveMarketDataClient]]
    CONFIG: ClassVar[type[LiveDataClientConfig]]
    #: The venue in the refusal: ``the <VENUE> venue's factory builds from a <CONFIG>``.
    VENUE: ClassVar[str]

    @classmethod
    def create(
        cls,
        loop: asyncio.AbstractEventLoop,
        name: str,
        config: LiveDataClientConfig,
        msgbus: Any,
        cache: Any,
        clock: Any,
    ) -> LiveMarketDataClient:
        if not isinstance(config, cls.CONFIG):
            raise TypeError(
                f"the {cls.VENUE} venue's factory builds from a {cls.CONFIG.__name__}, got {type(config).__name__}"
            )
        return cls.CLIENT(loop, msgbus, cache, clock, config)
