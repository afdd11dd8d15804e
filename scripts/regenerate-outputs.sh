#!/usr/bin/env bash
# Regenerate the stored outputs of the chapters (what nbval compares), deterministically: the same
# environment as CI (scripts/env.sh: TZ=UTC, PYTHONHASHSEED=0, static Vega), fixed seeds in the
# chapters, no timing metadata. Never save outputs from an interactive session instead.
# Usage: bash scripts/regenerate-outputs.sh [notebooks/NN-name.ipynb ...]   (default: all chapters)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
if [ "$#" -eq 0 ]; then set -- notebooks/*.ipynb; fi
for nb in "$@"; do
  echo "[outputs] $nb" >&2
  python -m rocketlb_core.notebooks execute "$nb"
done
