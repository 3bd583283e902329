"""Print median times and throughput ratios from a pytest-benchmark JSON file.

    pytest benches --benchmark-json=/tmp/bench.json && python -m benches.ratios /tmp/bench.json

For each group, every rival's median is divided by Spine's: a ratio of 2.0 means Spine does
the same work in half the time (twice the throughput).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def ratios(report: dict) -> list[str]:
    groups: dict[str, dict[str, float]] = defaultdict(dict)
    for bench in report["benchmarks"]:
        label = bench["params"].get("path_name") or bench["params"].get("rival") or bench["name"]
        groups[bench["group"] or bench["name"]][label] = bench["stats"]["median"]
    lines = []
    for group, medians in sorted(groups.items()):
        spine = medians.get("spine")
        lines.append(f"{group}:")
        for label, median in sorted(medians.items(), key=lambda kv: kv[1]):
            ratio = f"  x{median / spine:.2f} vs spine" if spine and label != "spine" else ""
            lines.append(f"  {label:<24} median {median * 1e6:10.2f} us{ratio}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(ratios(json.loads(Path(argv[1]).read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
