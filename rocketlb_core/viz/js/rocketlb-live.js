// rocketlb: the package's real core, live in the page. Pyodide (npm "pyodide", core runtime
// only) and rocketlb-core.zip (the package's pure-Python core, built from the checkout) are
// served from the book's own _static folder: no CDN, no kernel. Nothing is downloaded until a
// live figure asks for the model; then one Pyodide instance serves the whole page.
(function () {
  "use strict";
  var root = document.documentElement.dataset.content_root || "./";
  var base = new URL(root + "_static/", document.baseURI).href;
  var ready = null;
  var listeners = [];

  function say(state) {
    listeners.forEach(function (f) { try { f(state); } catch (e) { /* a listener's own */ } });
  }

  function load() {
    if (ready === null) {
      say("loading the model");
      ready = (async function () {
        const mod = await import(base + "pyodide/pyodide.mjs");
        const py = await mod.loadPyodide({ indexURL: base + "pyodide/" });
        const zip = await fetch(base + "rocketlb-core.zip");
        if (!zip.ok) { throw new Error("rocketlb-core.zip: HTTP " + zip.status); }
        py.unpackArchive(await zip.arrayBuffer(), "zip", { extractDir: "/rocketlb" });
        py.runPython("import sys\nif '/rocketlb' not in sys.path: sys.path.insert(0, '/rocketlb')");
        say("model ready");
        return py;
      })();
      ready.catch(function (err) { say("the model failed to load: " + err); });
    }
    return ready;
  }

  window.rocketlbLive = {
    base: base,
    // Start Pyodide (once per page); resolves to the Pyodide instance.
    load: load,
    // Run Python source in the page's Pyodide; resolves to the value of its last expression
    // (converted to JavaScript when it is a plain value).
    run: async function (code) {
      const py = await load();
      const value = py.runPython(code);
      return (value && value.toJs) ? value.toJs({ dict_converter: Object.fromEntries }) : value;
    },
    // Be told when the model starts loading, is ready, or failed ("loading the model" ...).
    onState: function (f) { listeners.push(f); },
    loaded: function () { return ready !== null; }
  };
})();
