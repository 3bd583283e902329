#!/usr/bin/env bash
# Set up, then run the main job on the embedded defaults: `spine up`, a venue node on the
# simulated venue (SIM, real time), a screener over it and the gateway in front of both
# (http://127.0.0.1:8800), data under var/spine-up. Ctrl-C (or SIGTERM) stops them all, the
# node flushing every closed bar. SPINE_SIM_SPEED=60 runs the venue 60x faster; arguments
# pass on to `spine up` (--port N, --data-dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/spine --version
exec .venv/bin/spine up "$@"
