"""The screener process: feature rows at seven resolutions for the instruments of one or more
venue nodes, fed by their bar pages and streams, served on its own port."""
