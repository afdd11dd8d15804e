"""The simulator's producers, compiled (numba, optional): the same sends as the core simulator's
``Producer``, bit for bit, many times faster (issue 15, part 3).

``CompiledProducer`` (``producer.py``) is a drop-in ``Producer`` for ``run_scenario``'s
``producer_class``; ``mt.py`` is CPython's Mersenne Twister and ``Random.gauss``, compiled, so a
producer's draws stay those of its ``random.Random``. Without numba, ``AVAILABLE`` is false and
``producer_class()`` gives the core ``Producer``: the same bytes, slower.
"""

from __future__ import annotations

from rocketlb_core.simfast.producer import AVAILABLE, CompiledProducer, producer_class

__all__ = ["AVAILABLE", "CompiledProducer", "producer_class"]
