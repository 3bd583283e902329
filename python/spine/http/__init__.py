"""The node's HTTP surface: an RSGI app served by Granian (v2 JSON and SSE routes), built from
one route table that also yields the capability registry and the OpenAPI document."""
