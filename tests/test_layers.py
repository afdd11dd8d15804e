"""The package's layers, by test (ARCHITECTURE.md): no import cycles anywhere; the core
(model, Java arithmetic, producer, consumer, simulator, conformance, the pure parts of the
trace format) reaches no third-party library, at import or at call time, and runs with them
gone, as in the reader's browser; each extra of ``pyproject.toml`` runs the commands it names
with nothing else installed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rocketlb_core import data_path
from rocketlb_core.layers import PACKAGE, core_files, is_core, module_name

HEAVY = {"numpy", "pandas", "pyarrow", "pyspark", "py4j", "altair", "vl_convert", "ipywidgets",
         "anywidget", "traitlets", "IPython", "numba", "llvmlite"}
def _modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


MODULES = _modules()


def _skipped(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (annotations only) and ``if __name__ == "__main__":`` (running
    the module as a script) are not dependencies."""
    if not isinstance(node, ast.If):
        return False
    test = ast.unparse(node.test)
    return test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") or "__main__" in test


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(package modules, third-party top-level names) that ``module`` imports anywhere: at
    the top or inside a function, so call-time imports count too."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    ours, theirs = set(), set()

    def visit(node: ast.AST) -> None:
        if _skipped(node):
            return
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            if name.split(".")[0] == "rocketlb_core":
                while name not in MODULES and "." in name:
                    name = name.rpartition(".")[0]
                if name in MODULES and name != module:
                    ours.add(name)
            elif name:
                theirs.add(name.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return ours, theirs


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_core_files_are_the_core_modules_and_their_packages() -> None:
    names = {module_name(f) for f in core_files()}
    assert {m for m in MODULES if is_core(m)} <= names
    packages_only = {"rocketlb_core", "rocketlb_core.trace", "rocketlb_core.kafka"}
    assert names - {m for m in MODULES if is_core(m)} <= packages_only


def test_there_are_no_import_cycles() -> None:
    """Tarjan's strongly connected components over every import in the package."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(GRAPH[v][0]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_core_reaches_nothing_but_the_core_and_the_standard_library() -> None:
    core = [m for m in MODULES if is_core(m)]
    assert len(core) >= 30
    problems = []
    for m in core:
        ours, theirs = GRAPH[m]
        problems += [f"{m} imports {o}" for o in sorted(ours) if not is_core(o)
                     and o != "rocketlb_core"]
        outside = {t for t in theirs if t not in sys.stdlib_module_names and t != "__future__"}
        problems += [f"{m} imports {t}" for t in sorted(outside)]
    assert problems == []


BLOCKER = """
import sys
from importlib.abc import MetaPathFinder
BLOCKED = set(sys.argv[1].split(","))
class Blocker(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)",
                                      name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""

CORE_RUN = BLOCKER + """
import importlib, json
from rocketlb_core.layers import core_files, module_name
core = [module_name(f) for f in core_files()]
for n in core:
    importlib.import_module(n)
from rocketlb_core.sim.scenario import load
from rocketlb_core.sim.world import run_scenario
from rocketlb_core.consumer.registry import REGISTRY, example
from rocketlb_core.consumer.base import assign_all, rebalance_view
from rocketlb_core.model import MessageQueue
from rocketlb_core.producer import MQFaultStrategy, ProducerLine
from rocketlb_core.trace.cluster import load_cluster
summary = run_scenario(load(sys.argv[2]), 0).summary
mq_all, cid_all = rebalance_view([MessageQueue("T", f"room{b}@broker-{b}", i)
                                  for b in range(2) for i in range(4)], ["room0@a", "room1@b"])
shares = {n: sum(map(len, assign_all(example(n), "g", mq_all, cid_all).values()))
          for n in REGISTRY}
layout = load_cluster(sys.argv[3])
for line in ProducerLine:
    MQFaultStrategy(line, send_latency_fault_enable=True)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps({"modules": len(core), "sent": summary["messages_sent"], "shares": shares,
                  "brokers": len(layout.brokers), "loaded": loaded}))
"""


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, timeout=600)


