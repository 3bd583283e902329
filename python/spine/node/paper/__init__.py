"""A paper node: a venue node plus NautilusTrader's sandbox execution client for its venue
(``sandbox``: the client's configuration and the bars it is fed), and the execution reads it
serves (``reports``: accounts, orders, fills and positions as wire documents)."""
