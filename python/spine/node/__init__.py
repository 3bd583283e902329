"""The venue node: a NautilusTrader live node that ingests one venue (the simulated venue
``sim`` by default) and keeps its market data durable. Submodules hold the parts."""
