"""What every venue's data client of ours shares: the client is named for its venue
(``config.venue_name``), and its factory (the class the node hands nautilus, which calls
``create`` with the venue's config) builds it from the venue's own config only."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from nautilus_trader.common.providers import InstrumentProvider
from nautilus_trader.config import LiveDataClientConfig
from nautilus_trader.live.data_client import LiveMarketDataClient
from nautilus_trader.live.factories import LiveDataClientFactory
from nautilus_trader.model.identifiers import ClientId, Venue

__all__ = ["VenueClientFactory", "VenueDataClient"]


class VenueDataClient(LiveMarketDataClient):
    """A data client whose client id and venue are its config's ``venue_name``."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        msgbus: Any,
        cache: Any,
        clock: Any,
        config: LiveDataClientConfig,
        provider: InstrumentProvider,
    ) -> None:
        super().__init__(
            loop=loop,
            client_id=ClientId(config.venue_name),
            venue=Venue(config.venue_name),
            msgbus=msgbus,
            cache=cache,
            clock=clock,
            instrument_provider=provider,
            config=config,
        )


class VenueClientFactory(LiveDataClientFactory):
    """Builds ``CLIENT`` from a ``CONFIG``; any other config is refused, naming ``VENUE``."""

    CLIENT: ClassVar[Callable[..., VenueDataClient]]
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
    ) -> VenueDataClient:
        if not isinstance(config, cls.CONFIG):
            raise TypeError(
                f"the {cls.VENUE} venue's factory builds from a {cls.CONFIG.__name__}, got {type(config).__name__}"
            )
        return cls.CLIENT(loop, msgbus, cache, clock, config)
