"""The cells of a chapter that changed between two commits, for a reviewer of a fix.

Usage: ``python book/reviews/briefs/mddiff.py NOTEBOOK [BASE] [HEAD]`` (BASE defaults to
``HEAD~1``, HEAD to the working tree): a unified diff of the markdown and code cells' text.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys


def cells(text: str) -> list[str]:
    return [f"### {c['cell_type']} cell\n{''.join(c['source'])}\n"
            for c in json.loads(text)["cells"]]


def show(rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def main(argv: list[str]) -> int:
    path = argv[0]
    base = argv[1] if len(argv) > 1 else "HEAD~1"
    old = cells(show(base, path))
    with open(path, encoding="utf-8") as fh:
        new = cells(show(argv[2], path) if len(argv) > 2 else fh.read())
    for line in difflib.unified_diff("".join(old).splitlines(), "".join(new).splitlines(),
                                     "before", "after", lineterm="", n=2):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
