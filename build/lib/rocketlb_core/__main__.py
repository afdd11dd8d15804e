"""``python -m rocketlb_core``: the ``rocketlb`` tool (``rocketlb_core.commands``)."""

from __future__ import annotations

from rocketlb_core.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
