// Draws the Agents page's charts from the agents data block (the figures of `mp agents`).
// Every mark carries the agent and the figure it shows in data- attributes; each chart
// sets data-drawn to the number of marks it drew.
"use strict";
(function () {
  var NS = document.getElementById("chart-agents-multiples").namespaceURI;
  var data = JSON.parse(document.getElementById("agents-data").textContent);
  var agents = data.agents.slice(0, data.charted);
  var FIGURES = [["merged", "#2e7d32"], ["closed", "#8d6e63"], ["open", "#64b5f6"]];
  var WAIT = "#00838f", MEDIAN = "#212121", P90 = "#e65100";
  var CODES = [
    ["c1_ready_to_merge", "#5e35b1"], ["c2_checks_green", "#d81b60"], ["c3_owner_approval", "#fb8c00"],
    ["c4_base_is_main", "#3949ab"], ["c5_trailers", "#00897b"], ["classifier_publisher", "#546e7a"],
    ["l4_agent_registry", "#6d4c41"], ["inbox", "#9e9d24"]
  ];
  var OTHER = ["#c0ca33", "#8e24aa", "#43a047", "#f4511e", "#0097a7", "#7cb342"];
  var LEFT = 200, ROW = 28;

  function el(parent, name, attrs, text) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) { node.appendChild(document.createTextNode(String(text))); }
    parent.appendChild(node);
    return node;
  }
  function width(svg) { return Number(svg.getAttribute("width")); }
  // The same durations as `mp agents` prints: 45s, 12m, 3h05m, 2d04h.
  function human(s) {
    function two(n) { return (n < 10 ? "0" : "") + n; }
    if (s < 60) { return s + "s"; }
    if (s < 3600) { return Math.floor(s / 60) + "m"; }
    if (s < 86400) { return Math.floor(s / 3600) + "h" + two(Math.floor(s % 3600 / 60)) + "m"; }
    return Math.floor(s / 86400) + "d" + two(Math.floor(s % 86400 / 3600)) + "h";
  }
  function orNone(s) { return s === null || s === undefined ? "-" : human(s); }
  function name(svg, y, agent) {
    el(svg, "text", { x: LEFT - 8, y: y, "text-anchor": "end" }, agent);
  }

  // One panel per agent, on one scale: merged, closed and open pull requests.
  function multiples() {
    var svg = document.getElementById("chart-agents-multiples");
    var perRow = 3, panelW = (width(svg) - 20) / perRow, panelH = 126;
    var rows = Math.max(1, Math.ceil(agents.length / perRow));
    svg.setAttribute("height", rows * (panelH + 12));
    var max = Math.max(1, Math.max.apply(null, agents.map(function (a) { return a.prs; })));
    var drawn = 0;
    agents.forEach(function (a, i) {
      var px = (i % perRow) * (panelW + 10), py = Math.floor(i / perRow) * (panelH + 12);
      el(svg, "rect", { x: px, y: py, width: panelW, height: panelH, "class": "panel" });
      el(svg, "text", { x: px + 8, y: py + 16, "class": "panel-title" }, a.agent + " (" + a.prs + " pull requests)");
      FIGURES.forEach(function (f, j) {
        var value = a[f[0]], y = py + 26 + j * 22, full = panelW - 120;
        el(svg, "text", { x: px + 8, y: y + 12 }, f[0]);
        var bar = el(svg, "rect", {
          x: px + 60, y: y, width: full * value / max, height: 15, fill: f[1],
          "data-agent": a.agent, "data-figure": f[0], "data-value": value
        });
        el(bar, "title", {}, a.agent + ": " + f[0] + " " + value);
        el(svg, "text", { x: px + 66 + full * value / max, y: y + 12 }, value);
        drawn += 1;
      });
      var rate = a.merge_rate === null ? "-" : Math.round(a.merge_rate * 100) + "%";
      el(svg, "text", { x: px + 8, y: py + 110 },
        "merge rate " + rate + " · median " + orNone(a.approval_to_merge.median_s) +
        " · p90 " + orNone(a.approval_to_merge.p90_s));
    });
    svg.setAttribute("data-drawn", drawn);
  }

  // One row per agent: a dot per merged pull request at its time from approval to merge,
  // on a logarithmic scale from a minute up, with the median and p90 marked.
  function waits() {
    var svg = document.getElementById("chart-agents-wait");
    var w = width(svg), top = 10;
    svg.setAttribute("height", top + agents.length * ROW + 30);
    // Waits are sorted: an agent's longest is its last (no spread of a long array).
    var longest = agents.reduce(function (m, a) { return Math.max(m, a.waits.length ? a.waits[a.waits.length - 1] : 0); }, 0);
    var TICKS = [[60, "1m"], [600, "10m"], [3600, "1h"], [21600, "6h"], [86400, "1d"], [604800, "7d"],
      [2592000, "30d"], [31536000, "365d"]];
    // The scale ends at the first labelled tick at or past the longest wait.
    var end = TICKS.filter(function (t) { return t[0] >= Math.max(3600, longest); })[0];
    var low = 60, high = end ? end[0] : longest;
    function x(s) {
      return LEFT + (w - LEFT - 30) * Math.log(Math.max(s, low) / low) / Math.log(high / low);
    }
    var axisY = top + agents.length * ROW + 4;
    el(svg, "line", { x1: LEFT, y1: axisY, x2: w - 30, y2: axisY, "class": "axis" });
    TICKS.filter(function (t) { return t[0] <= high; })
      .forEach(function (t) {
        el(svg, "line", { x1: x(t[0]), y1: top, x2: x(t[0]), y2: axisY, "class": "grid" });
        el(svg, "text", { x: x(t[0]), y: axisY + 16, "text-anchor": "middle" }, t[1]);
      });
    var drawn = 0;
    agents.forEach(function (a, i) {
      var y = top + i * ROW + ROW / 2;
      name(svg, y + 4, a.agent);
      if (a.waits.length === 0) {
        el(svg, "text", { x: LEFT + 6, y: y + 4 }, "no merge with an approval time");
        return;
      }
      a.waits.forEach(function (s, k) {
        var dot = el(svg, "circle", {
          cx: x(s), cy: y + (k % 3 - 1) * 3, r: 5, fill: WAIT,
          "data-agent": a.agent, "data-wait-s": s
        });
        el(dot, "title", {}, a.agent + ": " + human(s) + " from approval to merge");
        drawn += 1;
      });
      [["median_s", MEDIAN], ["p90_s", P90]].forEach(function (m) {
        var s = a.approval_to_merge[m[0]];
        var mark = el(svg, "line", {
          x1: x(s), y1: y - 11, x2: x(s), y2: y + 11, stroke: m[1], "stroke-width": 3,
          "data-agent": a.agent, "data-figure": m[0], "data-value": s
        });
        el(mark, "title", {}, a.agent + ": " + m[0].replace("_s", "") + " " + human(s));
      });
    });
    svg.setAttribute("data-drawn", drawn);
  }

  // One stacked bar per agent: the tick evaluations each condition blocked.
  function blocks() {
    var svg = document.getElementById("chart-agents-blocks");
    var legend = document.getElementById("agents-blocks-legend");
    var w = width(svg), top = 10;
    svg.setAttribute("height", top + agents.length * ROW + 10);
    var present = {};
    agents.forEach(function (a) { Object.keys(a.blocks).forEach(function (c) { present[c] = true; }); });
    var codes = CODES.filter(function (c) { return present[c[0]]; });
    Object.keys(present).sort().forEach(function (c) {
      if (!CODES.some(function (k) { return k[0] === c; })) { codes.push([c, OTHER[codes.length % OTHER.length]]); }
    });
    codes.forEach(function (c) {
      var sw = document.createElement("span");
      sw.className = "sw";
      sw.style.background = c[1];
      legend.appendChild(sw);
      legend.appendChild(document.createTextNode(c[0] + " "));
    });
    function total(a) { return Object.keys(a.blocks).reduce(function (n, c) { return n + a.blocks[c]; }, 0); }
    var max = Math.max(1, Math.max.apply(null, agents.map(total)));
    var drawn = 0;
    agents.forEach(function (a, i) {
      var y = top + i * ROW, x = LEFT;
      name(svg, y + 15, a.agent);
      codes.forEach(function (c) {
        var value = a.blocks[c[0]];
        if (!value) { return; }
        var segment = (w - LEFT - 60) * value / max;
        var rect = el(svg, "rect", {
          x: x, y: y + 2, width: segment, height: ROW - 8, fill: c[1],
          "data-agent": a.agent, "data-code": c[0], "data-value": value
        });
        el(rect, "title", {}, a.agent + ": " + c[0] + " blocked " + value + " evaluation(s) of " +
          (a.blocked_prs[c[0]] || 0) + " pull request(s)");
        x += segment;
        drawn += 1;
      });
      el(svg, "text", { x: x + 6, y: y + 15 }, total(a) === 0 ? "never blocked" : total(a));
    });
    svg.setAttribute("data-drawn", drawn);
  }

  multiples();
  waits();
  blocks();
  document.body.setAttribute("data-agents-charts", "drawn");
})();
