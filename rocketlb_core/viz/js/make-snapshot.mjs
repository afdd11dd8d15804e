// rocketlb: make the live model's memory snapshot at build time (rocketlb_core.viz.assets).
// Node starts the book's own Pyodide, unpacks the core's zip, imports the figures' module
// (rocketlb_core.interactive) and writes Pyodide's memory as it then stands; the page restores
// it (rocketlb-live.js) instead of starting Python and importing the package again.
// Usage: node make-snapshot.mjs PYODIDE_DIR CORE_ZIP OUT
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";

const [dir, zip, out] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(resolve(dir), "pyodide.mjs")).href);
const py = await loadPyodide({
  indexURL: resolve(dir) + "/", _makeSnapshot: true, env: { PYTHONHASHSEED: "0" }
});
py.unpackArchive(new Uint8Array(readFileSync(zip)), "zip", { extractDir: "/rocketlb" });
py.runPython("import sys\nif '/rocketlb' not in sys.path: sys.path.insert(0, '/rocketlb')\n" +
             "import rocketlb_core.interactive");
writeFileSync(out, py.makeMemorySnapshot());
