// rocketlb self-checking exercise: the reader's answer is checked against the package's own
// answer for the exercise's parameters (rocketlb_core.interactive.exercises).
function render({ model, el }) {
  const root = rlbEl("div", { "class": "rlb-live rlb-exercise" });
  const asker = rlbAsker(model, "exercise", root);
  const prompt = rlbEl("div", { "class": "rlb-prompt" }, model.get("prompt"));
  const input = rlbEl("input", { type: "text", "data-rlb": "answer", "class": "rlb-answer",
    placeholder: "your answer", "aria-label": "your answer" });
  const check = rlbEl("button", { "data-rlb": "check" }, "check");
  const reveal = rlbEl("button", { "data-rlb": "reveal" }, "show the answer");
  const verdict = rlbEl("div", { "data-rlb": "verdict", "class": "rlb-verdict", role: "status",
    "aria-live": "polite" });
  function ask(show) {
    return asker.ask({ exercise: model.get("exercise"), params: model.get("params"),
      answer: input.value, reveal: show }, function (v) {
      if (show) {
        verdict.textContent = "The package says: " + v.truth;
        verdict.className = "rlb-verdict";
      } else if (!v.answered) {
        verdict.textContent = "Type an answer first.";
        verdict.className = "rlb-verdict";
      } else {
        verdict.textContent = v.right ? "Right: " + v.truth : "Not that: try again, or run it.";
        verdict.className = "rlb-verdict " + (v.right ? "rlb-ok" : "rlb-bad");
      }
    });
  }
  check.addEventListener("click", function () { ask(false); });
  input.addEventListener("keydown", function (e) { if (e.key === "Enter") { ask(false); } });
  reveal.addEventListener("click", function () { ask(true); });
  const row = rlbEl("div", { "class": "rlb-controls" });
  row.append(input, check, reveal);
  root.append(prompt, row, verdict, asker.status);
  el.appendChild(root);
}

export default { render };
