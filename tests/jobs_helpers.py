"""Shared pieces of the store and worker tests (tests/unit/jobs, tests/e2e/test_worker_*): a file's
hash, a saved strategy, a submitted job, saves and claims racing from threads (on SQLite and
PostgreSQL alike), and a revision as the document the routes serve (jobs and events have theirs in
spine.jobs.documents)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

from spine.jobs import HeadMoved, Job, Revision, Store

STRATEGY = "ema_cross"
TOML = '[strategy]\nname = "EMA cross — ü"\n'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rid(label: str) -> str:
    """A made-up 64-hex identity."""
    return hashlib.sha256(label.encode()).hexdigest()


def save(
    store: Store,
    parent: str | None,
    label: str,
    files: dict[str, str] | None = None,
    strategy_id: str = STRATEGY,
    now: int = 1,
) -> Revision:
    files = files if files is not None else {"strategy.toml": TOML + f"# {label}\n"}
    return store.save_revision(
        strategy_id,
        parent,
        f"save {label}",
        [(p, t, sha(t)) for p, t in files.items()],
        rid(label),
        ["C000USDT.SIM"],
        "EMA cross",
        "ema_cross",
        now,
    )


def submit(
    store: Store, label: str, request: dict[str, Any] | None = None, revision: str | None = None, now: int = 10
) -> Job:
    if revision is None:
        revision = store.strategy(STRATEGY).head_revision_id
    text = json.dumps(request or {}, sort_keys=True, separators=(",", ":"))
    return store.submit(rid("job " + label), STRATEGY, revision, text, None, 1_000, 2_000, now)


def in_threads(work: Callable[[int], None], count: int) -> None:
    """``work(n)`` for n in 0..count, each on a thread of its own; every thread joined."""
    threads = [threading.Thread(target=work, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def race_saves(url: str, parent: str | None, racers: int = 6) -> list[str]:
    """``racers`` saves on ``parent`` at once, each through a store (an engine) of its own as
    separate processes have: each one's revision id, or ``moved <head>`` when it lost."""
    barrier = threading.Barrier(racers)
    outcomes: list[str] = []

    def race(n: int) -> None:
        with Store(url) as own:
            barrier.wait()
            try:
                outcomes.append(save(own, parent, f"racer {n}").revision_id)
            except HeadMoved as moved:
                outcomes.append(f"moved {moved.head_revision_id}")

    in_threads(race, racers)
    return outcomes


def one_winner(outcomes: list[str]) -> str:
    """The one save that won a race; every other lost to it."""
    winners = [o for o in outcomes if not o.startswith("moved")]
    assert len(winners) == 1, outcomes
    assert sorted(outcomes) == sorted(winners + [f"moved {winners[0]}"] * (len(outcomes) - 1))
    return winners[0]


def race_claims(url: str, workers: int = 4, log: bool = False) -> list[str]:
    """``workers`` threads claiming (each through its own store) until the queue is empty;
    the job ids taken, in order (``log``: each claim also appends a LOG event)."""
    taken: list[str] = []

    def claim(n: int) -> None:
        with Store(url) as own:
            while (job := own.claim(f"w{n}", 50)) is not None:
                taken.append(job.job_id)
                if log:
                    own.append_event(job.job_id, "LOG", None, "INFO", f"w{n}", 51)

    in_threads(claim, workers)
    return taken


def revision_document(revision: Revision) -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.strategy_revision",
        "schema_version": 2,
        "strategy_id": revision.strategy_id,
        "revision_id": revision.revision_id,
        "parent_revision_id": revision.parent_revision_id,
        "message": revision.message,
        "files": [{"path": p, "content_hash": h} for p, h in revision.files],
        "instruments": list(revision.instruments),
        "created_ts": str(revision.created_ts),
    }
