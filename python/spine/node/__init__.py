"""The venue node: a NautilusTrader live node that ingests one venue (the simulated venue
``sim`` by default) and keeps its market data durable. ``config`` holds its settings, ``main``
its command, ``service`` its state and lifecycle, ``api`` its app (handlers in ``reads``,
``bar_pages``, ``search``, ``selection``, ``v1_reads``) over ``view.NodeView``; ``persist/``
what it keeps on disk; ``sim/`` the simulated venue."""
