// rocketlb rebalance explorer: pick a shipped scenario, run it (the simulator, in the kernel or
// in your browser), and scrub through time. Every value shown comes from
// rocketlb_core.interactive.explorer (see live_common.js).
function render({ model, el }) {
  const root = rlbEl("div", { "class": "rlb-live rlb-explorer" });
  const asker = rlbAsker(model, "explorer", root);
  const scenarios = model.get("scenarios");
  let request = JSON.parse(JSON.stringify(model.get("request")));
  let view = model.get("view");
  const controls = rlbEl("div", { "class": "rlb-controls" });
  const about = rlbEl("div", { "class": "rlb-caption", "data-rlb": "about" });
  const body = rlbEl("div", { "class": "rlb-explorer-body" });

  function ask() {
    return asker.ask(request, function (v) {
      view = v;
      draw();
      asker.announce(request.scenario + " at " + (v.t_ms / 1000).toFixed(1) + " s: unowned " +
        (v.unowned.join(", ") || "none") + "; consumed twice " + (v.shared.join(", ") || "none"));
    });
  }

  const pick = rlbEl("select", { "data-rlb": "scenario", "aria-label": "scenario" });
  Object.keys(scenarios).forEach(function (name) {
    const o = rlbEl("option", { value: name }, name);
    if (name === request.scenario) { o.selected = true; }
    pick.appendChild(o);
  });
  pick.addEventListener("change", function () {
    request = { scenario: pick.value, toml: scenarios[pick.value].toml, seed: request.seed, t_ms: 0 };
    ask();
  });
  const scrub = rlbEl("input", { type: "range", min: "0", step: "500", "data-rlb": "time",
    "class": "rlb-scrubber", "aria-label": "time in the scenario (ms)" });
  const clock = rlbEl("b", { "data-rlb": "t" });
  scrub.addEventListener("input", function () { clock.textContent = (scrub.value / 1000).toFixed(1) + " s"; });
  scrub.addEventListener("change", function () { request.t_ms = parseInt(scrub.value, 10); ask(); });
  function jump(dir) {
    const ticks = view.ticks;
    let t = request.t_ms;
    const found = dir > 0 ? ticks.find(function (x) { return x > t; }) :
      ticks.slice().reverse().find(function (x) { return x < t; });
    if (found === undefined) { return; }
    request.t_ms = found;
    ask();
  }
  const prev = rlbEl("button", { "data-rlb": "previous" }, "◀ previous change");
  prev.addEventListener("click", function () { jump(-1); });
  const next = rlbEl("button", { "data-rlb": "next" }, "next change ▶");
  next.addEventListener("click", function () { jump(1); });
  controls.append(pick, prev, scrub, next, clock);

  function table(headers, rows, key, label) {
    const t = rlbEl("table", { "class": "rlb-table", "data-rlb": key });
    const head = rlbEl("tr");
    headers.forEach(function (h) { head.appendChild(rlbEl("th", {}, h)); });
    t.appendChild(head);
    rows.forEach(function (cells) {
      const tr = rlbEl("tr");
      cells.forEach(function (c) {
        const td = rlbEl("td", c.cls ? { "class": c.cls } : {}, c.text !== undefined ? c.text : c);
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    const box = rlbScroll(label);
    box.appendChild(t);
    return box;
  }

  function draw() {
    scrub.max = String(view.end_ms);
    scrub.value = String(view.t_ms);
    clock.textContent = (view.t_ms / 1000).toFixed(1) + " s";
    about.textContent = (scenarios[request.scenario] || {}).description || "";
    const sec = function (ms) { return (ms / 1000).toFixed(1) + " s"; };
    body.replaceChildren(
      rlbEl("h4", {}, "What each broker lists for " + view.group),
      table(["broker", "consumers listed"], Object.entries(view.membership).map(function ([b, m]) {
        return [b, m.join(", ") || "nobody"]; }), "membership", "what each broker lists"),
      rlbEl("h4", {}, "What each consumer saw and holds"),
      table(["consumer", "running", "ids in its last view", "holds"], view.clients.map(function (c) {
        return [c.name, c.alive ? "yes" : { text: "no", cls: "rlb-bad" },
          c.view === null ? "-" : c.view, c.holds.join(", ") || "nothing"]; }), "clients",
        "what each consumer saw and holds"),
      rlbEl("h4", {}, "Who consumes each queue"),
      table(["queue", "consumed by", "state", "since", "until"], view.queues.map(function (q) {
        const cls = q.state === "one owner" ? "rlb-ok" : "rlb-bad";
        return [q.queue, q.owners.join(", ") || "nobody", { text: q.state, cls: cls },
          sec(q.since_ms), sec(q.until_ms)]; }), "queues", "who consumes each queue"),
      rlbEl("p", { "data-rlb": "problems" }, "unowned now: " + (view.unowned.join(", ") || "none") +
        "; consumed twice now: " + (view.shared.join(", ") || "none")),
      rlbEl("h4", {}, "The journal up to now"),
      table(["time", "what", "who", "details"], view.events.map(function (e) {
        return [sec(e.t_ms), e.kind, e.who, e.details]; }), "events", "the journal up to now"));
  }

  root.append(controls, about, asker.status, asker.live, body);
  draw();
  el.appendChild(root);
}

export default { render };
