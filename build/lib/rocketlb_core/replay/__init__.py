"""Replaying recorded traffic through the balancing algorithms: what would have happened with
other settings? The Python engines live here (``engines``: producers, ``consumer_engines``:
consumer groups); the Spark engines, with identical results, in ``rocketlb_core.spark``
(``producer_replay``, ``consumer_replay``)."""
