"""A deterministic simulation of a whole RocketMQ cluster in virtual time (spec 2.6, 2.7, 4-8).

``kernel`` (events, clock, journal), ``scenario`` (TOML scenario files), ``cluster`` (name
servers, brokers, network), ``clients`` (producers, consumers), ``ledger`` (accounting) and
``world`` (build, run, summarise, check). Command line: ``python -m rocketlb_core.simulate``.
"""
