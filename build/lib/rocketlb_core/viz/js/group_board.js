// rocketlb GroupBoard: drag consumers between "not in group", room-1 and room-2.
// Every assignment shown was computed by rocketlb_core (model.views); this file looks up and draws.
const ZONES = ["out", "room-1", "room-2"];
const TITLES = { "out": "not in the group", "room-1": "room-1 (broker-a)", "room-2": "room-2 (broker-b)" };
const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948"];

function key(consumers, zones) {
  return consumers.map(function (c) { return c + "=" + zones[c]; }).join("|");
}

function render({ model, el }) {
  let previous = null;
  function draw() {
    const consumers = model.get("consumers");
    const zones = model.get("zones");
    const queues = model.get("queues");
    const view = model.get("views")[key(consumers, zones)] || {};
    el.replaceChildren();
    const root = document.createElement("div");
    root.className = "rlb-board";
    const lanes = document.createElement("div");
    lanes.className = "rlb-lanes";
    ZONES.forEach(function (zone) {
      const lane = document.createElement("div");
      lane.className = "rlb-lane rlb-lane-" + zone;
      lane.setAttribute("data-rlb", "zone-" + zone);
      const title = document.createElement("div");
      title.className = "rlb-lane-title";
      title.textContent = TITLES[zone];
      lane.appendChild(title);
      lane.addEventListener("dragover", function (e) { e.preventDefault(); });
      lane.addEventListener("drop", function (e) {
        e.preventDefault();
        const who = e.dataTransfer.getData("text/plain");
        if (!who || zones[who] === zone) { return; }
        previous = view;
        const next = Object.assign({}, zones);
        next[who] = zone;
        model.set("zones", next);
        model.save_changes();
      });
      consumers.forEach(function (c, i) {
        if (zones[c] !== zone) { return; }
        const chip = document.createElement("span");
        chip.className = "rlb-consumer";
        chip.draggable = true;
        chip.style.background = COLORS[i % COLORS.length];
        chip.setAttribute("data-rlb", "chip-" + c);
        chip.textContent = c;
        chip.addEventListener("dragstart", function (e) { e.dataTransfer.setData("text/plain", c); });
        lane.appendChild(chip);
      });
      lanes.appendChild(lane);
    });
    root.appendChild(lanes);
    const table = document.createElement("table");
    table.className = "rlb-grid";
    table.setAttribute("data-rlb", "assignment-grid");
    const head = document.createElement("tr");
    ["strategy"].concat(queues).concat(["moved", "idle"]).forEach(function (h) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    table.appendChild(head);
    Object.keys(view).forEach(function (strategy) {
      const tr = document.createElement("tr");
      tr.setAttribute("data-rlb", "row-" + strategy);
      const name = document.createElement("td");
      name.textContent = strategy;
      tr.appendChild(name);
      let moved = 0;
      view[strategy].forEach(function (owner, q) {
        const td = document.createElement("td");
        td.textContent = owner || "-";
        const idx = consumers.indexOf(owner);
        if (idx >= 0) { td.style.background = COLORS[idx % COLORS.length]; td.style.color = "white"; }
        if (previous && previous[strategy] && previous[strategy][q] !== owner) {
          td.className = "rlb-moved";
          moved += 1;
        }
        tr.appendChild(td);
      });
      const members = consumers.filter(function (c) { return zones[c] !== "out"; });
      const idle = members.filter(function (c) { return view[strategy].indexOf(c) < 0; }).length;
      [String(moved), String(idle)].forEach(function (v, i) {
        const td = document.createElement("td");
        td.textContent = v;
        td.setAttribute("data-rlb", (i === 0 ? "moved-" : "idle-") + strategy);
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    root.appendChild(table);
    el.appendChild(root);
  }
  model.on("change:zones", draw);
  model.on("change:views", draw);
  draw();
}

export default { render };
