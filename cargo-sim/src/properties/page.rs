//! The sweep's properties as a page (written beside `--report FILE`, as
//! `FILE.html`): each test's properties as bars of the runs that satisfied,
//! failed and did not reach them, and the ones never satisfied, drawn by a
//! self-contained script from the same JSON as the report. Like the
//! timeline's, the page records what it drew on `<body>` (`data-tests`,
//! `data-properties`, `data-never`, `data-failing`, `data-drawn`,
//! `data-errors`), so a browser test can check it.

/// The page of `report` (what [`super::json`] gives).
pub fn page(report: &serde_json::Value, title: &str) -> String {
    let data = report.to_string().replace("</", "<\\/");
    PAGE.replace("__TITLE__", &crate::timeline::html_escape(title))
        .replace("__DATA__", &data)
}

const PAGE: &str = r##"<!doctype html>
<html><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 16px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 16px 0 4px; }
table { border-collapse: collapse; }
td { padding: 2px 8px; vertical-align: middle; }
td.kind { color: #555; }
td.where { font-family: monospace; color: #555; }
.satisfied { fill: #2a9d4a; }
.failed { fill: #d33; }
.unsatisfied { fill: #bbb; }
.unreached { fill: #eee; }
li.never { color: #d33; }
</style></head>
<body data-errors="0">
<h1>__TITLE__</h1>
<div id="tests"></div>
<h2>Never satisfied</h2>
<ul id="never"></ul>
<script>
"use strict";
window.addEventListener("error", function () {
  document.body.dataset.errors = String(Number(document.body.dataset.errors) + 1);
});
var data = __DATA__;
(function draw() {
  var NS = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent, ns) {
    var node = ns ? document.createElementNS(NS, name) : document.createElement(name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    parent.appendChild(node);
    return node;
  }
  var tests = document.getElementById("tests");
  var rows = 0, failing = 0;
  data.tests.forEach(function (t) {
    el("h2", {}, tests).textContent = t.binary + " " + t.test + " (" + t.runs + " runs)";
    var table = el("table", { class: "test" }, tests);
    t.properties.forEach(function (p) {
      var tr = el("tr", { class: "property" }, table);
      el("td", { class: "kind" }, tr).textContent = p.kind;
      el("td", {}, tr).textContent = "\u201c" + p.message + "\u201d";
      el("td", { class: "where" }, tr).textContent = p.location;
      var svg = el("svg", { width: 200, height: 12 }, el("td", {}, tr), true);
      var runs = Math.max(1, t.runs), x = 0;
      var failed = p.runs_failed, satisfied = Math.max(0, p.runs_satisfied);
      var parts = [["satisfied", satisfied], ["failed", failed],
        ["unsatisfied", Math.max(0, p.runs_reached - satisfied - failed)],
        ["unreached", p.runs_not_reached]];
      parts.forEach(function (part) {
        var w = part[1] / runs * 200;
        if (w > 0) el("rect", { class: part[0], x: x, y: 0, width: w, height: 12 }, svg, true);
        x += w;
      });
      var first = p.first_satisfied_seed ? ", first at seed " + p.first_satisfied_seed : "";
      el("td", {}, tr).textContent = p.runs_satisfied + " satisfied, " + p.runs_failed +
        " failed, " + p.runs_not_reached + " not reached" + first;
      rows += 1;
      if (p.runs_failed > 0) failing += 1;
    });
  });
  var never = document.getElementById("never");
  data.never_satisfied.forEach(function (p) {
    el("li", { class: "never" }, never).textContent = p.kind + " \u201c" + p.message + "\u201d at " +
      p.location + " (" + p.binary + ")" + (p.fails_the_sweep ? ": fails the sweep" : "");
  });
  var body = document.body.dataset;
  body.tests = String(tests.querySelectorAll("table.test").length);
  body.properties = String(rows);
  body.never = String(never.querySelectorAll("li.never").length);
  body.failing = String(failing);
  body.drawn = "1";
})();
</script>
</body></html>
"##;
