"""Which modules make up the core: the part of the package that imports nothing but the
standard library and so runs anywhere Python runs, the reader's browser included (Pyodide with
no numpy, pandas or pyarrow). ``ARCHITECTURE.md`` describes the layers; ``tests/test_layers.py``
enforces them; ``rocketlb_core.viz.assets`` packs exactly these files for the web book.
"""

from __future__ import annotations

from pathlib import Path

CORE = ("rocketlb_core.javamath", "rocketlb_core.model", "rocketlb_core.errors",
        "rocketlb_core.limits", "rocketlb_core.numbers", "rocketlb_core.paths",
        "rocketlb_core.conditions",
        "rocketlb_core.layers", "rocketlb_core.producer", "rocketlb_core.consumer",
        "rocketlb_core.sim", "rocketlb_core.conformance", "rocketlb_core.trace.schema",
        "rocketlb_core.trace.cluster", "rocketlb_core.interactive",
        "rocketlb_core.kafka.assignors", "rocketlb_core.kafka.conformance",
        "rocketlb_core.kafka.group", "rocketlb_core.kafka.partitioner",
        "rocketlb_core.kafka.sticky_general", "rocketlb_core.kafka.uniform_heterogeneous",
        "rocketlb_core.grpc", "rocketlb_core.goclient")
"""Modules, and packages (every module under them), that make up the core."""

PACKAGE = Path(__file__).resolve().parent


def is_core(module: str) -> bool:
    """Whether ``module`` (dotted name) is core; ``__main__`` modules are scripts, never core."""
    return not module.endswith(".__main__") and any(
        module == c or module.startswith(c + ".") for c in CORE)


def module_name(path: Path) -> str:
    """The dotted name of a file of the package (``.../producer/__init__.py`` -> the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def core_files() -> list[Path]:
    """The core's source files, with the ``__init__.py`` of every package on their way (the
    root one included), in a fixed order: what a browser needs to import the core."""
    files = {p for p in PACKAGE.rglob("*.py") if is_core(module_name(p))}
    for f in list(files):
        for parent in f.parents:
            if parent == PACKAGE.parent:
                break
            files.add(parent / "__init__.py")
    return sorted(files)
