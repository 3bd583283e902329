#!/usr/bin/env bash
# Create .venv and install Spine into it: builds the Rust extension (maturin) and installs
# every pinned dependency plus the test extras. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "setup: a Rust toolchain (cargo) is required: https://rustup.rs" >&2; exit 1; }
PYTHON=${PYTHON:-python3}
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "setup: Python 3.11 or newer is required" >&2; exit 1; }

# wrk drives the HTTP benchmarks (benches/http). Installed when missing; without root the
# benchmark runner refuses with a clear message instead of setup failing here.
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq wrk >/dev/null
  else
    echo "setup: warning: wrk is missing and cannot be installed here (needs root and apt-get);" \
         "install it for benches/http" >&2
  fi
fi

# PostgreSQL's server binaries run the job queue's PostgreSQL tests (tests/pg.py starts a
# throwaway cluster in a temporary directory as the postgres user). Installed when missing;
# without root those tests skip, saying why.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
      || { echo "setup: installed postgresql but found no /usr/lib/postgresql/*/bin/initdb" >&2; exit 1; }
  else
    echo "setup: warning: PostgreSQL (initdb) is missing and cannot be installed here (needs root and" \
         "apt-get); the PostgreSQL queue tests will skip" >&2
  fi
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade "pip==25.3"
.venv/bin/python -m pip install --quiet ".[test]"
echo "setup: installed $(.venv/bin/python -c 'import spine; print("spine", spine.__version__)') into .venv"
