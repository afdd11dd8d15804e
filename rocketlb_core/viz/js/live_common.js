// rocketlb live figures: what every live widget shares (prepended to each widget's module).
// The answers come from rocketlb_core.interactive, in the kernel when the notebook has one,
// else in the page's Pyodide (rocketlb-live.js). This code asks and draws; it computes nothing.
let rlbSessions = 0;

function rlbEl(tag, attrs, text) {
  const node = document.createElement(tag);
  Object.entries(attrs || {}).forEach(function ([k, v]) {
    if (k === "class") { node.className = v; } else { node.setAttribute(k, v); }
  });
  if (text !== undefined && text !== null) { node.textContent = String(text); }
  return node;
}

// Text that may break after "+", "_" or "(" (a cell "c1+c2+c3", a name
// "CONSISTENT_HASH_BOUNDED(0.25)"), so a wide grid fits the column (issue 50, item 6) and
// nobody scrolls sideways; the node's textContent is the text unchanged.
function rlbBreakable(node, text) {
  node.replaceChildren();
  String(text).split(/(?<=[+_(])/).forEach(function (part, i) {
    if (i) { node.appendChild(document.createElement("wbr")); }
    node.appendChild(document.createTextNode(part));
  });
  return node;
}

// A box that scrolls sideways inside the column: a keyboard can reach it (tabindex 0) and a
// screen reader names it (axe: scrollable-region-focusable).
function rlbScroll(label, attrs) {
  return rlbEl("div", Object.assign({ "class": "rlb-scroll", tabindex: "0", role: "region",
    "aria-label": label }, attrs || {}));
}

function rlbKernel(model) {
  try {
    const wm = model.widget_manager;
    return Boolean(wm && wm.kernel);
  } catch (e) {
    return false;
  }
}

// One asker per rendered figure: serialises its questions (answers keep their order), primes
// a new session with the request that produced the stored view, and shows where answers come
// from. root gets data-rlb-busy="1" while a question is out and data-rlb-answers counts them.
function rlbAsker(model, kind, root) {
  const session = kind + "-" + (++rlbSessions) + "-" + Math.random().toString(36).slice(2, 8);
  const pending = new Map();
  let next = 0;
  let primed = false;
  let chain = Promise.resolve();
  let answers = 0;
  let outstanding = 0;
  const status = rlbEl("div", { "class": "rlb-status", "data-rlb": "status" });
  // What a screen reader announces after each answer (each figure says what changed).
  const live = rlbEl("div", { "class": "rlb-sr-only", role: "status", "aria-live": "polite",
    "data-rlb": "announce" });
  const kernel = rlbKernel(model);
  status.textContent = kernel ? "live: the kernel computes" :
    "live: computed in your browser by rocketlb_core (loads on first use)";
  root.setAttribute("data-rlb-busy", "0");
  root.setAttribute("data-rlb-answers", "0");
  model.on("msg:custom", function (msg) {
    if (msg && msg.rlb_reply !== undefined && pending.has(msg.rlb_reply)) {
      const resolve = pending.get(msg.rlb_reply);
      pending.delete(msg.rlb_reply);
      resolve(msg.view);
    }
  });
  if (!kernel && window.rocketlbLive) {
    window.rocketlbLive.onState(function (s) {
      status.textContent = s === "model ready" ?
        "live: computed in your browser by rocketlb_core (Pyodide)" : s;
    });
  }
  function raw(request) {
    if (kernel) {
      const id = ++next;
      return new Promise(function (resolve) {
        pending.set(id, resolve);
        model.send({ rlb_ask: id, session: session, request: request });
      });
    }
    if (!window.rocketlbLive) {
      return Promise.resolve({ error: "no kernel and no live model on this page" });
    }
    return window.rocketlbLive.call(kind, session, JSON.stringify(request))
      .then(function (text) { return JSON.parse(text); });
  }
  // Ask, then draw the answer; data-rlb-answers changes only once the answer is drawn.
  function ask(request, draw) {
    outstanding += 1;
    root.setAttribute("data-rlb-busy", "1");
    const run = chain.then(async function () {
      const first = model.get("request");
      if (!primed && first && Object.keys(first).length) {
        primed = true;
        await raw(first);
      }
      primed = true;
      const view = await raw(request);
      if (view && view.error) {
        status.textContent = "error: " + view.error;
      } else if (draw) {
        draw(view);
      }
      answers += 1;
      root.setAttribute("data-rlb-answers", String(answers));
      return view;
    });
    chain = run.catch(function (err) {
      status.textContent = "the model failed: " + err;
    }).then(function () {
      outstanding -= 1;
      root.setAttribute("data-rlb-busy", outstanding > 0 ? "1" : "0");
    });
    return run;
  }
  function announce(text) { live.textContent = text; }
  return { ask: ask, status: status, live: live, announce: announce };
}

const RLB_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2",
  "#edc948", "#ff9da7", "#9c755f", "#bab0ac"];
// The text colour to write on each of RLB_COLORS: whichever of white and near-black contrasts
// more (WCAG ratio; white only on the blue). The dark-mode browser test holds text to 3:1.
const RLB_INK = ["#ffffff", "#1b1b1b", "#1b1b1b", "#1b1b1b", "#1b1b1b", "#1b1b1b",
  "#1b1b1b", "#1b1b1b", "#1b1b1b", "#1b1b1b"];
