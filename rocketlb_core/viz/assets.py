"""Build-time JavaScript for the web book, taken from installed packages and ``node_modules``.

Run ``python -m rocketlb_core.viz.assets OUTDIR`` (``scripts/book.sh`` does) to fill OUTDIR
(``_vendor/``, served as ``_static/``) with:

* ``vega-bundle.js``: Vega, Vega-Lite and vega-embed from ``vl_convert`` (PyPI), wrapped in a
  function so its top-level ``const`` names do not collide with the theme's globals;
* ``require.js`` (npm ``requirejs``) and ``embed-amd.js`` plus its icon fonts, under
  ``@jupyter-widgets/html-manager/dist/`` (npm ``@jupyter-widgets/html-manager``): what renders
  ipywidgets state without a kernel;
* ``anywidget.js``: anywidget's AMD module from its own wheel, so html-manager need not fetch it;
* ``widgets-config.js`` (written here): points require.js at that local anywidget and tells
  html-manager to load its fonts from the book's static folder instead of a CDN;
* ``pyodide/`` (npm ``pyodide``, the core runtime only: ``pyodide.mjs``, ``pyodide.asm.mjs``,
  ``pyodide.asm.wasm``, ``python_stdlib.zip``, ``pyodide-lock.json``) and ``rocketlb-core.zip``
  (written here: the package's core, ``rocketlb_core.layers.core_files``, byte-identical for the
  same sources), fetched by ``rocketlb-live.js`` only when a live figure needs the model; with
  ``pyodide/rocketlb-snapshot.bin.gz`` (written here by Node, ``memory_snapshot``): Pyodide's
  memory with the core imported, which the page restores instead of starting Python;
* ``rocketlb-live.js`` (``viz/js``): the one loader of the live model (``window.rocketlbLive``),
  which also puts "run in the browser" on the chapters' core-only cells; ``rocketlb-live.css``
  styles those controls;
* ``favicon.svg`` (``viz/js``, ours): the pages' icon (``html.favicon`` in ``_config.yml``), so a
  browser asks for no ``/favicon.ico``.

Nothing here is committed: the folder is rebuilt from the pinned packages on every build.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

WIDGETS_CONFIG = """// rocketlb: widget assets come from this book's own static folder (no CDN).
(function () {
  var root = document.documentElement.dataset.content_root || "./";
  var base = new URL(root + "_static/", document.baseURI).href;
  window.__jupyter_widgets_assets_path__ = base;
  if (window.require && window.require.config) {
    // html-manager finds its icon fonts next to its own AMD module id
    // (@jupyter-widgets/html-manager/dist/embed-amd), resolved against baseUrl.
    window.require.config({ baseUrl: base, paths: { anywidget: base + "anywidget" } });
  }
})();
"""

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json")
"""Pyodide's core runtime: all the live model needs (no packages: the core is pure Python)."""
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def core_zip(path: Path) -> Path:
    """Write ``rocketlb-core.zip``: the core's sources under ``rocketlb_core/``, sorted, with a
    fixed timestamp, so the same sources give the same bytes."""
    import zipfile

    from rocketlb_core.layers import PACKAGE, core_files

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for f in core_files():
            info = zipfile.ZipInfo(f.relative_to(PACKAGE.parent).as_posix(), ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, f.read_bytes())
    return path


SNAPSHOT = "rocketlb-snapshot.bin.gz"
"""The live model's memory snapshot, beside the runtime it was made from (``memory_snapshot``)."""


