// rocketlb allocation board: drag consumers between "not in the group", room-1 and room-2 (or
// click a consumer to move it along), change the group's shape, and see every strategy's split.
// Keyboard: Tab to a consumer, Enter or Space selects it, the arrow keys move it to the next or
// previous zone (or Tab to a zone's "move here"), Escape lets go; each result is announced.
// The consumer group select adds the servers' rows (the Proxy's QueryAssignment for gRPC push
// consumers, the broker's in POP mode) and what they answer each consumer, queue -1 as it is.
// Every split comes from rocketlb_core.interactive.board (see live_common.js).
const BOARD_ZONES = ["out", "room-1", "room-2"];
const BOARD_TITLES = { "out": "not in the group", "room-1": "room-1", "room-2": "room-2" };
// state.client: the classic clients' own allocation, or the servers' assignment beside it.
const BOARD_CLIENTS = [["remoting", "classic: clients allocate"],
  ["grpc", "+ gRPC push: servers assign"]];

function render({ model, el }) {
  const root = rlbEl("div", { "class": "rlb-live rlb-board" });
  const asker = rlbAsker(model, "board", root);
  let state = JSON.parse(JSON.stringify(model.get("request").state));
  let view = model.get("view");
  const controls = rlbEl("div", { "class": "rlb-controls" });
  const lanes = rlbEl("div", { "class": "rlb-lanes" });
  const grid = rlbScroll("each strategy's split", { "data-rlb": "grid-box" });
  const answers = rlbEl("div", { "data-rlb": "server-box" });   // a scroll region when shown
  let selected = null;          // the consumer the keyboard holds
  let refocus = null;           // what to focus once the board is drawn again

  function ask(op, said) {
    return asker.ask({ state: state, op: op || "view" }, function (v) {
      view = v;
      draw();
      asker.announce((said ? said + ". " : "") + "Queues moved: " + v.rows.map(function (r) {
        return r.strategy + " " + r.n_moved; }).join(", ") + ".");
    });
  }

  function number(label, key, lo, hi) {
    const box = rlbEl("label", { "class": "rlb-field" }, label + " ");
    const input = rlbEl("input", { type: "number", min: String(lo), max: String(hi),
      value: String(key === "consumers" ? Object.keys(state.zones).length : state[key]),
      "class": "rlb-num", "data-rlb": key });
    input.addEventListener("change", function () {
      const typed = parseInt(input.value, 10);
      const v = Math.max(lo, Math.min(hi, isNaN(typed) ? lo : typed));
      input.value = String(v);
      const now = key === "consumers" ? Object.keys(state.zones).length : state[key];
      if (v === now) { return; }                 // a change event on blur, or no change at all
      if (key === "consumers") {
        const zones = {};
        for (let k = 1; k <= v; k++) {
          const c = "c" + k;
          zones[c] = state.zones[c] || (k % 2 ? "room-1" : "room-2");
        }
        state.zones = zones;
      } else {
        state[key] = v;
      }
      ask();
    });
    box.appendChild(input);
    return box;
  }

  function drawControls() {
    controls.replaceChildren();
    controls.appendChild(number("consumers", "consumers", 1, 32));
    controls.appendChild(number("brokers", "brokers", 1, 4));
    controls.appendChild(number("queues per broker", "queues", 1, 16));
    const dup = rlbEl("input", { type: "checkbox", "data-rlb": "duplicate" });
    dup.checked = Boolean(state.duplicate);
    dup.addEventListener("change", function () { state.duplicate = dup.checked; ask(); });
    const dupBox = rlbEl("label", { "class": "rlb-field" }, "c2 reports c1's client id ");
    dupBox.appendChild(dup);
    controls.appendChild(dupBox);
    controls.appendChild(number("pop share", "pop_share", -1, 32));
    const client = rlbEl("select", { "data-rlb": "client" });
    BOARD_CLIENTS.forEach(function ([v, label]) {
      const o = rlbEl("option", { value: v }, label);
      if (v === (state.client || "remoting")) { o.selected = true; }
      client.appendChild(o);
    });
    client.addEventListener("change", function () {
      state.client = client.value;
      drawControls();
      const again = controls.querySelector('[data-rlb="client"]');
      if (again) { again.focus(); }
      ask("view", "consumer group: " + client.options[client.selectedIndex].text);
    });
    const clientBox = rlbEl("label", { "class": "rlb-field" }, "consumer group ");
    clientBox.appendChild(client);
    controls.appendChild(clientBox);
    if (state.client === "grpc") {
      const orderly = rlbEl("input", { type: "checkbox", "data-rlb": "orderly" });
      orderly.checked = Boolean(state.orderly);
      orderly.addEventListener("change", function () {
        state.orderly = orderly.checked;
        ask("view", "consumeMessageOrderly " + (orderly.checked ? "on" : "off"));
      });
      const orderlyBox = rlbEl("label", { "class": "rlb-field" },
        "orderly (consumeMessageOrderly) ");
      orderlyBox.appendChild(orderly);
      controls.appendChild(orderlyBox);
    }
    const forget = rlbEl("button", { "data-rlb": "forget" }, "forget the previous split");
    forget.addEventListener("click", function () { ask("reset"); });
    controls.appendChild(forget);
  }

  function move(who, zone) {
    if (!who || state.zones[who] === zone) { return; }
    state.zones = Object.assign({}, state.zones);
    state.zones[who] = zone;
    ask("view", who + " is now in " + BOARD_TITLES[zone]);
  }

  function focusAfterDraw() {
    if (!refocus) { return; }
    const target = lanes.querySelector('[data-rlb="' + refocus + '"]');
    refocus = null;
    if (target) { target.focus(); }
  }

  function chipKeys(e, c, zone) {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      selected = selected === c ? null : c;
      refocus = "chip-" + c;
      drawLanes();
      asker.announce(selected ? c + " selected, in " + BOARD_TITLES[zone] +
        ": the arrow keys move it, Escape lets go" : c + " let go");
    } else if (e.key === "Escape" && selected) {
      e.preventDefault();
      selected = null;
      refocus = "chip-" + c;
      drawLanes();
      asker.announce(c + " let go");
    } else if (step && selected === c) {
      e.preventDefault();
      const i = BOARD_ZONES.indexOf(zone);
      refocus = "chip-" + c;
      move(c, BOARD_ZONES[(i + step + BOARD_ZONES.length) % BOARD_ZONES.length]);
    }
  }

  function drawLanes() {
    lanes.replaceChildren();
    const names = Object.keys(state.zones);
    BOARD_ZONES.forEach(function (zone) {
      const lane = rlbEl("div", { "class": "rlb-lane rlb-lane-" + zone, "data-rlb": "zone-" + zone,
        role: "group", "aria-label": BOARD_TITLES[zone] });
      const rooms = view.brokers.filter(function (b) { return b.split("@")[0] === zone; });
      lane.appendChild(rlbEl("div", { "class": "rlb-lane-title" },
        BOARD_TITLES[zone] + (rooms.length ? " (" + rooms.map(function (b) {
          return b.split("@")[1]; }).join(", ") + ")" : "")));
      lane.addEventListener("dragover", function (e) { e.preventDefault(); });
      lane.addEventListener("drop", function (e) {
        e.preventDefault();
        move(e.dataTransfer.getData("text/plain"), zone);
      });
      names.forEach(function (c, i) {
        if (state.zones[c] !== zone) { return; }
        const chip = rlbEl("span", { "class": "rlb-consumer", draggable: "true", tabindex: "0",
          role: "button", "aria-pressed": selected === c ? "true" : "false",
          "aria-roledescription": "consumer", "data-rlb": "chip-" + c,
          title: (view.ids[c] || "") + " (drag, click to move on, or Enter then arrow keys)" }, c);
        chip.addEventListener("keydown", function (e) { chipKeys(e, c, zone); });
        chip.style.background = RLB_COLORS[i % RLB_COLORS.length];
        chip.style.color = RLB_INK[i % RLB_INK.length];
        chip.addEventListener("dragstart", function (e) { e.dataTransfer.setData("text/plain", c); });
        chip.addEventListener("click", function () {
          move(c, BOARD_ZONES[(BOARD_ZONES.indexOf(zone) + 1) % BOARD_ZONES.length]);
        });
        lane.appendChild(chip);
      });
      if (selected && state.zones[selected] !== undefined && state.zones[selected] !== zone) {
        const here = rlbEl("button", { "class": "rlb-move-here", "data-rlb": "move-to-" + zone },
          "move " + selected + " here");
        here.addEventListener("click", function () {
          refocus = "chip-" + selected;
          move(selected, zone);
        });
        lane.appendChild(here);
      }
      lanes.appendChild(lane);
    });
    focusAfterDraw();
  }

  function drawGrid() {
    const names = Object.keys(state.zones);
    const table = rlbEl("table", { "class": "rlb-grid", "data-rlb": "assignment-grid" });
    const head = rlbEl("tr");
    ["strategy"].concat(view.queues).concat(["moved", "idle", "unowned", "shared"]).forEach(
      function (h) { head.appendChild(rlbEl("th", {}, h)); });
    table.appendChild(head);
    view.rows.forEach(function (row) {
      const tr = rlbEl("tr", { "data-rlb": "row-" + row.strategy });
      tr.appendChild(rlbBreakable(rlbEl("td", { "class": "rlb-strategy" }), row.strategy));
      row.owners.forEach(function (who, q) {
        const label = who.length > 3 ? who.length + " consumers" : who.length ? who.join("+") : "–";
        const td = rlbEl("td", { "data-rlb": "cell", "data-owners": who.join("+"),
          title: who.join(", ") || "nobody" });
        rlbBreakable(td, label);
        if (who.length === 1) {
          td.style.background = RLB_COLORS[names.indexOf(who[0]) % RLB_COLORS.length];
          td.style.color = RLB_INK[names.indexOf(who[0]) % RLB_INK.length];
        } else if (who.length > 1) {
          td.className = "rlb-shared";
        } else {
          td.className = "rlb-unowned";
        }
        if (row.moved[q]) { td.className += " rlb-moved"; td.setAttribute("data-moved", "1"); }
        tr.appendChild(td);
      });
      [["moved", row.n_moved], ["idle", row.n_idle], ["unowned", row.unowned],
       ["shared", row.shared]].forEach(function ([k, v]) {
        tr.appendChild(rlbEl("td", { "data-rlb": k + "-" + row.strategy, "class": "rlb-count" }, v));
      });
      table.appendChild(tr);
    });
    grid.replaceChildren(table);
  }

  // What each server row told each consumer, queue -1 ("any queue of that broker") as it is.
  function drawAnswers() {
    const rows = view.rows.filter(function (r) { return r.server; });
    if (!rows.length) { answers.replaceChildren(); return; }
    const table = rlbEl("table", { "class": "rlb-table", "data-rlb": "server-answers" });
    const head = rlbEl("tr");
    head.appendChild(rlbEl("th", {}, "consumer"));
    rows.forEach(function (r) { head.appendChild(rlbEl("th", {}, r.strategy + " answers")); });
    table.appendChild(head);
    view.members.forEach(function (c) {
      const tr = rlbEl("tr", { "data-rlb": "answer-" + c });
      tr.appendChild(rlbEl("td", {}, c));
      rows.forEach(function (r) {
        const got = r.assigned[c] || [];
        tr.appendChild(rlbEl("td", { "data-rlb": "assigned" },
          got.length ? got.join(" ") : "–"));
      });
      table.appendChild(tr);
    });
    const box = rlbScroll("what the servers answer each consumer");
    box.appendChild(table);
    answers.replaceChildren(rlbEl("div", { "class": "rlb-caption" },
      "What the servers answer each consumer: A(-1) is broker-a's queue -1, any queue of " +
      "broker-a (the broker's pop picks the messages)."), box);
  }

  function draw() {
    if (selected && state.zones[selected] === undefined) { selected = null; }
    drawLanes();
    drawGrid();
    drawAnswers();
  }

  root.appendChild(controls);
  root.appendChild(asker.status);
  root.appendChild(asker.live);
  root.appendChild(lanes);
  root.appendChild(rlbEl("div", { "class": "rlb-caption" },
    "Owner of each queue (A0 = broker-a, queue 0) under each strategy; outlined: moved by your " +
    "last change; a+b: consumed by both; –: nobody consumes it."));
  root.appendChild(grid);
  root.appendChild(answers);
  drawControls();
  draw();
  el.appendChild(root);
}

export default { render };
