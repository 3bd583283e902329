"""HTTP and SSE benchmarks (issue 5): Spine's node against the simplest strong rivals, each
server in its own process on a loopback port, driven by wrk and by a raw-socket SSE client.

- ``run``: the runner (``python -m benches.http.run [--quick] [--json PATH]``);
- ``procs``, ``node``, ``wrk``: starting and stopping servers, the Spine node, wrk;
- ``pages``: the routes and the pre-built documents the rivals serve;
- ``fastapi_app``, ``starlette_app``, ``const_app``: the request/response rivals;
- ``events``, ``sse_spine``, ``sse_rivals``, ``sse_client``: the SSE fan-out case;
- ``screener``, ``screener_rival``: the screener's screens and stream (issue 25), its own
  runner (``python -m benches.http.screener [--quick] [--json PATH]``).

Nothing here is collected by pytest; ``benches/bench_http.py`` is the smoke check.
"""
