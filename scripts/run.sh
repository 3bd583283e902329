#!/usr/bin/env bash
# Set up, then run the main job on the embedded defaults: a venue node on the simulated venue
# (SIM, real time), local Parquet catalogs under var/spine. Ctrl-C (or SIGTERM) stops it and
# flushes every closed bar to the catalogs. SPINE_SIM_SPEED=60 runs the venue 60x faster.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/spine --version
exec .venv/bin/spine node "$@"
