"""The public gateway: one API over one or more venue nodes and the screener (``spine gateway``)."""
