"""The simulated venue (``SIM`` unless ``sim.venue_name`` names another): a seeded, deterministic market
behind a real nautilus data client, the embedded default of every node."""

from spine.node.sim.universe import SimUniverseConfig, make_instruments

__all__ = ["SimUniverseConfig", "make_instruments"]
