"""``python -m rocketlb_core.replay``: an alias of ``rocketlb replay``
(``rocketlb_core.commands.replay``)."""

from __future__ import annotations

from rocketlb_core.commands import alias

main = alias("replay")

if __name__ == "__main__":
    raise SystemExit(main())
