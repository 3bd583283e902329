#!/usr/bin/env bash
# Create .venv and install Spine into it: builds the Rust extension (maturin) and installs its
# pinned dependencies. Safe to re-run.
#   bash scripts/setup.sh          what running Spine needs (scripts/run.sh)
#   bash scripts/setup.sh --test   also the test and benchmark extras, and the system packages
#                                  the tests use (wrk, PostgreSQL, chromium) when root can install
#                                  them (scripts/test.sh, CI)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}
case "$mode" in
  run|--test) ;;
  *) echo "setup: unknown argument '$mode'; allowed: --test" >&2; exit 2 ;;
esac

command -v cargo >/dev/null || { echo "setup: a Rust toolchain (cargo) is required: https://rustup.rs" >&2; exit 1; }
PYTHON=${PYTHON:-python3}
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "setup: Python 3.11 or newer is required" >&2; exit 1; }

# Runs "$@" quietly, saying every 15 s that it still works (pip and the Rust build are silent
# for minutes on a first run); its output is shown only when it fails.
progress() {
  local what=$1; shift
  local log started=$SECONDS next=$((SECONDS + 15))
  log=$(mktemp)
  echo "setup: $what ..."
  "$@" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( SECONDS >= next )) && kill -0 "$pid" 2>/dev/null; then
      echo "setup: $what: still working ($((SECONDS - started)) s)"
      next=$((next + 15))
    fi
  done
  if ! wait "$pid"; then
    cat "$log" >&2; rm -f "$log"
    echo "setup: $what failed" >&2
    return 1
  fi
  rm -f "$log"
  echo "setup: $what: done in $((SECONDS - started)) s"
}

apt_install() {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ "$mode" = --test ]; then
  # wrk drives the HTTP benchmarks (benches/http). Installed when missing; without root the
  # benchmark runner refuses with a clear message instead of setup failing here.
  if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
      progress "installing wrk (apt)" apt_install wrk
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
      progress "installing the PostgreSQL server (apt)" apt_install postgresql
      ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
        || { echo "setup: installed postgresql but found no /usr/lib/postgresql/*/bin/initdb" >&2; exit 1; }
    else
      echo "setup: warning: PostgreSQL (initdb) is missing and cannot be installed here (needs root and" \
           "apt-get); the PostgreSQL queue tests will skip" >&2
    fi
  fi
  # Debian's chromium runs the web UI's browser tests (playwright drives it; it downloads no
  # browser). Installed when missing; without root those tests skip, saying why.
  if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
      progress "installing chromium (apt)" apt_install chromium
    else
      echo "setup: warning: chromium is missing and cannot be installed here (needs root and apt-get);" \
           "the browser tests will skip" >&2
    fi
  fi
fi

[ -x .venv/bin/python ] || progress "creating .venv" "$PYTHON" -m venv .venv
progress "upgrading pip" .venv/bin/python -m pip install --quiet --upgrade "pip==25.3"
echo "setup: pip builds Spine's Rust extension (release): minutes on a first run"
if [ "$mode" = --test ]; then
  progress "installing Spine and its test extras" .venv/bin/python -m pip install --quiet ".[test]"
else
  progress "installing Spine" .venv/bin/python -m pip install --quiet .
fi
echo "setup: installed $(.venv/bin/python -c 'import spine; print("spine", spine.__version__)') into .venv"
