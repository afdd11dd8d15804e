// rocketlb Kafka rack board: put each consumer in a rack (or none), choose the topic's partitions
// and how many racks hold each partition's replicas, and see Kafka's range and cooperative
// sticky assignors split them without and with the consumers' client.rack (KIP-881).
// Keyboard: every control is a labelled input, select or button (Tab, the arrow keys, Enter);
// each result is announced. Every split comes from rocketlb_core.interactive.kafka_board.
const KB_NAMES = { "range": "range", "cooperative-sticky": "coop. sticky" };

function render({ model, el }) {
  const root = rlbEl("div", { "class": "rlb-live rlb-kafka-board" });
  const asker = rlbAsker(model, "kafka-board", root);
  let state = JSON.parse(JSON.stringify(model.get("request").state));
  let view = model.get("view");
  const controls = rlbEl("div", { "class": "rlb-controls" });
  const members = rlbEl("div", { "class": "rlb-controls rlb-kb-members",
    role: "group", "aria-label": "each consumer's rack" });
  const grid = rlbScroll("each assignor's split", { "data-rlb": "grid-box" });

  function rowName(row) {
    return KB_NAMES[row.assignor] + (row.client_rack ? " + racks" : "");
  }

  // Only the grid is drawn again: the controls keep the reader's focus.
  function ask(op, said) {
    return asker.ask({ state: state, op: op || "view" }, function (v) {
      view = v;
      drawGrid();
      asker.announce((said ? said + ". " : "") + "Off-rack partitions: " +
        v.rows.map(function (r) { return rowName(r) + " " + r.n_off_rack; }).join(", ") + ".");
    });
  }

  function number(label, key, lo, hi) {
    const box = rlbEl("label", { "class": "rlb-field" }, label + " ");
    const count = function () {
      return key === "consumers" ? Object.keys(state.racks).length : state[key];
    };
    const input = rlbEl("input", { type: "number", min: String(lo), max: String(hi),
      value: String(count()), "class": "rlb-num", "data-rlb": key });
    input.addEventListener("change", function () {
      const typed = parseInt(input.value, 10);
      const v = Math.max(lo, Math.min(hi, isNaN(typed) ? lo : typed));
      input.value = String(v);
      if (v === count()) { return; }
      if (key === "consumers") {
        const racks = {};
        for (let k = 1; k <= v; k++) {
          const c = "c" + k;
          racks[c] = state.racks[c] || view.rack_choices[1 + (k - 1) % 3];
        }
        state.racks = racks;
        drawMembers();
      } else {
        state[key] = v;
      }
      ask("view", label + " " + v);
    });
    box.appendChild(input);
    return box;
  }

  function drawControls() {
    controls.replaceChildren();
    controls.appendChild(number("consumers", "consumers", 1, 6));
    controls.appendChild(number("partitions", "partitions", 1, 12));
    controls.appendChild(number("racks per partition", "replicas", 1, 3));
    const forget = rlbEl("button", { "data-rlb": "forget" }, "forget the previous split");
    forget.addEventListener("click", function () { ask("reset", "previous split forgotten"); });
    controls.appendChild(forget);
  }

  function drawMembers() {
    members.replaceChildren();
    Object.keys(state.racks).forEach(function (c, i) {
      const box = rlbEl("label", { "class": "rlb-field" });
      const chip = rlbEl("span", { "class": "rlb-consumer" }, c);
      chip.style.background = RLB_COLORS[i % RLB_COLORS.length];
      chip.style.color = RLB_INK[i % RLB_INK.length];
      box.appendChild(chip);
      box.appendChild(document.createTextNode(" rack "));
      const pick = rlbEl("select", { "data-rlb": "rack-" + c, "aria-label": c + "'s rack" });
      view.rack_choices.forEach(function (r) {
        const opt = rlbEl("option", { value: r }, r);
        if (state.racks[c] === r) { opt.selected = true; }
        pick.appendChild(opt);
      });
      pick.addEventListener("change", function () {
        state.racks = Object.assign({}, state.racks);
        state.racks[c] = pick.value;
        ask("view", c + " is now in " + pick.value);
      });
      box.appendChild(pick);
      members.appendChild(box);
    });
  }

  function drawGrid() {
    const names = view.members;
    const table = rlbEl("table", { "class": "rlb-grid", "data-rlb": "assignment-grid" });
    const head = rlbEl("tr");
    ["assignor"].concat(view.partitions).concat(["off-rack", "moved", "spread"]).forEach(
      function (h) { head.appendChild(rlbEl("th", { scope: "col" }, h)); });
    table.appendChild(head);
    const reps = rlbEl("tr", { "data-rlb": "replica-row" });
    reps.appendChild(rlbEl("th", { scope: "row", "class": "rlb-strategy" }, "replicas in"));
    view.replica_racks.forEach(function (rs) {
      reps.appendChild(rlbEl("td", { "data-rlb": "replica-racks", title: rs.join(", ") },
        rs.map(function (r) { return r.slice(-1); }).join(" ")));
    });
    reps.appendChild(rlbEl("td", { colspan: "3" }));
    table.appendChild(reps);
    view.rows.forEach(function (row) {
      const key = row.assignor + (row.client_rack ? "-racks" : "");
      const tr = rlbEl("tr", { "data-rlb": "row-" + key });
      tr.appendChild(rlbEl("th", { scope: "row", "class": "rlb-strategy" }, rowName(row)));
      row.owners.forEach(function (who, p) {
        const off = row.off_rack[p];
        const td = rlbEl("td", { "data-rlb": "cell", "data-owner": who,
          "data-off-rack": off ? "1" : "0",
          title: (who || "nobody") + (who ? " (" + view.racks[who] + ")" : "") +
            (off ? ": no replica in its rack" : "") }, who ? who + (off ? "⇄" : "") : "–");
        const i = names.indexOf(who);
        if (i >= 0) {
          td.style.background = RLB_COLORS[i % RLB_COLORS.length];
          td.style.color = RLB_INK[i % RLB_INK.length];
        } else {
          td.className = "rlb-unowned";
        }
        if (row.moved[p]) { td.className += " rlb-moved"; td.setAttribute("data-moved", "1"); }
        tr.appendChild(td);
      });
      [["off-rack", row.n_off_rack], ["moved", row.n_moved], ["spread", row.spread]].forEach(
        function ([k, v]) {
          tr.appendChild(rlbEl("td", { "data-rlb": k + "-" + key, "class": "rlb-count" }, v));
        });
      table.appendChild(tr);
    });
    grid.replaceChildren(table);
  }

  root.appendChild(controls);
  root.appendChild(members);
  root.appendChild(asker.status);
  root.appendChild(asker.live);
  root.appendChild(rlbEl("div", { "class": "rlb-caption" },
    "Owner of each partition (P0...) under each assignor, without and with the consumers' " +
    "client.rack; replicas in: the racks (a, b, c) holding its replicas; ⇄: its owner's rack " +
    "holds none (a cross-rack fetch); outlined: moved by your last change; spread: most minus " +
    "fewest partitions a consumer."));
  root.appendChild(grid);
  drawControls();
  drawMembers();
  drawGrid();
  el.appendChild(root);
}

export default { render };
