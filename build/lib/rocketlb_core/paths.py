"""Where the repository's data lives, wherever the code runs from (a notebook, a test, Spark)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_DATA = "ROCKETLB_DATA"


def data_root() -> Path:
    """``$ROCKETLB_DATA`` if set, else the ``data/`` folder of this checkout."""
    env = os.environ.get(ENV_DATA)
    root = Path(env) if env else Path(__file__).resolve().parent.parent / "data"
    if not root.is_dir():
        raise FileNotFoundError(f"data folder {root} not found (set {ENV_DATA} to point at it)")
    return root


def data_path(*parts: str) -> Path:
    """A path inside the data folder, e.g. ``data_path("traces/cluster-overview")``."""
    path = data_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found in the data folder")
    return path
