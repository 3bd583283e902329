"""Determinism across processes: the same run in two separate Python processes (each a fresh
interpreter, as a worker's child is) gives the same run_id, the same result_hash and the same
documents, byte for byte (the report's ts_finished and the status documents' wall-clock
times aside)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import hashlib, json, sys
sys.path[:0] = [{tests!r}, {support!r}]
from pathlib import Path
from backtest_support import ema_plan, run_spec
from spine.backtest import run_backtest
plan = ema_plan(7, 25, "LONG_SHORT", "5m", stop_loss="0.005")
out = run_backtest(plan, run_spec(plan), [Path({catalog!r})], cancelled=lambda: False, log=lambda l, m: None)
digest = hashlib.sha256()
PARTS = ("statistics", "equity", "equity_daily", "orders", "fills", "positions", "signals", "markers", "retirements")
for part in PARTS + ("skipped",):
    value = getattr(out, part)
    for document in ([value] if isinstance(value, bytes) else value):
        digest.update(document)
report = json.loads(out.report); report.pop("ts_finished")
print(json.dumps({{"run_id": out.run_id, "result_hash": out.result_hash, "digest": digest.hexdigest(),
                  "report": report, "orders": len(out.orders)}}))
"""


def test_two_processes_give_the_same_result_hash(tmp_path: Path) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "unit" / "backtest")]
    try:
        from backtest_support import node_catalog
    finally:
        del sys.path[:2]
    catalog = node_catalog(tmp_path, bars=6000, skip=(500, 501))
    code = CHILD.format(
        tests=str(ROOT / "tests"), support=str(ROOT / "tests" / "unit" / "backtest"), catalog=str(catalog)
    )
    env = dict(os.environ)  # the installed package
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path
        )
        for _ in range(2)
    ]
    answers = []
    for child in children:
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err.decode()[-2000:]
        answers.append(json.loads(out.decode().strip().splitlines()[-1]))
    first, second = answers
    assert first["orders"] > 10
    assert first == second