def memory_snapshot(pyodide: Path, zip_path: Path, out: Path) -> Path:
    """Write Pyodide's memory after it has started and imported the figures' module, gzipped.

    Node runs ``viz/js/make-snapshot.mjs`` on the book's own Pyodide files and core zip. The
    page restores this instead of starting Python and importing the package: the restore took
    404 ms where Pyodide's start and the first import took 1,677 and 250 ms, on the 2-core
    machine (``bench/live_model.py``, 2026-11-29, files served over loopback). It costs the
    reader 6.8 MB more when a live figure loads (30 MiB of memory, gzipped), and is written
    fresh on every build (not byte-identical between builds: Python's start leaves some
    randomness in memory); ``rocketlb-live.js`` starts plainly when the snapshot is absent or
    fails to restore, and on a browser that asks to save data or reports a 2G or 3G link."""
    import gzip
    import subprocess
    import tempfile

    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("node is missing: the live model's snapshot is made with Node")
    script = Path(__file__).parent / "js" / "make-snapshot.mjs"
    with tempfile.TemporaryDirectory(prefix="rocketlb-snapshot-") as tmp:
        raw = Path(tmp) / "snapshot.bin"
        proc = subprocess.run([node, str(script), str(pyodide), str(zip_path), str(raw)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not raw.exists():
            raise RuntimeError(f"{script.name} failed ({proc.returncode}):\n"
                               f"{proc.stderr[-2000:]}")
        part = out.with_name(out.name + ".part")
        with raw.open("rb") as src, part.open("wb") as dst, \
                gzip.GzipFile(fileobj=dst, mode="wb", compresslevel=9, mtime=0) as z:
            shutil.copyfileobj(src, z, 1 << 20)
        part.replace(out)
    return out


FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".eot", ".svg")
FONT_DIR = "@jupyter-widgets/html-manager/dist"
# html-manager's CSS is evaluated before it applies ``__jupyter_widgets_assets_path__``, so its
# font URLs use webpack's automatic public path: the folder of the script running at that moment.
# That is normally embed-amd.js's folder, but on a loaded machine the browser test has seen
# ``_static/@jupyter-widgets/`` requested instead (404s). The fonts sit in every folder it may use.
FONT_DIRS = (FONT_DIR, "@jupyter-widgets", ".")


def build(out_dir: Path, node_modules: Path) -> list[Path]:
    """Write every asset into ``out_dir``; returns the files written."""
    import anywidget

    from rocketlb_core.viz.render import vega_bundle_js

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)

    put("vega-bundle.js", vega_bundle_js())
    put("widgets-config.js", WIDGETS_CONFIG)

    html_manager = node_modules / "@jupyter-widgets" / "html-manager" / "dist"
    pyodide = node_modules / "pyodide"
    sources = {
        **{f"pyodide/{name}": pyodide / name for name in PYODIDE_FILES},
        "rocketlb-live.js": Path(__file__).parent / "js" / "rocketlb-live.js",
        "rocketlb-live.css": Path(__file__).parent / "js" / "rocketlb-live.css",
        "favicon.svg": Path(__file__).parent / "js" / "favicon.svg",
        "require.js": node_modules / "requirejs" / "require.js",
        "embed-amd.js": html_manager / "embed-amd.js",
        "anywidget.js": Path(anywidget.__file__).parent / "nbextension" / "index.js",
    }
    for name, src in sources.items():
        if not src.exists():
            raise FileNotFoundError(f"{src} is missing: run scripts/setup.sh (npm ci) first")
        (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, out_dir / name)
        written.append(out_dir / name)
    written.append(core_zip(out_dir / "rocketlb-core.zip"))
    written.append(memory_snapshot(out_dir / "pyodide", out_dir / "rocketlb-core.zip",
                                   out_dir / "pyodide" / SNAPSHOT))
    for folder in FONT_DIRS:
        fonts = out_dir / folder
        fonts.mkdir(parents=True, exist_ok=True)
        for font in sorted(html_manager.iterdir()):
            if font.suffix in FONT_SUFFIXES:
                shutil.copyfile(font, fonts / font.name)
                written.append(fonts / font.name)
    return written


def build_static_book(root: Path, out: Path) -> Path:
    """Build the web book from ``root`` into ``out`` with execution off (the pages show exactly
    the chapters' stored outputs, which nbval verifies): what the browser tests and
    ``bench/live_model.py`` open. Returns the HTML folder; raises with the build's log tail."""
    import subprocess

    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["execute_notebooks"] = "off"
    out.mkdir(parents=True, exist_ok=True)
    # sort_keys=False: the order of nb_ipywidgets_js is the order the scripts load in.
    (out / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    build(root / "_vendor", root / "node_modules")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(root), "--config",
         str(out / "_config.yml"), "--path-output", str(out), "-W", "-n", "--keep-going"],
        cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("jupyter-book build failed:\n" + proc.stdout[-4000:]
                           + proc.stderr[-4000:])
    return out / "_build" / "html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--node-modules", type=Path, default=Path("node_modules"))
    args = parser.parse_args(argv)
    files = build(args.out_dir, args.node_modules)
    print(f"wrote {len(files)} files to {args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
