"""``python -m rocketlb_core.replay.generate``: an alias of ``rocketlb trace generate``
(``rocketlb_core.commands.trace``)."""

from __future__ import annotations

from rocketlb_core.commands import alias

main = alias("trace", "generate")

if __name__ == "__main__":
    raise SystemExit(main())
