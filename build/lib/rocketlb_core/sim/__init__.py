"""A deterministic simulation of a whole RocketMQ cluster in virtual time (spec 2.6, 2.7, 4-8).

``kernel`` (clock, event queue, journal), ``events`` (one type per kind of event, named
priorities), ``services`` (what entities may ask of the world), ``scenario`` (TOML scenario
files), ``faults`` (every scriptable event: arguments, behaviour, trace row), ``cluster`` (name
servers, brokers, network), ``clients`` (producers, consumers), ``ledger`` (accounting),
``world`` (build and run), ``summary`` (the summary, from the journal and the ledger),
``golden`` (golden files per scenario). Command line: ``rocketlb simulate``.
"""
