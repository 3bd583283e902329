"""Two revisions' benchmarks side by side in one run: every pytest-benchmark case in both
revisions' ``benches/`` and every criterion bench in both revisions' ``rust/core/benches``,
each revision built and measured from its own checkout, the runs interleaved so that a busy
host slows both alike:

    python -m benches.compare --base REV [--head REV] [--rounds N] [--filter EXPR]
                              [--no-criterion] [--no-pytest] [--json PATH]

Each revision is checked out into a temporary git worktree and its extension built there
(``cargo build --release -p spine-py``, its own target directory). pytest-benchmark files run
alternately (base, head, then head, base in the next round); a case's figure is the median of
its per-round medians. Criterion benches run alternately per bench target with a short
measurement time; a bench's figure is criterion's median estimate. The table prints head/base
per case: above 1 is slower. Cases present in one revision only are listed apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
#: Slower than this ratio is flagged (issue 34: no benchmark more than 10% slower).
LIMIT = 1.10

Found = dict[str, dict[str, list[float]]]
Measure = Callable[["Side", str, int], dict[str, float]]


class Row(NamedTuple):
    case: str
    base_s: float
    head_s: float
    ratio: float


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"compare: {' '.join(argv)} failed in {cwd} (exit {done.returncode})")


class Side:
    """One revision: its worktree, its target directory and its built extension."""

    def __init__(self, name: str, rev: str, scratch: Path) -> None:
        self.name, self.rev = name, rev
        self.tree = scratch / name
        self.target = scratch / f"{name}-target"
        _run(["git", "worktree", "add", "--detach", "--quiet", str(self.tree), rev], ROOT)

    def build(self) -> None:
        env = os.environ | {"CARGO_TARGET_DIR": str(self.target)}
        _run(["cargo", "build", "--release", "--quiet", "-p", "spine-py"], self.tree, env)
        shutil.copy(self.target / "release" / "lib_core.so", self.tree / "python" / "spine" / "_core.abi3.so")

    def bench_files(self) -> set[str]:
        return {str(p.relative_to(self.tree)) for p in (self.tree / "benches").rglob("bench_*.py")}

    def criterion_targets(self) -> set[str]:
        return {p.stem for p in (self.tree / "rust" / "core" / "benches").glob("*.rs")}

    def pytest(self, path: str, flt: str | None, out: Path) -> dict[str, float]:
        """Median seconds per case of one bench file, from pytest-benchmark's JSON."""
        argv = [sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider", "--benchmark-only"]
        argv += ["--benchmark-json", str(out), "-W", "ignore::pytest_benchmark.logger.PytestBenchmarkWarning"] + (
            ["-k", flt] if flt else []
        )
        env = os.environ | {"PYTHONPATH": str(self.tree / "python")}
        done = subprocess.run(argv, cwd=self.tree, env=env, capture_output=True, text=True)
        if done.returncode not in (0, 5):  # 5: the filter selected nothing here
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-2000:])
            raise SystemExit(f"compare: {path} failed at {self.name} (exit {done.returncode})")
        if not out.exists():
            return {}
        return {b["fullname"]: b["stats"]["median"] for b in json.loads(out.read_text())["benchmarks"]}

    def criterion(self, target: str, flt: str | None) -> dict[str, float]:
        """Median seconds per bench id of one criterion target."""
        env = os.environ | {"CARGO_TARGET_DIR": str(self.target)}
        shutil.rmtree(self.target / "criterion", ignore_errors=True)
        argv = ["cargo", "bench", "--quiet", "-p", "spine-core", "--bench", target, "--"]
        argv += ["--warm-up-time", "1", "--measurement-time", "3", "--noplot"] + ([flt] if flt else [])
        _run(argv, self.tree, env)
        figures = {}
        for estimates in (self.target / "criterion").rglob("new/estimates.json"):
            bench_id = str(estimates.parent.parent.relative_to(self.target / "criterion"))
            figures[f"{target}/{bench_id}"] = json.loads(estimates.read_text())["median"]["point_estimate"] / 1e9
        return figures

    def remove(self) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=ROOT, capture_output=True)


def _interleaved(sides: tuple[Side, Side], units: list[str], rounds: int, measure: Measure) -> Found:
    """``measure(side, unit, round)`` for each unit on both sides, one unit at a time, so that
    both sides of a unit run minutes apart at most; the side that goes first alternates."""
    found: Found = {side.name: defaultdict(list) for side in sides}
    for r in range(rounds):
        for u, unit in enumerate(units):
            for side in sides if (r + u) % 2 == 0 else sides[::-1]:
                for case, seconds in measure(side, unit, r).items():
                    found[side.name][case].append(seconds)
    return found


def _table(found: Found) -> list[Row]:
    base, head = found["base"], found["head"]
    rows = []
    for case in sorted(base.keys() & head.keys()):
        b, h = statistics.median(base[case]), statistics.median(head[case])
        rows.append(Row(case, b, h, h / b))
    return rows


def _print(title: str, rows: list[Row], found: Found) -> None:
    print(f"\n## {title}\n\n| case | base | head | head/base |\n| --- | ---: | ---: | ---: |")
    for row in rows:
        flag = " **slower**" if row.ratio > LIMIT else ""
        print(f"| {row.case} | {_fmt(row.base_s)} | {_fmt(row.head_s)} | {row.ratio:.2f}{flag} |")
    base, head = set(found["base"]), set(found["head"])
    for name, cases in (("base", base - head), ("head", head - base)):
        if cases:
            print(f"\nonly at {name}: " + ", ".join(sorted(cases)))


def _fmt(seconds: float) -> str:
    return (
        f"{seconds * 1e6:.1f} µs"
        if seconds < 1e-3
        else f"{seconds * 1e3:.2f} ms"
        if seconds < 1
        else f"{seconds:.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--filter", help="a pytest -k expression and a criterion filter")
    parser.add_argument("--no-criterion", action="store_true")
    parser.add_argument("--no-pytest", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="spine-compare-"))
    sides = (Side("base", args.base, scratch), Side("head", args.head, scratch))
    report: dict[str, object] = {"base": args.base, "head": args.head}
    try:
        for side in sides:
            side.build()
        if not args.no_pytest:
            files = sorted(sides[0].bench_files() & sides[1].bench_files())

            def pytest(side: Side, path: str, r: int) -> dict[str, float]:
                return side.pytest(path, args.filter, scratch / f"{side.name}-{r}-{Path(path).stem}.json")

            found = _interleaved(sides, files, args.rounds, pytest)
            rows = _table(found)
            _print("pytest-benchmark (median of per-round medians)", rows, found)
            report["pytest"] = [row._asdict() for row in rows]
        if not args.no_criterion:
            targets = sorted(sides[0].criterion_targets() & sides[1].criterion_targets())
            found = _interleaved(sides, targets, 1, lambda side, target, r: side.criterion(target, args.filter))
            rows = _table(found)
            _print("criterion (median estimate)", rows, found)
            report["criterion"] = [row._asdict() for row in rows]
    finally:
        for side in sides:
            side.remove()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
