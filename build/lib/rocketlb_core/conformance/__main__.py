"""``python -m rocketlb_core.conformance``: an alias of ``rocketlb conformance``
(``rocketlb_core.commands.conformance``)."""

from __future__ import annotations

from rocketlb_core.commands import alias

main = alias("conformance")

if __name__ == "__main__":
    raise SystemExit(main())
