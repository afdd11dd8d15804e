#!/usr/bin/env bash
# The main job: set up, then build the web book into _build/html, executing every chapter on the
# embedded local Spark (Jupyter Book 1, execute_notebooks: cache; a rebuild re-runs only what changed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
python -m rocketlb_core.viz.assets _vendor
# Sphinx never overwrites a static file already in the output: start the HTML afresh (the
# execution cache in _build/.jupyter_cache is kept, so unchanged chapters are not re-run).
rm -rf _build/html
jupyter-book build . -W -n --keep-going
echo
echo "The book is built. Open: file://$PWD/_build/html/index.html"
echo "or serve it:             .venv/bin/python -m http.server -d _build/html --bind 127.0.0.1 8000"
