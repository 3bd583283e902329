#!/usr/bin/env bash
# Set up, then run every check and test: what CI runs (.ci/run calls this script).
#   SPINE_HYPOTHESIS_PROFILE=thorough bash scripts/test.sh   # more property examples
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
export SPINE_HYPOTHESIS_PROFILE=${SPINE_HYPOTHESIS_PROFILE:-ci}

step() { printf '\n== %s\n' "$*"; }

step "rust: format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "rust: tests (spine-core needs no Python)"
cargo test -p spine-core --quiet

step "rust: criterion benches, smoke mode (each bench once, no timing claims)"
cargo bench -p spine-core --quiet --profile smoke -- --test

step "wheel: maturin build --release installs into a clean venv and imports"
wheel_dir=$(mktemp -d)
.venv/bin/maturin build --release --quiet --out "$wheel_dir/dist"
python3 -m venv "$wheel_dir/venv"
"$wheel_dir/venv/bin/pip" install --quiet "$wheel_dir"/dist/*.whl
"$wheel_dir/venv/bin/python" -c 'import spine; assert spine.canonical_json({"a": 1}) == b"{\"a\":1}"'
"$wheel_dir/venv/bin/spine" --version
rm -rf "$wheel_dir"

step "python: lints and format (ruff)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

step "python: types and the hand-written stub"
.venv/bin/python -m mypy
.venv/bin/python -m mypy.stubtest spine._core

step "python: benchmarks, smoke mode (rivals agree; each case once)"
SPINE_BENCH_INSTRUMENTS=5 SPINE_BENCH_BACKTEST_BARS=2000 SPINE_BENCH_QUEUE_BARS=500 SPINE_BENCH_RETENTION_DAYS=1 SPINE_BENCH_STUDY_TRIALS=5 SPINE_BENCH_STUDY_BARS=2000 SPINE_BENCH_CHART_ROUNDS=1 SPINE_BENCH_UI_ROUNDS=1 SPINE_BENCH_UI_SECONDS=3 \
  .venv/bin/python -m pytest benches --benchmark-disable -q

step "python: tests"
# Exit code 5 means pytest collected nothing: for this suite that is a failure, said plainly.
status=0
.venv/bin/python -m pytest -q --durations=25 || status=$?
if [ "$status" -eq 5 ]; then echo "test: pytest collected no tests" >&2; exit 1; fi
exit "$status"
