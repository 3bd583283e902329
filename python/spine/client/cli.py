"""``spine client``: the tool table as commands for a terminal. Every tool is a command named
as the tool with dashes (``bars-list``, ``backtests-submit``): its path placeholders are
positional, its query parameters options, its body ``--body FILE``. A few commands do what a
terminal user does in a loop: ``strategy-save``, ``backtest`` (submit and follow to the report),
``follow``, ``study`` (create and follow to the best trial), ``jobs`` (with parameters and key
statistics).

Output is a table by default, ``--json`` the gateway's document unchanged, ``--csv`` a page's
rows. Exit codes: 0 done; 1 the gateway answered an error; 2 a usage error or refused
arguments; 3 the gateway did not answer; 4 a followed backtest or study ended FAILED or
CANCELLED; 5 an answer broke the contract; 6 it had not ended within ``--timeout``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from spine.client.client import Client, decode
from spine.client.errors import ArgumentError, ContractViolation, GatewayError, GatewayUnreachable
from spine.client.render import csv_text, table_text
from spine.client.table import Tool, tools
from spine.client.transport import DEFAULT_GATEWAY, Batch

__all__ = ["EXIT", "main"]

EXIT = {"done": 0, "gateway error": 1, "usage": 2, "unreachable": 3, "job failed": 4, "contract": 5, "timeout": 6}
#: A study's states that end it.
STUDY_ENDS = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
#: The statistics ``jobs`` shows beside each completed job's parameters.
KEY_STATISTICS = ("total_return", "sharpe", "max_drawdown", "trade_count")


#: What a query option takes, where its name does not say it.
_OPTION_HELP = {
    "instrument_id": "SYMBOL.VENUE, e.g. BTCUSDT.SIM",
    "bar_type": "e.g. BTCUSDT.SIM-5-MINUTE-LAST-EXTERNAL (default: the instrument's 1-minute bars)",
    "start": "UTC nanoseconds since the epoch, as digits",
    "end": "UTC nanoseconds since the epoch, as digits",
    "after_sequence": "only what follows this sequence number",
    "cursor": "a page's next_cursor: the page after it",
    "limit": "rows per page",
}


class Usage(Exception):
    """A usage error found after parsing (a body file that is not a JSON object, ...)."""


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--gateway",
        default=os.environ.get("SPINE_CLIENT_GATEWAY", DEFAULT_GATEWAY),
        metavar="URL",
        help=f"the gateway's base URL (default SPINE_CLIENT_GATEWAY or {DEFAULT_GATEWAY})",
    )
    shape = common.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the gateway's document unchanged")
    shape.add_argument("--csv", action="store_true", help="print a page's rows as CSV")
    return common


def _tool_command(commands: Any, found: Tool, common: argparse.ArgumentParser) -> None:
    command = commands.add_parser(found.name.replace("_", "-"), parents=[common], help=found.description.split(". ")[0])
    command.description = found.description
    for name in found.path_params:
        command.add_argument(name, help=f"the {{{name}}} of {found.path}")
    for name in found.query_params:
        schema = found.input_schema["properties"][name]
        command.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            type=int if schema["type"] == "integer" else str,
            choices=schema.get("enum"),
            required=name in found.required,
            help=_OPTION_HELP.get(name),
        )
    if found.body:
        command.add_argument("--body", required=True, metavar="FILE", help="the POST body, a JSON file ('-': stdin)")
    if found.stream:
        command.add_argument("--max-events", type=int, help="at most this many events (default 100, at most 1000)")
        command.add_argument("--seconds", type=int, help="for at most this long (default 10, at most 60)")
    command.set_defaults(run=lambda client, args: _run_tool(client, found, args))


def _body(path: str) -> dict[str, Any]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")

    def no_float(number: str) -> Any:
        raise Usage(f'--body: {number} is a float; decimals are strings ("{number}")')

    try:
        body = json.loads(text, parse_float=no_float)
    except ValueError as error:
        raise Usage(f"--body: not JSON ({error})") from None
    if not isinstance(body, dict):
        raise Usage("--body: the body is a JSON object")
    return body


def _arguments(found: Tool, args: argparse.Namespace) -> dict[str, Any]:
    arguments = {name: getattr(args, name) for name in found.arguments if getattr(args, name, None) is not None}
    if found.body:
        arguments["body"] = _body(args.body)
    return arguments


def _run_tool(client: Client, found: Tool, args: argparse.Namespace) -> int:
    arguments = _arguments(found, args)
    if found.stream:
        got = client.gateway.batch(found, arguments)
        if not isinstance(got, Batch):
            decode(got, found)  # a refused stream: raises the gateway's error
        assert isinstance(got, Batch)
        for event in got.events:
            print(event.data if args.json else f"{event.event}: {event.data}")
        print(f"{len(got.events)} events; the read ended: {got.ended}", file=sys.stderr)
        return EXIT["done"]
    answer = client.answer(found.name, **arguments)
    decode(answer, found)  # the contract's checks; the decoder's keys come sorted, so show the served order
    if args.json:
        sys.stdout.buffer.write(answer.body + b"\n")
    else:
        _show(json.loads(answer.body), args)
    return EXIT["done"]


def _show(document: Any, args: argparse.Namespace) -> None:
    print(csv_text(document) if args.csv else table_text(document), end="")


def _strategy_save(client: Client, args: argparse.Namespace) -> int:
    revision = client.save_strategy(args.strategy_id, args.directory, message=args.message)
    if args.json:
        print(json.dumps(revision))
    else:
        print(f"saved {args.strategy_id} revision {revision['revision_id']} ({len(revision['files'])} files)")
    return EXIT["done"]


def _follow(client: Client, job_id: str, args: argparse.Namespace) -> int:
    """Follow a job with a progress line on stderr, then print its statistics (or, with
    ``--json``, its report); exit 4 when it did not complete."""
    began, count, state = time.monotonic(), 0, "QUEUED"
    for event in client.follow_backtest(job_id, seconds=args.timeout):
        count += 1
        state = event["state"] if event["type"] == "STATE" else state
        said = event.get("message") or ""
        line = f"{job_id[:12]} {state} · {count} events · {time.monotonic() - began:.1f} s · {said}"
        print(f"\r{line[:118]:<118}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if state != "COMPLETED":
        detail = client.backtests_get(job_id)
        print(f"backtest {job_id} {state}: {detail.get('last_error') or 'no error recorded'}", file=sys.stderr)
        return EXIT["job failed"]
    if args.json:
        sys.stdout.buffer.write(client.answer("backtests_report", id=job_id).body + b"\n")
    else:
        print(table_text(_statistics(client, job_id)), end="")
    return EXIT["done"]


def _statistics(client: Client, job_id: str) -> dict[str, Any]:
    page = client.backtests_outputs(job_id, "statistics")
    return page["items"][0] if page["items"] else {}


def _backtest(client: Client, args: argparse.Namespace) -> int:
    job = client.backtests_submit(body=_body(args.body))
    print(f"submitted backtest {job['job_id']}", file=sys.stderr)
    return _follow(client, job["job_id"], args)


def _study(client: Client, args: argparse.Namespace) -> int:
    """Create a study and follow its progress (it has no stream: read every second) to its end;
    then its best trial's parameters and value (``--json``: the study document)."""
    study = client.studies_create(body=_body(args.body))
    study_id, deadline = study["study_id"], time.monotonic() + args.timeout
    print(f"created study {study_id}", file=sys.stderr)
    while study["state"] not in STUDY_ENDS:
        if time.monotonic() > deadline:
            raise TimeoutError(f"study {study_id} did not end within {args.timeout:g} s")
        time.sleep(1.0)
        study = client.studies_get(study_id)
        done = study["progress"]
        line = f"{study_id[:12]} {study['state']} · {done['complete']}/{done['target']} complete"
        line += f" · {done['running']} running · {done['failed']} failed · best {study['best_value'] or '-'}"
        print(f"\r{line[:118]:<118}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if args.json:
        sys.stdout.buffer.write(client.answer("studies_get", id=study_id).body + b"\n")
    elif study["best_trial"] is not None:
        trial = client.studies_trial(study_id, str(study["best_trial"]))
        print(
            table_text(
                {"study_id": study_id, "state": study["state"], "best_value": study["best_value"]}
                | {f"parameters.{p['name']}": p["value"] for p in trial["params"]}
            ),
            end="",
        )
    return EXIT["done"] if study["state"] == "COMPLETED" else EXIT["job failed"]


def _jobs(client: Client, args: argparse.Namespace) -> int:
    page = client.backtests_list(strategy_id=args.strategy_id, state=args.state, limit=args.limit)
    if args.json:
        print(json.dumps(page))
        return EXIT["done"]
    rows = []
    for job in page["items"]:
        run = page["runs"].get(job["job_id"], {})
        row = {"job_id": job["job_id"][:12], "strategy_id": job["strategy_id"], "state": job["state"]}
        row["parameters"] = " ".join(f"{k}={v}" for k, v in sorted(run.get("parameters", {}).items()))
        statistics = _statistics(client, job["job_id"]) if job["state"] == "COMPLETED" else {}
        rows.append(row | {name: statistics.get(name, "") for name in KEY_STATISTICS})
    listed = {"items": rows, "next_cursor": page["next_cursor"]}
    print(csv_text(listed) if args.csv else table_text(listed), end="")
    return EXIT["done"]


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = argparse.ArgumentParser(prog="spine client", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    save = commands.add_parser("strategy-save", parents=[common], help="save a directory's files as a revision")
    save.add_argument("strategy_id")
    save.add_argument("directory")
    save.add_argument("--message", default="", help="the revision's message")
    save.set_defaults(run=_strategy_save)
    for name, summary, run in (
        ("backtest", "submit a backtest and follow it to its report", _backtest),
        ("follow", "follow a backtest job to its report", lambda c, a: _follow(c, a.job_id, a)),
        ("study", "create a parameter study and follow it to its best trial", _study),
    ):
        command = commands.add_parser(name, parents=[common], help=summary)
        if name in ("backtest", "study"):
            command.add_argument("--body", required=True, metavar="FILE", help="the submit body (JSON; '-': stdin)")
        else:
            command.add_argument("job_id")
        command.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
        command.set_defaults(run=run)
    jobs = commands.add_parser("jobs", parents=[common], help="backtest jobs with parameters and key statistics")
    jobs.add_argument("--strategy-id", dest="strategy_id")
    jobs.add_argument("--state")
    jobs.add_argument("--limit", type=int, default=20)
    jobs.set_defaults(run=_jobs)
    for found in tools():
        _tool_command(commands, found, common)
    return parser


#: What each failure exits with (the first class an error is an instance of wins).
_FAILURES: tuple[tuple[type[BaseException], str], ...] = (
    (GatewayUnreachable, "unreachable"),
    (TimeoutError, "timeout"),
    (GatewayError, "gateway error"),
    (ContractViolation, "contract"),
    (Usage, "usage"),
    (ArgumentError, "usage"),
    (OSError, "usage"),  # a body file or a directory that cannot be read
)


def _outcome(run: Callable[[], int]) -> int:
    try:
        return run()
    except tuple(kind for kind, _ in _FAILURES) as error:
        print(f"spine client: {error}", file=sys.stderr)
        return EXIT[next(name for kind, name in _FAILURES if isinstance(error, kind))]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with Client(args.gateway) as client:
        return _outcome(lambda: int(args.run(client, args)))
