"""``python -m rocketlb_core.replay.layout``: an alias of ``rocketlb trace layout``
(``rocketlb_core.commands.trace``)."""

from __future__ import annotations

from rocketlb_core.commands import alias

main = alias("trace", "layout")

if __name__ == "__main__":
    raise SystemExit(main())
