"""The viz layer: an offline, deterministic Altair renderer, chart builders and widgets.

Everything here is imported lazily and never by the algorithmic core.
"""

from rocketlb_core.viz.render import enable_charts

__all__ = ["enable_charts"]
