"""``spine tools``: the stdio tool server (Model Context Protocol, on the official ``mcp`` SDK)
over a gateway: ``config`` (its settings), ``service`` (a tool call against the gateway),
``api`` (the protocol's handlers) and ``main`` (the command). It serves the tool table of
:mod:`spine.client.table`, listens on no socket and imports no trading framework."""
