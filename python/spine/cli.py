"""The `spine` console script. Subcommands are added by the parts that need them.

Kept import-light: `spine --version` must not import nautilus_trader (seconds of start-up),
so versions are read from installed metadata.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from spine import CanonicalJsonError, IdentityNameError, __version__, canonicalize, identity
from spine.lifeline import die_with_parent


def _installed(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def version_text() -> str:
    """Versions of spine and nautilus_trader, the schema-set digest (the spec's 58) and the own
    set's digest."""
    from spine.schemas import own_schema_set_digest, schema_set_digest

    return (
        f"spine {__version__}\n"
        f"nautilus_trader {_installed('nautilus_trader')}\n"
        f"schema-set sha256:{schema_set_digest()}\n"
        f"own-schema-set sha256:{own_schema_set_digest()}"
    )


def _cmd_canonical(args: argparse.Namespace) -> int:
    """Print the canonical form of JSON text (a file or stdin), and optionally its identity."""
    data = sys.stdin.buffer.read() if args.file == "-" else open(args.file, "rb").read()
    try:
        canonical = canonicalize(data)
        digest = identity(args.identity, _load(canonical)) if args.identity else None
    except (CanonicalJsonError, IdentityNameError) as error:
        print(f"spine canonical: {error}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(canonical + b"\n")
    if digest is not None:
        print(f"{args.identity} {digest}")
    return 0


def _load(canonical: bytes) -> object:
    # Canonical text holds no floats, so the stdlib parser yields exactly the same value.
    import json

    return json.loads(canonical)


def _cmd_node(args: argparse.Namespace) -> int:
    """Run a market-data venue node until SIGINT or SIGTERM, then persist and exit."""
    from spine.node.main import run_node

    return run_node(args.config)


def _cmd_screener(args: argparse.Namespace) -> int:
    """Run the screener over one or more venue nodes until SIGINT or SIGTERM."""
    from spine.screener.main import run_screener

    return run_screener(args.config, args.node or (), args.port, args.data_dir)


def _cmd_web(args: argparse.Namespace) -> int:
    """Serve the UI and the /api/engine/ proxy until SIGINT or SIGTERM."""
    from spine.web.main import run_web

    return run_web(args.config, args.gateway, args.port)


def _cmd_tools(args: argparse.Namespace) -> int:
    """Serve the tool table to an agent over stdin and stdout (Model Context Protocol)."""
    from spine.tools.main import run_tools

    return run_tools(args.config, args.gateway)


def _cmd_gateway(args: argparse.Namespace) -> int:
    """Run the public gateway over venue nodes and the screener until SIGINT or SIGTERM."""
    from spine.gateway.main import run_gateway

    return run_gateway(args.config, args.node or (), args.screener, args.port, args.data_dir, args.catalog or ())


def _cmd_up(args: argparse.Namespace) -> int:
    """Run a node (SIM), a screener and the gateway together until SIGINT or SIGTERM."""
    from spine.up import run_up

    return run_up(args.data_dir, args.port, args.paper)


def _cmd_worker(args: argparse.Namespace) -> int:
    """Run queued backtest jobs from the store until SIGINT or SIGTERM."""
    from spine.worker.main import run_worker

    return run_worker(args.config, args.database, args.catalog or (), args.id, args.data_dir)


def _cmd_import(args: argparse.Namespace) -> int:
    """Import OHLCV bars from a CSV or Parquet file into a catalog's EXTERNAL root."""
    from spine.importer.main import run_importer

    return run_importer(
        args.file,
        args.venue,
        args.catalog,
        symbol=args.symbol,
        step=args.step,
        price_precision=args.price_precision,
        size_precision=args.size_precision,
        currency=args.currency,
        open_time=args.open_time,
        replace=args.replace,
    )


def _import_command(commands: Any) -> None:
    command: argparse.ArgumentParser = commands.add_parser(
        "import",
        help="import OHLCV bars (CSV or Parquet) into a catalog's EXTERNAL root",
        description="Load 1-minute (or daily) OHLCV bars from FILE into DIR/external as SYMBOL.VENUE, exactly "
        "(decimal text, never floats), all or nothing. Columns: ts_event (or timestamp, time, date): "
        "the bar's CLOSE time, integer nanoseconds or ISO-8601 UTC; open, high, low, close, volume.",
    )
    command.add_argument("file", metavar="FILE", help="a .csv, .csv.gz, .parquet or .pq file")
    command.add_argument("--venue", required=True, metavar="NAME", help="the venue (^[A-Z][A-Z0-9_]*$)")
    command.add_argument(
        "--catalog", metavar="DIR", help="the catalog directory; bars go to DIR/external (default var/spine-up/imports)"
    )
    command.add_argument("--symbol", metavar="SYM", help="the symbol (default: the file's stem upper-cased)")
    command.add_argument(
        "--step",
        default="1m",
        choices=("1m", "1d"),
        help="the bar step: 1m (default) or 1d (daily bars, closing at 00:00 UTC)",
    )
    command.add_argument(
        "--open-time", action="store_true", help="the timestamp column holds each bar's open; its close is open + step"
    )
    command.add_argument("--price-precision", type=int, metavar="N", help="price decimals (default: inferred)")
    command.add_argument("--size-precision", type=int, metavar="N", help="volume decimals (default: inferred)")
    command.add_argument(
        "--currency",
        default="USD",
        metavar="CUR",
        help="the quote currency (default USD): SYMBOL ending in it is a CurrencyPair, else an Equity in it",
    )
    command.add_argument(
        "--replace",
        action="store_true",
        help="rewrite the bar type (and the definition) from FILE instead of appending",
    )
    command.set_defaults(handler=_cmd_import)


def _port(text: str) -> int:
    """A TCP port for a flag: 0 (any free port) through 65535, else a usage error naming it."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number; allowed 0..65535") from None
    if not 0 <= port <= 65_535:
        raise argparse.ArgumentTypeError(f"{port}: allowed 0..65535 (0: any free port)")
    return port


def _serving_command(
    commands: Any, name: str, summary: str, port: int, handler: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """A process over venue nodes: its configuration file, nodes, port and data directory."""
    command: argparse.ArgumentParser = commands.add_parser(name, help=summary)
    command.add_argument(
        "--config", metavar="TOML", help=f"{name} configuration file (default: SPINE_{name.upper()}_CONFIG or built-in)"
    )
    command.add_argument(
        "--node",
        action="append",
        metavar="URL",
        help="a venue node's base URL (repeat for several; default: http://127.0.0.1:8700)",
    )
    command.add_argument("--port", type=int, help=f"the port it serves on (default {port})")
    command.add_argument("--data-dir", metavar="DIR", help=f"its data directory (default var/spine-{name})")
    command.set_defaults(handler=handler)
    return command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spine", description="Spine market-data gateway.")
    parser.add_argument("--version", action="store_true", help="print versions and the two schema-set digests")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    canonical = commands.add_parser("canonical", help="canonicalise JSON text and print its identity")
    canonical.add_argument("file", nargs="?", default="-", help="JSON file (default: stdin)")
    canonical.add_argument("--identity", metavar="NAME", help="also print the identity spine.v2/NAME")
    canonical.set_defaults(handler=_cmd_canonical)
    node = commands.add_parser("node", help="run a venue node (default: the simulated venue, local catalogs)")
    node.add_argument(
        "--config", metavar="TOML", help="node configuration file (default: SPINE_NODE_CONFIG or built-in)"
    )
    node.set_defaults(handler=_cmd_node)
    _serving_command(commands, "screener", "run the feature screener over venue nodes", 8710, _cmd_screener)
    gateway = _serving_command(
        commands, "gateway", "run the public gateway over venue nodes and the screener", 8800, _cmd_gateway
    )
    gateway.add_argument("--screener", metavar="URL", help="the screener's base URL (default http://127.0.0.1:8710)")
    gateway.add_argument(
        "--catalog",
        action="append",
        metavar="DIR",
        help="a catalog dir the workers read beside the nodes' (spine import's; repeat for several): "
        "its instruments are known at submit",
    )
    web = commands.add_parser("web", help="serve the browser UI and its same-origin proxy to the gateway")
    web.add_argument("--config", metavar="TOML", help="web configuration file (default: SPINE_WEB_CONFIG or built-in)")
    web.add_argument("--gateway", metavar="URL", help="the gateway's base URL (default http://127.0.0.1:8800)")
    web.add_argument("--port", type=int, help="the port it serves on (default 8900)")
    web.set_defaults(handler=_cmd_web)
    tools = commands.add_parser(
        "tools", help="serve the gateway's operations as tools to an agent (MCP over stdio; no listener)"
    )
    tools.add_argument(
        "--config", metavar="TOML", help="tool server configuration file (default: SPINE_TOOLS_CONFIG or built-in)"
    )
    tools.add_argument("--gateway", metavar="URL", help="the gateway's base URL (default http://127.0.0.1:8800)")
    tools.set_defaults(handler=_cmd_tools)
    commands.add_parser(
        "client",
        help="the gateway's operations as commands: bars, screens, strategies, backtests, studies",
        add_help=False,  # main() hands everything after "client" to spine.client.cli
    )
    up = commands.add_parser("up", help="run a node on SIM, a screener and the gateway together; Ctrl-C stops all")
    up.add_argument("--data-dir", metavar="DIR", help="their data directories and up.json (default var/spine-up)")
    up.add_argument(
        "--port",
        type=_port,
        default=8800,
        metavar="N",
        help="the gateway's port, the one URL a client needs (default 8800; 0: any free port)",
    )
    up.add_argument(
        "--paper",
        action="store_true",
        help="make the simulated venue's node a paper node: a sandbox account and the operator's paper orders",
    )
    up.set_defaults(handler=_cmd_up)
    worker = commands.add_parser("worker", help="run queued backtest jobs, each in a process of its own")
    worker.add_argument(
        "--config", metavar="TOML", help="worker configuration file (default: SPINE_WORKER_CONFIG or built-in)"
    )
    worker.add_argument(
        "--database",
        metavar="URL",
        help="the store: sqlite:///PATH or postgresql+psycopg://... (default: sqlite:///<data dir>/spine.db)",
    )
    worker.add_argument(
        "--catalog",
        action="append",
        metavar="DIR",
        help="a node's catalog directory bars are read from (repeat for several; default var/spine/catalog)",
    )
    worker.add_argument("--id", metavar="NAME", help="the worker's name in jobs and events (default host-pid)")
    worker.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where the default SQLite store lives (default var/spine-gateway, the gateway's)",
    )
    worker.set_defaults(handler=_cmd_worker)
    _import_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    die_with_parent()  # started by `spine up`: end with it
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["client"]:  # its own parser: the tool table is read only when asked for
        from spine.client.cli import main as client_main

        return client_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(version_text())
        return 0
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
