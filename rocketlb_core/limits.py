"""The bounds every input is held to, in one place (documented in ``data/README.md`` and
``data/scenarios/README.md``).

Beyond them an input is refused with a clear error naming the file, the row and the field,
before any work starts: no input can make a command run for hours, hang on a device file, or
grow memory without limit. Each bound is far above what a real RocketMQ cluster produces (a topic
name is at most 127 characters upstream; a day of traffic spans 86,400,000 ms).
"""

from __future__ import annotations

DAY_MS = 86_400_000

# ---------------------------------------------------------------- traces
MAX_TIME_MS = 31 * DAY_MS          # every time in a trace: 0 <= t <= 31 days from its start
MAX_NAME_CHARS = 255               # names: topic, broker, producer, client, group, member, room...
MAX_TEXT_CHARS = 65_536            # free text in trace.json (description, provenance)
MAX_META_BYTES = 1 << 20           # trace.json
MAX_CSV_BYTES = 16 << 20           # brokers.csv, route.csv
MAX_CSV_ROWS = 100_000             # rows of brokers.csv and of route.csv
MAX_QUEUES = 1_024                 # read_queue_nums, write_queue_nums per topic and broker
MAX_CONDITION_ROWS = 1_000_000     # conditions.parquet
MAX_MEMBERSHIP_ROWS = 1_000_000    # membership.parquet
MAX_LATENCY_MS = 3_600_000.0       # median_ms and p99_ms of a latency row (finite, > 0)
MAX_LATENCY_PAIRS = 256            # distinct (median_ms, p99_ms) pairs: the replay builds a
                                   # 2^16-entry table for each (512 KiB), shipped to every task
MAX_CONSUME_RATE = 10_000_000.0    # a group's consume_rate_per_s in trace.json
MAX_LAG_ROWS = 100_000             # the consumer replay's lag.parquet rows per strategy (queues
                                   # x samples): samples are every 10 s, or every multiple of
                                   # 10 s that keeps a long trace within this (replay.lag)

# ---------------------------------------------------------------- scenarios
MAX_SCENARIO_BYTES = 4 << 20
MAX_DURATION_MS = 31 * DAY_MS      # duration_ms, drain_ms, at_ms, start_ms, stop_ms
MAX_SIM_MESSAGES = 1_000_000_000   # sum of producers' rate x sending time: memory is flat in
                                   # messages (sim.ledger), time is not (60-100 k a wall second)
MAX_SIM_TICKS = 100_000_000        # (duration_ms / tick_ms) x producers
MAX_SIM_TIMER_FIRINGS = 5_000_000  # periodic work over duration_ms + drain_ms, whatever happens:
                                   # send ticks, route polls, pulls (500 ms), commits,
                                   # rebalances, heartbeats, server scans, lag samples (5 s);
                                   # a firing counted once per queue it may visit
                                   # (sim.scenario.timer_firings). Timers fire whether or not
                                   # anything happens (an idle tick ~8 us here): about a minute
                                   # at the bound; the largest shipped scenario is 187 k
MAX_BROKERS = 256
MAX_TOPICS = 64
MAX_PRODUCERS = 1_024
MAX_GROUPS = 64
MAX_MEMBERS = 1_024                # per group
MAX_EVENTS = 100_000
MAX_NAME_SERVERS = 16
MAX_RATE_PER_S = 1_000_000.0       # a producer's rate, a group's consume rate

# ---------------------------------------------------------------- live figures' requests
# (interactive.handle: one request from a reader's page must answer in about a second; the
# shipped scenarios the explorer runs fire at most 39 k timers and send at most 30 k messages)
MAX_REQUEST_BYTES = MAX_SCENARIO_BYTES + 65_536   # a request's JSON text (it may carry a TOML)
MAX_REQUEST_TIMER_FIRINGS = 200_000               # sim.scenario.timer_firings of one request's run
MAX_REQUEST_MESSAGES = 200_000                    # messages one request's run may send

# ---------------------------------------------------------------- conformance files
MAX_VECTOR_BYTES = 512 << 20       # a conformance file, after gunzip
# the values inside a record (conformance.bounds), each far above any vector upstream's classes
# answered: the largest shipped Kafka case has a few hundred partitions, gRPC cases 5 attempts
MAX_VECTOR_STRING_CHARS = 65_536   # any string: a name, a key, a message group
MAX_VECTOR_PARTITIONS = 1_000_000  # Kafka: the partitions of all a case's topics
MAX_VECTOR_MEMBERS = 100_000       # Kafka: a case's members
MAX_VECTOR_ATTEMPTS = 1_000        # gRPC: a send loop's max_attempts, a take's count
MAX_VECTOR_VIRTUAL_NODES = 10_000  # allocation: a consistent hash's virtual nodes per consumer
MAX_VECTOR_RING = 1_000_000        # allocation: consumers x virtual nodes on the hash ring

# ---------------------------------------------------------------- what a real cluster writes
# (rocketlb trace import: message-trace dumps, client and broker logs; data/README.md)
MAX_IMPORT_BYTES = 1 << 30         # one dump or log as read, after gunzip (a bomb stops here)
MAX_IMPORT_LINES = 20_000_000      # lines of one dump or log (a real 1 GiB client log: ~5 M)
MAX_LINE_BYTES = 8 << 20           # one line (a trace batch is at most 128 KB upstream)
MAX_EPOCH_MS = 4_102_444_800_000   # a time in a record: 1970-01-01 to 2100-01-01 (epoch ms)
MAX_RECORDING_BYTES = 1 << 20      # a recording's recording.json

# ---------------------------------------------------------------- the book's generated pages
MAX_PAGE_BYTES = 1 << 20           # a file python -m rocketlb_core.docs_cli reads where a page
#                                    of book/guide belongs (the largest page: about 45 KB)
