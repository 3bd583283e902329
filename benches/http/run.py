"""The HTTP and SSE benchmarks of issue 5, every case side by side in one run:

    python -m benches.http.run [--quick] [--repeats N] [--json PATH]

1. ``spine node`` (simulated venue, real time, ~5,000 minutes hydrated) and, serving the same
   pages pre-built from it, FastAPI on uvicorn, Starlette + orjson on uvicorn (uvloop,
   httptools) and, for /v2/health, a bare Granian RSGI app answering a constant. Outputs are
   checked equal first; then wrk runs each (route, server) in turn, repeats interleaved.
2. SSE fan-out to 1,000 subscribers: Spine's NodeApp and hub on embedded Granian, plain
   Starlette StreamingResponse on embedded Granian, sse-starlette on uvicorn; flat out, then
   paced at 10 events/s (10,000 deliveries/s).

Prints medians, ratios against the named rivals and the issue's targets; ``--json`` writes
the raw runs and the summary.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benches.http import pages, report, wrk
from benches.http.node import spine_node
from benches.http.procs import environment
from benches.http.servers import HEALTH_REFERENCE, HTTP_RIVALS, SSE_SERVERS, started
from benches.http.sse_client import run_clients

FULL = {
    "wrk_seconds": 10.0,
    "repeats": 3,
    "connections": 32,
    "subscribers": 1_000,
    "clients": 2,
    "flat_seconds": 4.5,
    "paced_seconds": 5.0,
    "rate": 10.0,
    "burst": 10,
}
QUICK = FULL | {"wrk_seconds": 3.0, "repeats": 1, "flat_seconds": 2.5, "paced_seconds": 3.0}


def http_runs(work: Path, setup: dict[str, Any]) -> list[dict[str, Any]]:
    """Spine's node and the rivals serving its pages, checked equal, then timed."""
    with spine_node(work) as spine:
        documents = pages.fetch(spine)
        env = environment(SPINE_BENCH_DOCS=str(pages.write(documents, work / "documents.json")))
        with started([*HTTP_RIVALS, HEALTH_REFERENCE], work, env) as rivals:
            pages.check(rivals, documents)
            return wrk_all({"spine": spine, **rivals}, setup)


def wrk_all(bases: dict[str, str], setup: dict[str, Any]) -> list[dict[str, Any]]:
    """wrk over every (route, server), repeats interleaved so drift on a shared machine
    spreads over all servers alike (the constant app answers every page: the ceiling)."""
    runs = []
    for repeat in range(setup["repeats"]):
        for case, path in pages.PATHS.items():
            for server, base in bases.items():
                result = wrk.run(base + path, setup["wrk_seconds"], setup["connections"])
                runs.append({"case": case, "server": server, "repeat": repeat, **result})
                _progress(runs[-1])
    return runs


def sse_runs(work: Path, setup: dict[str, Any]) -> list[dict[str, Any]]:
    """Every SSE server flat out, then paced, repeats interleaved."""
    cases = (
        ("flat", 0.0, setup["flat_seconds"], 1),
        ("burst", 0.0, setup["flat_seconds"], setup["burst"]),
        ("paced", setup["rate"], setup["paced_seconds"], 1),
    )
    runs = []
    with started(SSE_SERVERS, work, environment()) as bases:
        for repeat in range(setup["repeats"]):
            for server, base in bases.items():
                for mode, rate, seconds, burst in cases:
                    port = int(base.rsplit(":", 1)[1])
                    result = run_clients(
                        port, setup["subscribers"], rate, seconds, processes=setup["clients"], burst=burst
                    )
                    runs.append({"mode": mode, "server": server, "repeat": repeat, **result})
                    _progress(runs[-1])
    return runs


def _progress(run: dict[str, Any]) -> None:
    fields = {
        k: v
        for k, v in run.items()
        if k in ("rps", "p50_ms", "p99_ms", "deliveries_per_s", "window_per_s", "errors", "delivered", "expected")
    }
    print(
        f"  {run.get('case') or run.get('mode')} {run['server']} #{run['repeat'] + 1}: {fields}",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 s wrk runs, shorter SSE windows, one repeat")
    parser.add_argument("--repeats", type=int, help="repeat every case N times (medians are reported)")
    parser.add_argument("--json", type=Path, help="write the raw runs and the summary here")
    args = parser.parse_args(argv)
    setup = (QUICK if args.quick else FULL) | ({"repeats": args.repeats} if args.repeats else {})
    try:
        wrk.require()
    except wrk.WrkMissing as missing:
        print(f"benches.http: {missing}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="spine-bench-http-") as tmp:
        http = http_runs(Path(tmp), setup)
        sse = sse_runs(Path(tmp), setup)
    http_summary = report.medians(http, "case", report.HTTP_METRICS)
    sse_summary = report.medians(sse, "mode", report.SSE_METRICS)
    goals = report.targets(http_summary, sse_summary)
    print(report.table(http_summary, sse_summary, goals, setup))
    if args.json:
        summary = {"http": _rows(http_summary, "case"), "sse": _rows(sse_summary, "mode")}
        args.json.write_text(
            json.dumps(
                {"setup": setup, "summary": summary, "targets": goals, "runs": {"http": http, "sse": sse}}, indent=1
            )
        )
    return 0


def _rows(summary: dict, key: str) -> list[dict[str, Any]]:
    return [{key: group, "server": server, **metrics} for (group, server), metrics in summary.items()]


if __name__ == "__main__":
    sys.exit(main())
