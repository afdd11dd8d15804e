// rocketlb: the package's real core, live in the page. Pyodide (npm "pyodide", core runtime
// only) and rocketlb-core.zip (the package's pure-Python core, built from the checkout) are
// served from the book's own _static folder: no CDN, no kernel. Nothing is downloaded until a
// live figure comes near the viewport or asks for the model; then one Pyodide instance serves
// the whole page.
(function () {
  "use strict";
  var root = document.documentElement.dataset.content_root || "./";
  var base = new URL(root + "_static/", document.baseURI).href;
  var ready = null;
  var listeners = [];
  var handler = null;
  var last = "idle";

  function say(state) {
    last = state;
    listeners.forEach(function (f) { try { f(state); } catch (e) { /* a listener's own */ } });
  }

  // Where the model's start goes, for the benchmark (bench/live_model.py): ms since the page's
  // navigation when each phase ended ("start" when loading began, "loader" pyodide.mjs imported,
  // "runtime" Pyodide started or restored, "core" the package's zip unpacked, "import" its
  // figures' module imported), and "snapshot": whether Pyodide was restored from the snapshot.
  var timings = {};

  function mark(phase) { timings[phase] = Math.round(performance.now()); }

  // Pyodide's memory as the build left it, the core already imported (rocketlb_core.viz.assets,
  // memory_snapshot): gzipped on disk; a server that already inflated it sends it plain.
  async function snapshot() {
    const r = await fetch(base + "pyodide/rocketlb-snapshot.bin.gz");
    if (!r.ok) { throw new Error("rocketlb-snapshot.bin.gz: HTTP " + r.status); }
    const bytes = new Uint8Array(await r.arrayBuffer());
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b || !("DecompressionStream" in window)) {
      return bytes;
    }
    const plain = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(plain).arrayBuffer());
  }

  // The snapshot saves about 1.3 s of a 2-core machine's work for 6.8 MB more to download, a
  // loss on a slow link: a reader whose browser asks to save data, or reports a 2G or 3G
  // connection (navigator.connection, where the browser has it), starts Pyodide plainly.
  function slowLink() {
    var c = navigator.connection;
    return Boolean(c && (c.saveData || /^(slow-2g|2g|3g)$/.test(c.effectiveType || "")));
  }

  // Restore the snapshot; without one (a slow link, missing, or refused by this browser), a
  // plain start.
  async function startPyodide(mod) {
    const indexURL = base + "pyodide/";
    if (slowLink()) {
      timings.snapshot = false;
      timings.snapshotError = "skipped: a slow or data-saving connection";
      return mod.loadPyodide({ indexURL: indexURL });
    }
    const bytes = snapshot();
    bytes.catch(function () { /* answered below, by the plain start */ });
    try {
      const py = await mod.loadPyodide({ indexURL: indexURL, _loadSnapshot: bytes });
      timings.snapshot = true;
      return py;
    } catch (err) {
      timings.snapshot = false;
      timings.snapshotError = String(err);
      return mod.loadPyodide({ indexURL: indexURL });
    }
  }

  function load() {
    if (ready === null) {
      say("loading the model");
      ready = (async function () {
        mark("start");
        // The core zip's fetch runs while Pyodide starts.
        const zip = fetch(base + "rocketlb-core.zip").then(function (r) {
          if (!r.ok) { throw new Error("rocketlb-core.zip: HTTP " + r.status); }
          return r.arrayBuffer();
        });
        zip.catch(function () { /* thrown where it is awaited, below */ });
        const mod = await import(base + "pyodide/pyodide.mjs");
        mark("loader");
        const py = await startPyodide(mod);
        mark("runtime");
        py.unpackArchive(await zip, "zip", { extractDir: "/rocketlb" });
        py.runPython("import sys\nif '/rocketlb' not in sys.path: sys.path.insert(0, '/rocketlb')");
        mark("core");
        // The figures' entry point, imported now rather than at the reader's first click.
        handler = py.pyimport("rocketlb_core.interactive").handle_json;
        mark("import");
        say("model ready");
        return py;
      })();
      ready.catch(function (err) { say("the model failed to load: " + err); });
    }
    return ready;
  }

  window.rocketlbLive = {
    base: base,
    timings: timings,
    // Start Pyodide (once per page); resolves to the Pyodide instance.
    load: load,
    // Run Python source in the page's Pyodide; resolves to the value of its last expression
    // (converted to JavaScript when it is a plain value).
    run: async function (code) {
      const py = await load();
      const value = py.runPython(code);
      return (value && value.toJs) ? value.toJs({ dict_converter: Object.fromEntries }) : value;
    },
    // Ask a live figure's question (rocketlb_core.interactive.handle_json): the figure's kind,
    // its session name and the request as JSON text; resolves to the answer as JSON text.
    call: async function (kind, session, request) {
      await load();                 // which imports the figures' module (handler)
      return handler(kind, session, request);
    },
    // Be told when the model starts loading, is ready, or failed ("loading the model" ...).
    onState: function (f) { listeners.push(f); },
    // The latest state ("idle" before anything asked for the model).
    state: function () { return last; },
    loaded: function () { return ready !== null; },
    // Run a code cell's source in this page's namespace (rocketlb_core.interactive.cells.run):
    // resolves to {stdout, result, error}.
    runCell: async function (code) {
      const py = await load();
      if (!runner) { runner = py.pyimport("rocketlb_core.interactive.cells").run; }
      const out = runner(location.pathname, code);
      const value = out.toJs({ dict_converter: Object.fromEntries });
      out.destroy();
      return value;
    }
  };

  // "Run in the browser" on the cells tagged rocketlb-browser (rocketlb_core.notebooks), and a
  // plain note on the cells that need a kernel. Running a cell first runs the page's earlier
  // browser cells that have not run yet, in order, as a kernel would have.
  var KERNEL_NOTE = {
    "tag_rocketlb-kernel-spark": "This cell needs Spark, so a Python kernel: open the chapter in " +
      "JupyterLab (see How to read this book).",
    "tag_rocketlb-kernel": "This cell needs a Python kernel (pandas, charts or the data files): " +
      "open the chapter in JupyterLab to run it."
  };
  var runner = null;

  function source(cell) {
    var edit = cell.querySelector("textarea.rlb-cell-edit");
    if (edit) { return edit.value; }
    var pre = cell.querySelector(".cell_input pre");
    return pre ? pre.textContent : "";
  }

  function output(cell) {
    var box = cell.querySelector(".rlb-cell-output");
    if (!box) {
      box = document.createElement("pre");
      box.className = "rlb-cell-output";
      box.setAttribute("data-rlb", "cell-output");
      box.setAttribute("role", "status");           // announced when a run ends
      box.setAttribute("aria-live", "polite");
      cell.querySelector(".rlb-cell-bar").after(box);
    }
    return box;
  }

  async function runOne(cell) {
    var box = output(cell);
    box.textContent = "running…";
    var r = await window.rocketlbLive.runCell(source(cell));
    var text = (r.stdout || "") + (r.result !== null && r.result !== undefined ? r.result + "\n" : "");
    if (r.error) { text += r.error + "\n"; }
    box.textContent = text || "(no output)";
    box.classList.toggle("rlb-cell-error", Boolean(r.error));
    cell.setAttribute("data-rlb-ran", r.error ? "error" : "ok");
    return r;
  }

  async function runUpTo(cell) {
    var cells = Array.prototype.slice.call(document.querySelectorAll("div.cell.tag_rocketlb-browser"));
    for (var i = 0; i < cells.length; i++) {
      if (cells[i] === cell) { break; }
      if (!cells[i].hasAttribute("data-rlb-ran")) { await runOne(cells[i]); }
    }
    return runOne(cell);
  }

  function decorate() {
    document.querySelectorAll("div.cell.tag_rocketlb-browser").forEach(function (cell) {
      if (cell.querySelector(".rlb-cell-bar")) { return; }
      var bar = document.createElement("div");
      bar.className = "rlb-cell-bar";
      var run = document.createElement("button");
      run.textContent = "▶ run in the browser";
      run.setAttribute("data-rlb", "run-cell");
      run.addEventListener("click", function () {
        run.disabled = true;
        runUpTo(cell).finally(function () { run.disabled = false; });
      });
      var edit = document.createElement("button");
      edit.textContent = "edit";
      edit.setAttribute("data-rlb", "edit-cell");
      edit.addEventListener("click", function () {
        if (cell.querySelector("textarea.rlb-cell-edit")) { return; }
        var area = document.createElement("textarea");
        area.className = "rlb-cell-edit";
        area.setAttribute("aria-label", "the cell's code, to edit");
        area.spellcheck = false;
        area.value = source(cell);
        area.rows = Math.min(30, area.value.split("\n").length + 1);
        bar.before(area);
      });
      var state = document.createElement("span");
      state.className = "rlb-cell-state";
      bar.appendChild(run);
      bar.appendChild(edit);
      bar.appendChild(state);
      window.rocketlbLive.onState(function (s) { state.textContent = s === "model ready" ? "" : s; });
      var input = cell.querySelector(".cell_input");
      (input || cell.firstChild).after(bar);
    });
    Object.keys(KERNEL_NOTE).forEach(function (cls) {
      document.querySelectorAll("div.cell." + cls).forEach(function (cell) {
        if (cell.querySelector(".rlb-cell-note")) { return; }
        var note = document.createElement("div");
        note.className = "rlb-cell-note";
        note.setAttribute("data-rlb", "kernel-note");
        note.textContent = KERNEL_NOTE[cls];
        var input = cell.querySelector(".cell_input");
        (input || cell.firstChild).after(note);
      });
    });
  }

  // Ready when the reader is: the model starts loading as soon as a live figure (or a cell that
  // runs in the browser) comes within PRELOAD_MARGIN of the viewport, so a reader who reads a
  // few seconds before clicking gets the answer at once. A page without such a figure never
  // loads it; nor does a page whose figures the reader never scrolls toward. A page may opt
  // out (window.rocketlbLivePreload = false before this script: the benchmark's cold click).
  var PRELOAD_MARGIN = "800px 0px";

  function liveModels() {
    // The widget models whose drawing asks the model (rlbAsker), and every container holding
    // one: a figure's view may be a box around it.
    var state = {};
    document.querySelectorAll('script[type="application/vnd.jupyter.widget-state+json"]')
      .forEach(function (s) {
        try { Object.assign(state, JSON.parse(s.textContent).state || {}); } catch (e) { /* none */ }
      });
    var memo = {};
    function live(id, depth) {
      if (memo[id] !== undefined) { return memo[id]; }
      var m = state[id];
      var st = (m && m.state) || {};
      var yes = String(st._esm || "").indexOf("rlbAsker") >= 0;
      if (!yes && depth < 20) {
        yes = (st.children || []).some(function (c) {
          return live(String(c).replace(/^IPY_MODEL_/, ""), depth + 1);
        });
      }
      memo[id] = yes;
      return yes;
    }
    return live;
  }

  function preloadTargets() {
    var live = liveModels();
    var targets = [];
    document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')
      .forEach(function (s) {
        try {
          if (live(JSON.parse(s.textContent).model_id, 0)) { targets.push(s.parentElement); }
        } catch (e) { /* not a view */ }
      });
    document.querySelectorAll("div.cell.tag_rocketlb-browser").forEach(function (c) {
      targets.push(c);
    });
    return targets;
  }

  // Starting Pyodide keeps the main thread busy for a while; anywidget gives each model 2 s to
  // initialise. So the preload waits for the page's load event and its widgets to be drawn
  // (at most 15 s), then for an idle moment.
  function whenDrawn(go) {
    var waited = 0;
    function drawn() {
      return Array.prototype.every.call(document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]'), function (s) {
        return s.parentElement.querySelector(".widget-subarea .lm-Widget");
      });
    }
    function poll() {
      if (drawn() || waited >= 15000) {
        (window.requestIdleCallback || setTimeout)(go, { timeout: 1000 });
      } else {
        waited += 250;
        setTimeout(poll, 250);
      }
    }
    if (document.readyState === "complete") { poll(); } else {
      window.addEventListener("load", poll);
    }
  }

  function watchFigures() {
    if (window.rocketlbLivePreload === false || !("IntersectionObserver" in window)) { return; }
    var targets = preloadTargets();
    if (!targets.length) { return; }
    var seen = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) {
        seen.disconnect();
        whenDrawn(function () {
          if (ready === null) { window.rocketlbLive.preloaded = true; }
          load();
        });
      }
    }, { rootMargin: PRELOAD_MARGIN });
    targets.forEach(function (t) { seen.observe(t); });
  }

  function start() {
    decorate();
    watchFigures();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
