// Case filters: all / failed / regressed. Reads only data-* attributes; writes no markup.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#case-table tbody tr.case"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll(".filters button[data-filter]"));
  var shown = document.getElementById("shown-count");
  function keep(row, filter) {
    if (filter === "failed") { return row.getAttribute("data-status") !== "pass"; }
    if (filter === "regressed") { return row.getAttribute("data-change") === "regressed"; }
    return true;
  }
  function apply(filter) {
    var count = 0;
    rows.forEach(function (row) {
      var visible = keep(row, filter);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === filter));
    });
    if (shown) { shown.textContent = count + " of " + rows.length + " shown"; }
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () { apply(button.getAttribute("data-filter")); });
  });
  apply("all");
}());
