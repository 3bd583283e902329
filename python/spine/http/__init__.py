"""The HTTP kit every process's app is built from: the route table (which also yields the
capability registry and the OpenAPI document), the RSGI app base served by Granian, requests,
errors, bodies, SSE streams and serving. It imports no process package."""
