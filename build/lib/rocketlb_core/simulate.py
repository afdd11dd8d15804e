"""``python -m rocketlb_core.simulate``: an alias of ``rocketlb simulate``
(``rocketlb_core.commands.simulate``)."""

from __future__ import annotations

from rocketlb_core.commands import alias

main = alias("simulate")

if __name__ == "__main__":
    raise SystemExit(main())
