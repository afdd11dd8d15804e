// rocketlb RouteExplorer: broker permission toggles -> publish list and subscribe set.
// Every view was computed by rocketlb_core in Python (model.views); this file only looks up and draws.
function key(brokers) {
  return brokers.slice().sort(function (a, b) { return a.name < b.name ? -1 : 1; })
    .map(function (b) { return b.name + "=" + b.perm; }).join("|");
}

function chips(title, items, testid) {
  var box = document.createElement("div");
  box.className = "rlb-list";
  box.setAttribute("data-rlb", testid);
  var h = document.createElement("div");
  h.className = "rlb-list-title";
  h.textContent = title + " (" + items.length + " queues)";
  box.appendChild(h);
  items.forEach(function (label) {
    var c = document.createElement("span");
    c.className = "rlb-chip rlb-" + label.split("/")[0];
    c.textContent = label;
    box.appendChild(c);
  });
  return box;
}

function render({ model, el }) {
  function draw() {
    var brokers = model.get("brokers");
    var cycle = model.get("cycle");
    var view = model.get("views")[key(brokers)] || { publish: [], subscribe: [] };
    el.replaceChildren();
    var root = document.createElement("div");
    root.className = "rlb-route-explorer";
    var row = document.createElement("div");
    row.className = "rlb-brokers";
    brokers.forEach(function (b, i) {
      var btn = document.createElement("button");
      btn.className = "rlb-broker rlb-perm-" + b.perm.replace(/-/g, "x");
      btn.setAttribute("data-rlb", "perm-" + b.name);
      btn.textContent = b.name + "  " + b.perm;
      btn.title = "click to change the permission of " + b.name;
      btn.addEventListener("click", function () {
        var next = cycle[(cycle.indexOf(b.perm) + 1) % cycle.length];
        var copy = brokers.map(function (x, j) { return j === i ? { name: x.name, perm: next } : x; });
        model.set("brokers", copy);
        model.save_changes();
      });
      row.appendChild(btn);
    });
    root.appendChild(row);
    root.appendChild(chips("Producer publish list", view.publish, "publish-list"));
    root.appendChild(chips("Consumer subscribe set", view.subscribe, "subscribe-set"));
    el.appendChild(root);
  }
  model.on("change:brokers", draw);
  draw();
}

export default { render };
