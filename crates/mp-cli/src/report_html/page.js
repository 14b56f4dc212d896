// Draws the report's charts into the inline <svg> elements from the JSON data block.
// Each chart sets data-drawn to the number of marks (bars or points) it drew.
"use strict";
(function () {
  var NS = document.getElementById("chart-quadrants").namespaceURI;
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var QUADRANT_COLOURS = { A: "#2e7d32", B: "#1565c0", C: "#f9a825", D: "#c62828" };
  var LEFT = 50, TOP = 16, BOTTOM = 80;

  function el(parent, name, attrs, text) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) { node.appendChild(document.createTextNode(String(text))); }
    parent.appendChild(node);
    return node;
  }
  function size(svg) {
    return { w: Number(svg.getAttribute("width")), h: Number(svg.getAttribute("height")) };
  }
  function axes(svg, max) {
    var s = size(svg);
    el(svg, "line", { x1: LEFT, y1: TOP, x2: LEFT, y2: s.h - BOTTOM, "class": "axis" });
    el(svg, "line", { x1: LEFT, y1: s.h - BOTTOM, x2: s.w - 10, y2: s.h - BOTTOM, "class": "axis" });
    el(svg, "text", { x: LEFT - 6, y: TOP + 4, "text-anchor": "end" }, max);
    el(svg, "text", { x: LEFT - 6, y: s.h - BOTTOM + 4, "text-anchor": "end" }, 0);
  }
  function shortTime(ts) { return ts.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, "Z"); }
  function bar(svg, x, y, w, h, colour, tip) {
    var rect = el(svg, "rect", { x: x, y: y, width: w, height: h, fill: colour });
    el(rect, "title", {}, tip);
    return rect;
  }
  function label(svg, x, y, text) {
    el(svg, "text", { x: x, y: y, "text-anchor": "start", transform: "rotate(25 " + x + " " + y + ")" }, text);
  }
  // Labels every nth tick so that at most 20 labels share an axis.
  function every(n) { return Math.max(1, Math.ceil(n / 20)); }

  function quadrants() {
    var svg = document.getElementById("chart-quadrants");
    var s = size(svg), plotH = s.h - TOP - BOTTOM, n = data.ticks.length;
    var max = Math.max(1, Math.max.apply(null, data.ticks.map(function (t) {
      return Object.keys(t.quadrants).reduce(function (a, q) { return a + t.quadrants[q]; }, 0);
    })));
    axes(svg, max);
    var slot = (s.w - LEFT - 20) / Math.max(n, 1), width = Math.max(2, Math.min(60, slot * 0.7));
    var drawn = 0;
    data.ticks.forEach(function (t, i) {
      var x = LEFT + 10 + i * slot, y = s.h - BOTTOM;
      ["A", "B", "C", "D"].forEach(function (q) {
        var count = t.quadrants[q] || 0;
        if (count === 0) { return; }
        var h = plotH * count / max;
        y -= h;
        bar(svg, x, y, width, h, QUADRANT_COLOURS[q], t.ts + ": Quadrant " + q + ": " + count);
        drawn += 1;
      });
      if (i % every(n) === 0) { label(svg, x, s.h - BOTTOM + 14, shortTime(t.ts) + (t.dry_run ? " (dry run)" : "")); }
    });
    svg.setAttribute("data-drawn", drawn);
  }

  function repos() {
    var svg = document.getElementById("chart-repos");
    var s = size(svg), plotH = s.h - TOP - BOTTOM, n = data.repos.length;
    var max = Math.max(1, Math.max.apply(null, data.repos.map(function (r) { return Math.max(r.merged, r.blocked); })));
    axes(svg, max);
    var slot = (s.w - LEFT - 20) / Math.max(n, 1), width = Math.max(2, Math.min(40, slot * 0.35));
    var drawn = 0;
    data.repos.forEach(function (r, i) {
      var x = LEFT + 10 + i * slot;
      [["merged", "#2e7d32"], ["blocked", "#c62828"]].forEach(function (series, j) {
        var count = r[series[0]];
        if (!count) { return; }
        var h = plotH * count / max;
        bar(svg, x + j * (width + 2), s.h - BOTTOM - h, width, h, series[1], r.repo + ": " + series[0] + " " + count);
        drawn += 1;
      });
      label(svg, x, s.h - BOTTOM + 14, r.repo);
    });
    if (n === 0) { el(svg, "text", { x: LEFT + 10, y: TOP + 20 }, "no tick record with repositories"); }
    svg.setAttribute("data-drawn", drawn);
  }

  function inbox() {
    var svg = document.getElementById("chart-inbox");
    var items = data.inbox, s = size(svg), left = 260, rowH = 22;
    svg.setAttribute("height", Math.max(s.h, TOP + 30 + items.length * rowH));
    var max = Math.max(1, Math.max.apply(null, items.map(function (a) { return a.age_hours; }).concat([0])));
    var drawn = 0;
    items.forEach(function (a, i) {
      var y = TOP + i * rowH, w = Math.max(3, (s.w - left - 120) * a.age_hours / max);
      var name = (a.pr || a.issue || "?") + " (" + a.state + ")";
      el(svg, "text", { x: left - 8, y: y + 14, "text-anchor": "end" }, name);
      bar(svg, left, y + 2, w, rowH - 6, "#6a1b9a", name + ": open since " + a.since);
      el(svg, "text", { x: left + w + 6, y: y + 14 }, a.age_hours.toFixed(1) + " h");
      drawn += 1;
    });
    if (items.length === 0) { el(svg, "text", { x: 10, y: TOP + 14 }, "no open decision-inbox items at the last tick"); }
    svg.setAttribute("data-drawn", drawn);
  }

  function api() {
    var svg = document.getElementById("chart-api");
    var s = size(svg), plotH = s.h - TOP - BOTTOM;
    var points = [];
    data.ticks.forEach(function (t, i) { if (t.api_calls !== null && t.api_calls !== undefined) { points.push([i, t]); } });
    var max = Math.max(1, Math.max.apply(null, points.map(function (p) { return p[1].api_calls; }).concat([0])));
    axes(svg, max);
    var slot = (s.w - LEFT - 20) / Math.max(data.ticks.length, 1);
    var xy = points.map(function (p) {
      return [LEFT + 10 + p[0] * slot + Math.min(30, slot * 0.35), s.h - BOTTOM - plotH * p[1].api_calls / max, p[1]];
    });
    if (xy.length > 1) {
      el(svg, "polyline", { points: xy.map(function (p) { return p[0] + "," + p[1]; }).join(" "), fill: "none", stroke: "#37474f", "stroke-width": 2 });
    }
    xy.forEach(function (p, i) {
      var dot = el(svg, "circle", { cx: p[0], cy: p[1], r: 5, fill: "#ef6c00" });
      el(dot, "title", {}, p[2].ts + ": " + p[2].api_calls + " API calls");
      if (i % every(xy.length) === 0) { label(svg, p[0], s.h - BOTTOM + 14, shortTime(p[2].ts)); }
    });
    if (xy.length === 0) { el(svg, "text", { x: LEFT + 10, y: TOP + 20 }, "no tick record with API calls"); }
    svg.setAttribute("data-drawn", xy.length);
  }

  quadrants();
  repos();
  inbox();
  api();
  document.body.setAttribute("data-charts", "drawn");
})();
