"""``spine node``: the process entry point. The node is built in the main thread (nautilus
installs signal handlers there); SIGINT and SIGTERM then set one stop event, so a stop always
takes the clean path: stop the node, flush the catalogs, exit 0. A run that fails (FAILED)
still stops and flushes, then exits 1. A node that cannot listen on its address refuses to
start (exit 3), like one whose catalog volume is not writable, before it writes anything; one
whose data directory holds another venue's series exits 2."""

from __future__ import annotations

import asyncio
import signal
import sys

from spine.http.serve import start_config
from spine.node.config import ConfigError, load_config
from spine.node.persist.store import VolumeNotReady

__all__ = ["run_node"]


def run_node(config_path: str | None) -> int:
    config = start_config("spine node", lambda: load_config(config_path))
    if isinstance(config, int):
        return config
    from spine.node.service import NodeFailed, VenueNode  # nautilus imports take a second: only when running

    try:
        venue = VenueNode(config)
    except VolumeNotReady as error:
        print(f"spine node: refusing to start: {error}", file=sys.stderr)
        return 3
    except ConfigError as error:  # the data directory belongs to another venue
        print(f"spine node: refusing to start: {error}", file=sys.stderr)
        return 2
    # Granian's threads hand each request to the loop under the GIL: with the loop busy, the
    # default 5 ms switch interval is what every request waits, several times over.
    sys.setswitchinterval(config.gil_switch_secs)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stop = asyncio.Event()
    venue.build(loop)
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)  # replaces the node's own handler
    print(
        f"spine node {config.node_id}: venue {config.venue}, catalogs under {config.catalog_dir}, "
        f"reloaded {venue.reloaded} bars; http://{config.host}:{config.port}/v2/health",
        flush=True,
    )
    try:
        loop.run_until_complete(venue.run(stop, serve_http=True))
    except NodeFailed as error:
        print(f"spine node {config.node_id}: the run failed: {error}; catalogs flushed", file=sys.stderr, flush=True)
        return 1
    finally:
        loop.close()
    print(f"spine node {config.node_id}: stopped; catalogs flushed", flush=True)
    return 0
