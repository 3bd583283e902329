#!/usr/bin/env bash
# Set up, then run the main job on the embedded defaults. For now that is the library itself:
# versions, the schema-set digest, and a canonical-JSON identity. (The venue node arrives with
# the node issue and will become the main job here.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/spine --version
echo '{"b": [1, "é/☃"], "a": {"z": null, "y": true}}' | .venv/bin/spine canonical --identity config_hash