def test_the_core_runs_with_every_third_party_library_gone() -> None:
    """As in Pyodide without numpy, pandas or pyarrow: import every core module, run a
    scenario, every strategy, every line's fault strategy, a trace's cluster files."""
    proc = _run(CORE_RUN, ",".join(sorted(HEAVY)),
                str(data_path("scenarios", "steady-state.toml")),
                str(data_path("traces", "seed002-outage")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["loaded"] == []
    assert out["modules"] >= 30
    assert out["sent"] > 0
    assert out["shares"]["AVG"] == 8
    assert out["brokers"] >= 2


def _extras() -> dict[str, set[str]]:
    """Each extra of pyproject.toml -> the top-level modules its requirements install (the
    ones this test knows how to block; an extra names its sub-extras as rocketlb-core[...])."""
    meta = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]
    modules = {"numpy": {"numpy"}, "pyarrow": {"pyarrow"}, "pandas": {"pandas"},
               "pyspark[connect]": {"pyspark", "py4j"}, "altair": {"altair"},
               "vl-convert-python": {"vl_convert"}, "ipywidgets": {"ipywidgets", "traitlets",
                                                                  "IPython"},
               "anywidget": {"anywidget"}, "numba": {"numba", "llvmlite"}}
    extras: dict[str, set[str]] = {"": set()}
    raw = meta["optional-dependencies"]

    def resolve(name: str) -> set[str]:
        out: set[str] = set()
        for req in raw[name]:
            base = req.split(">")[0].split("<")[0].split("=")[0].strip()
            if base.startswith("rocketlb-core["):
                out |= resolve(base[len("rocketlb-core["):-1])
            else:
                out |= modules[base]
        return out

    for name in raw:
        extras[name] = resolve(name)
    return extras


COMMAND_RUN = BLOCKER + """
from rocketlb_core.commands import main
raise SystemExit(main(sys.argv[2:]))
"""

SCENARIO = str(data_path("scenarios", "crash-without-unregister.toml"))
OUTAGE = str(data_path("traces", "seed002-outage"))
MEMBERS = str(data_path("traces", "membership-day"))
VECTOR = str(Path(__file__).parent / "vectors" / "allocation-avg.jsonl.gz")
COMMANDS = {                  # extra -> the commands pyproject.toml says it runs
    "": [["simulate", SCENARIO], ["conformance", "--quiet", VECTOR], ["compare"]],
    "replay": [["simulate", SCENARIO, "--out", "{out}/sim", "--record", "{out}/rec"],
               ["replay", "producer", "--trace", OUTAGE, "--out", "{out}/p"],
               ["replay", "consumer", "--trace", MEMBERS, "--out", "{out}/c"],
               ["trace", "validate", OUTAGE],
               ["trace", "layout", OUTAGE, "--out", "{out}/l"],
               ["trace", "generate", "--sends", "2000", "--producers", "2", "--out", "{out}/g"]],
}


@pytest.mark.parametrize(("extra", "argv"), [(e, a) for e, argvs in COMMANDS.items()
                                             for a in argvs],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
def test_each_extra_runs_its_commands_with_nothing_else(tmp_path: Path, extra: str,
                                                        argv: list[str]) -> None:
    allowed = _extras()[extra]
    blocked = HEAVY - allowed
    proc = _run(COMMAND_RUN, ",".join(sorted(blocked)),
                *[a.replace("{out}", str(tmp_path)) for a in argv])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "blocked by the test" not in proc.stderr


def test_the_base_install_says_which_extra_a_command_needs(tmp_path: Path) -> None:
    """Without the replay extra, writing Parquet is an error that names what to install, not
    a traceback."""
    proc = _run(COMMAND_RUN, ",".join(sorted(HEAVY)), "replay", "producer", "--trace", OUTAGE,
                "--out", str(tmp_path / "p"))
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "pip install 'rocketlb-core[replay]'" in proc.stderr


def test_every_folder_of_modules_is_a_regular_package() -> None:
    """setuptools' ``packages.find`` leaves namespace packages out of the wheel: a folder of
    modules without ``__init__.py`` would be missing from ``pip install rocketlb-core``."""
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    assert sorted(str(f) for f in folders if not (f / "__init__.py").is_file()) == []
