// rocketlb producer playground: controls, the send log, the fault table and a running chart.
// The client select runs the same brokers through the classic remoting producer of the line or
// the gRPC producer via the Proxy (its isolated endpoints shown in place of the fault table).
// Every number shown comes from rocketlb_core.interactive.playground (see live_common.js).
const PG_LINES = ["4.7.1", "4.9.7", "4.9.8", "5.3.3"];
const PG_ANSWERS = [["ok", "answers"], ["refuse", "down: refuses"], ["silent", "down: silent"]];
const PG_LOG_ROWS = 12;
// config.client: the classic remoting producer of the line, or the gRPC producer via the Proxy.
const PG_CLIENTS = [["remoting", "classic remoting"], ["grpc", "gRPC via the Proxy"]];

function pgCopy(x) { return JSON.parse(JSON.stringify(x)); }

function render({ model, el }) {
  const root = rlbEl("div", { "class": "rlb-live rlb-playground" });
  const asker = rlbAsker(model, "playground", root);
  let config = pgCopy(model.get("request").config);
  if (!config.client) { config.client = "remoting"; }
  let log = [];
  let view = model.get("view");

  const controls = rlbEl("div", { "class": "rlb-controls" });
  const brokersBox = rlbEl("div", { "class": "rlb-pg-brokers" });
  const summary = rlbEl("div", { "class": "rlb-summary", "data-rlb": "summary" });
  const faults = rlbScroll("the fault table");
  const chart = rlbEl("div", { "class": "rlb-chart-box", "data-rlb": "chart" });
  const logBox = rlbScroll("the last sends");

  function send(op, n, said) {
    const request = { config: config, op: op };
    if (n) { request.n = n; }
    return asker.ask(request, function (v) {
      if (op === "reset" || (op === "view" && v.sent === 0)) { log = []; }
      log = log.concat(v.log);
      view = v;
      draw();
      const last = v.log[v.log.length - 1];
      const isolated = v.client === "grpc" ? "; isolated: " +
        (v.isolated.length ? v.isolated.join(", ") : "none") : "";
      asker.announce(op === "send" && last ? (n > 1 ? n + " sends, " + v.failed + " failed so far" :
        "send " + last.n + ": " + last.status + (last.attempts.length ? " on " +
          last.attempts[last.attempts.length - 1].queue : "")) + "; counter " + v.counter +
        isolated : (said || (op === "reset" ? "reset" : "updated")) + ": counter " + v.counter +
        isolated);
    });
  }

  function field(label, input) {
    const box = rlbEl("label", { "class": "rlb-field" }, label + " ");
    box.appendChild(input);
    return box;
  }

  function drawControls() {
    controls.replaceChildren();
    const grpc = config.client === "grpc";
    const client = rlbEl("select", { "data-rlb": "client" });
    PG_CLIENTS.forEach(function ([v, label]) {
      const o = rlbEl("option", { value: v }, label);
      if (v === config.client) { o.selected = true; }
      client.appendChild(o);
    });
    client.addEventListener("change", function () {
      config.client = client.value;
      drawControls();
      send("reset", 0, "client: " + client.options[client.selectedIndex].text);
      const again = controls.querySelector('[data-rlb="client"]');
      if (again) { again.focus(); }
    });
    const line = rlbEl("select", { "data-rlb": "line" });
    PG_LINES.forEach(function (l) {
      const o = rlbEl("option", { value: l }, l);
      if (l === config.line) { o.selected = true; }
      line.appendChild(o);
    });
    line.addEventListener("change", function () { config.line = line.value; send("reset"); });
    const fault = rlbEl("input", { type: "checkbox", "data-rlb": "fault" });
    fault.checked = Boolean(config.fault);
    fault.addEventListener("change", function () { config.fault = fault.checked; send("reset"); });
    const counter = rlbEl("input", { type: "number", min: "-1", step: "1", "data-rlb": "counter",
      value: String(config.counter), "class": "rlb-num" });
    counter.addEventListener("change", function () {
      const v = parseInt(counter.value, 10);
      if (isNaN(v) || v === config.counter) { return; }
      config.counter = v; send("reset");
    });
    const retries = rlbEl("input", { type: "number", min: "0", max: "16", "data-rlb": "retries",
      value: String(config.retries), "class": "rlb-num" });
    retries.addEventListener("change", function () {
      const v = Math.max(0, Math.min(16, parseInt(retries.value, 10) || 0));
      if (v === config.retries) { return; }
      config.retries = v; send("reset");
    });
    if (grpc) { line.disabled = true; fault.disabled = true; }  // the gRPC client reads neither
    controls.appendChild(field("client", client));
    controls.appendChild(field("line", line));
    controls.appendChild(field("sendLatencyFaultEnable", fault));
    controls.appendChild(field("starting counter", counter));
    controls.appendChild(field(grpc ? "retries (maxAttempts − 1)" : "retries", retries));
    const presets = model.get("presets") || {};
    const pick = rlbEl("select", { "data-rlb": "preset", "aria-label": "set up as a preset" });
    pick.appendChild(rlbEl("option", { value: "" }, "set up as…"));
    Object.keys(presets).forEach(function (k) { pick.appendChild(rlbEl("option", { value: k }, k)); });
    pick.addEventListener("change", function () {
      if (!pick.value) { return; }
      const keep = config.client;
      config = pgCopy(presets[pick.value]);
      if (!config.client) { config.client = keep; }
      drawControls();
      send("reset");
    });
    controls.appendChild(pick);
    const buttons = rlbEl("div", { "class": "rlb-buttons" });
    [["send one", 1], ["send 100", 100]].forEach(function ([label, n]) {
      const b = rlbEl("button", { "data-rlb": "send-" + n }, label);
      b.addEventListener("click", function () { send("send", n); });
      buttons.appendChild(b);
    });
    const reset = rlbEl("button", { "data-rlb": "reset" }, "reset");
    reset.addEventListener("click", function () { send("reset"); });
    buttons.appendChild(reset);
    controls.appendChild(buttons);
    drawBrokers();
  }

  function drawBrokers() {
    brokersBox.replaceChildren();
    config.brokers.forEach(function (b, i) {
      const row = rlbEl("div", { "class": "rlb-broker-row", "data-rlb": "broker-" + b.name });
      row.appendChild(rlbEl("b", { "class": "rlb-broker-name" }, b.name));
      const queues = rlbEl("input", { type: "number", min: "1", max: "16", "class": "rlb-num",
        value: String(b.queues), "data-rlb": "queues-" + b.name });
      queues.addEventListener("change", function () {
        const v = Math.max(1, Math.min(16, parseInt(queues.value, 10) || 1));
        if (v === b.queues) { return; }
        b.queues = v; send("reset");
      });
      row.appendChild(field("queues", queues));
      const answer = rlbEl("select", { "data-rlb": "answer-" + b.name,
        "aria-label": b.name + " answers" });
      PG_ANSWERS.forEach(function ([v, label]) {
        const o = rlbEl("option", { value: v }, label);
        if (v === b.answer) { o.selected = true; }
        answer.appendChild(o);
      });
      answer.addEventListener("change", function () { b.answer = answer.value; send("view"); });
      row.appendChild(answer);
      const latency = rlbEl("input", { type: "range", min: "0", max: "5000", step: "5",
        value: String(Math.min(5000, b.latency_ms)), "data-rlb": "latency-" + b.name,
        "aria-label": b.name + " latency (ms)" });
      const shown = rlbEl("span", { "class": "rlb-ms" }, b.latency_ms + " ms");
      latency.addEventListener("input", function () { shown.textContent = latency.value + " ms"; });
      latency.addEventListener("change", function () {
        b.latency_ms = parseInt(latency.value, 10); send("view");
      });
      row.appendChild(latency);
      row.appendChild(shown);
      Object.entries(model.get("latency_presets") || {}).forEach(function ([name, ms]) {
        const p = rlbEl("button", { "class": "rlb-small", "data-rlb": name + "-" + b.name }, name);
        p.addEventListener("click", function () {
          b.answer = "ok"; b.latency_ms = ms; drawBrokers(); send("view");
        });
        row.appendChild(p);
      });
      const downButton = rlbEl("button", { "class": "rlb-small", "data-rlb": "down-" + b.name }, "down");
      downButton.addEventListener("click", function () { b.answer = "refuse"; drawBrokers(); send("view"); });
      row.appendChild(downButton);
      if (config.brokers.length > 2) {
        const rm = rlbEl("button", { "class": "rlb-small", "data-rlb": "remove-" + b.name }, "remove");
        rm.addEventListener("click", function () { config.brokers.splice(i, 1); drawBrokers(); send("reset"); });
        row.appendChild(rm);
      }
      brokersBox.appendChild(row);
    });
    if (config.brokers.length < 4) {
      const add = rlbEl("button", { "class": "rlb-small", "data-rlb": "add-broker" }, "add a broker");
      add.addEventListener("click", function () {
        const taken = config.brokers.map(function (b) { return b.name; });
        const name = ["broker-a", "broker-b", "broker-c", "broker-d"].find(function (n) {
          return taken.indexOf(n) < 0;
        });
        config.brokers.push({ name: name, queues: 4, answer: "ok", latency_ms: 5 });
        drawBrokers();
        send("reset");
      });
      brokersBox.appendChild(add);
    }
  }

  function drawSummary() {
    summary.replaceChildren();
    [["clock", (view.clock_ms / 1000).toFixed(3) + " s", "clock"],
     ["counter", view.counter, "counter-value"], ["sends", view.sent, "sent"],
     ["failed", view.failed, "failed"]].concat(view.client === "grpc" ? [["next heartbeat",
       (view.next_heartbeat_ms / 1000).toFixed(3) + " s", "next-heartbeat"]] : []
    ).forEach(function ([k, v, key]) {
      const s = rlbEl("span", { "class": "rlb-stat" }, k + ": ");
      s.appendChild(rlbEl("b", { "data-rlb": key }, v));
      summary.appendChild(s);
    });
  }

  // The classic producer's fault table; the gRPC producer keeps none: a failed attempt
  // isolates its broker's endpoints until a heartbeat to them is answered.
  function drawFaults() {
    const grpc = view.client === "grpc";
    const t = rlbEl("table", { "class": "rlb-table", "data-rlb": "faults" });
    const head = rlbEl("tr");
    ["broker", "stored", "attempts"].concat(
      grpc ? ["endpoints"] : ["fault item: latency", "not available until"], ["now"]).forEach(
      function (h) { head.appendChild(rlbEl("th", {}, h)); });
    t.appendChild(head);
    view.faults.forEach(function (f) {
      const tr = rlbEl("tr", { "data-rlb": "fault-" + f.broker });
      tr.appendChild(rlbEl("td", {}, f.broker));
      tr.appendChild(rlbEl("td", {}, view.stored[f.broker]));
      tr.appendChild(rlbEl("td", {}, view.attempts[f.broker]));
      let now;
      if (grpc) {
        tr.appendChild(rlbEl("td", {}, f.endpoints));
        now = rlbEl("td", { "data-rlb": "available" }, f.isolated ?
          "isolated until a heartbeat is answered" : "available");
        now.className = f.isolated ? "rlb-bad" : "rlb-ok";
      } else {
        tr.appendChild(rlbEl("td", { "data-rlb": "latency" },
          f.item ? f.latency_ms + " ms" : "no item"));
        tr.appendChild(rlbEl("td", { "data-rlb": "until" }, f.item ?
          (f.not_available_until_ms / 1000).toFixed(3) + " s" : "-"));
        now = rlbEl("td", { "data-rlb": "available" }, f.available ? "available" :
          "avoided for " + (f.wait_ms / 1000).toFixed(3) + " s");
        now.className = f.available ? "rlb-ok" : "rlb-bad";
      }
      tr.appendChild(now);
      t.appendChild(tr);
    });
    faults.replaceChildren(t);
  }

  function drawLog() {
    const t = rlbEl("table", { "class": "rlb-table", "data-rlb": "log" });
    const head = rlbEl("tr");
    const grpc = view.client === "grpc";
    ["send", "start"].concat(grpc ? ["candidates"] : []).concat(
      [grpc ? "attempts (the client's queue: outcome, ms)" : "attempts (queue: outcome, ms)",
        "result", "counter"]).forEach(function (h) {
      head.appendChild(rlbEl("th", {}, h));
    });
    t.appendChild(head);
    log.slice(-PG_LOG_ROWS).reverse().forEach(function (r) {
      const tr = rlbEl("tr", { "data-rlb": "send-row", "data-n": String(r.n) });
      tr.appendChild(rlbEl("td", {}, r.n));
      tr.appendChild(rlbEl("td", {}, (r.start_ms / 1000).toFixed(3) + " s"));
      if (grpc) {
        tr.appendChild(rlbEl("td", { "data-rlb": "candidates" }, (r.candidates || []).join(", ")));
      }
      tr.appendChild(rlbEl("td", { "data-rlb": "attempts" }, r.attempts.map(function (a) {
        return a.queue + ": " + a.outcome + ", " + a.latency_ms;
      }).join(" → ")));
      const res = rlbEl("td", { "data-rlb": "result" }, r.status + (r.error ? " (" + r.error + ")" : ""));
      res.className = r.status === "FAILED" ? "rlb-bad" : "rlb-ok";
      tr.appendChild(res);
      tr.appendChild(rlbEl("td", {}, r.counter));
      t.appendChild(tr);
    });
    // The queue shown is the client's choice; the Proxy beside each broker (local mode) keeps
    // the broker and draws the queue (fact proxy.local-mode-fresh-view-random-queue).
    logBox.replaceChildren.apply(logBox, grpc ? [rlbEl("div", { "class": "rlb-caption",
      "data-rlb": "grpc-note" }, "Each broker's own Proxy (local mode) stores the message on " +
      "that broker, on a queue it draws at random: the queue here is the client's choice, " +
      "the one its receipt names."), t] : [t]);
  }

  function drawChart() {
    const w = 560, h = 170, pad = 34;
    const series = view.series;
    const last = series[series.length - 1];
    const maxX = Math.max(1, last[0]);
    const maxY = Math.max(1, Math.max.apply(null, last.slice(1)));
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("class", "rlb-svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "messages stored per broker, by send number");
    function text(x, y, s, anchor) {
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("font-size", "11");
      t.setAttribute("text-anchor", anchor || "start"); t.setAttribute("fill", "currentColor");
      t.textContent = s; svg.appendChild(t);
    }
    const axis = document.createElementNS(ns, "path");
    axis.setAttribute("d", "M" + pad + " 8 V" + (h - 22) + " H" + (w - 110));
    axis.setAttribute("stroke", "currentColor"); axis.setAttribute("fill", "none");
    svg.appendChild(axis);
    text(pad - 4, 14, String(maxY), "end");
    text(pad - 4, h - 22, "0", "end");
    text(w - 110, h - 8, String(maxX), "end");
    text(pad, h - 8, "sends →  (stored per broker ↑)");
    view.brokers.forEach(function (b, i) {
      const pts = series.map(function (p) {
        const x = pad + (w - 110 - pad) * p[0] / maxX;
        const y = (h - 22) - (h - 30) * p[i + 1] / maxY;
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      const line = document.createElementNS(ns, "polyline");
      line.setAttribute("points", pts.join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", RLB_COLORS[i % RLB_COLORS.length]);
      line.setAttribute("stroke-width", "2");
      svg.appendChild(line);
      const key = document.createElementNS(ns, "rect");         // the colour key; text stays ink
      key.setAttribute("x", w - 104); key.setAttribute("y", 11 + 16 * i);
      key.setAttribute("width", 9); key.setAttribute("height", 9);
      key.setAttribute("fill", RLB_COLORS[i % RLB_COLORS.length]);
      svg.appendChild(key);
      text(w - 91, 20 + 16 * i, b + ": " + last[i + 1]);
    });
    chart.replaceChildren(rlbEl("div", { "class": "rlb-caption" },
      "Messages stored on each broker as the sends go on (virtual time)."), svg);
  }

  function draw() {
    drawSummary();
    drawFaults();
    drawChart();
    drawLog();
  }

  root.appendChild(controls);
  root.appendChild(brokersBox);
  root.appendChild(asker.status);
  root.appendChild(asker.live);
  root.appendChild(summary);
  root.appendChild(faults);
  root.appendChild(chart);
  root.appendChild(logBox);
  drawControls();
  draw();
  el.appendChild(root);
}

export default { render };
