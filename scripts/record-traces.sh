#!/usr/bin/env bash
# Regenerate the shipped traces in data/traces/ by recording simulator runs (seed 0). Each trace's
# trace.json names the scenario it was recorded from. Usage: bash scripts/record-traces.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
record() {  # record TRACE-NAME SCENARIO-FILE
  echo "[record] $1 <- $2" >&2
  rocketlb simulate "$2" --seed 0 --record "data/traces/$1" > /dev/null
}
record steady-day                data/scenarios/recordings/steady-day.toml
record seed002-outage            data/scenarios/seed002-outage-fault-on.toml
record slow-broker               data/scenarios/slow-broker-fault-off.toml
record membership-day            data/scenarios/recordings/membership-day.toml
record multi-room                data/scenarios/multi-room.toml
du -sh data/traces/* >&2
