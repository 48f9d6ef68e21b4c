// qsim report: interactive charts. Reads the JSON of each script element
// of type application/json and class qsim-plot, and draws it
// as SVG beside the static chart, which it hides. Hover: the nearest point's
// value with its 95% interval. Legend: click a series to hide or show it.
// Drag across the chart to zoom into that range; double-click (or "reset
// zoom") to see everything again. Loads nothing.
// Test hook: a page address ending in #hover=C,S,P moves the mouse over
// point P of series S of chart C once drawn (all numbered from 0), through
// the same handler as a real mouse.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var W = 760, H = 400, L = 72, R = 16, T = 14, B = 48;

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function html(name, cls, parent, text) {
    var e = document.createElement(name);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function finite(v) { return typeof v === "number" && isFinite(v); }
  function ticks(lo, hi, n) {
    var span = hi - lo;
    if (!(span > 0)) { return [lo]; }
    var step = Math.pow(10, Math.floor(Math.log(span / n) / Math.LN10));
    var e = span / n / step;
    if (e >= 7.5) { step *= 10; } else if (e >= 3.5) { step *= 5; } else if (e >= 1.5) { step *= 2; }
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return out;
  }
  function label(v) {
    var a = Math.abs(v);
    if (a === 0) { return "0"; }
    if (a >= 1e6 || a < 1e-3) { return v.toExponential(1); }
    return String(parseFloat(v.toPrecision(6)));
  }

  function Chart(figure, data) {
    var self = this;
    this.data = data;
    this.hidden = data.series.map(function () { return false; });
    this.view = null; // [x0, x1] when zoomed
    this.box = html("div", "qsim-chart", null);
    figure.insertBefore(this.box, figure.firstChild);
    var legend = html("div", "qsim-legend", this.box);
    data.series.forEach(function (s, i) {
      var b = html("button", "qsim-series", legend, s.name || data.title);
      b.type = "button";
      b.style.borderColor = COLORS[i % COLORS.length];
      b.setAttribute("aria-pressed", "true");
      b.addEventListener("click", function () {
        self.hidden[i] = !self.hidden[i];
        b.setAttribute("aria-pressed", self.hidden[i] ? "false" : "true");
        b.style.opacity = self.hidden[i] ? "0.4" : "1";
        self.draw();
      });
    });
    var reset = html("button", "qsim-reset", legend, "reset zoom");
    reset.type = "button";
    reset.addEventListener("click", function () { self.view = null; self.draw(); });
    this.svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", role: "img" }, this.box);
    this.tip = html("div", "qsim-tip", this.box);
    this.tip.setAttribute("role", "status");
    this.tip.style.visibility = "hidden";
    var notes = html("ul", "qsim-notes", this.box);
    (data.notes || []).forEach(function (n) { html("li", null, notes, n); });
    this.listen();
    this.draw();
  }

  // Visible points as [series, index, point] within the zoom range.
  Chart.prototype.visible = function () {
    var out = [], v = this.view, hidden = this.hidden;
    this.data.series.forEach(function (s, si) {
      if (hidden[si]) { return; }
      s.points.forEach(function (p, pi) {
        if (finite(p.x) && finite(p.y) && (!v || (p.x >= v[0] && p.x <= v[1]))) {
          out.push([si, pi, p]);
        }
      });
    });
    return out;
  };

  Chart.prototype.draw = function () {
    var svg = this.svg, data = this.data, self = this;
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var pts = this.visible();
    var xs = [], ys = [];
    pts.forEach(function (t) {
      var p = t[2];
      xs.push(p.x); ys.push(p.y);
      if (finite(p.lo)) { ys.push(p.lo); }
      if (finite(p.hi)) { ys.push(p.hi); }
    });
    var x0 = this.view ? this.view[0] : Math.min.apply(null, xs);
    var x1 = this.view ? this.view[1] : Math.max.apply(null, xs);
    var y0 = Math.min(0, Math.min.apply(null, ys)), y1 = Math.max.apply(null, ys);
    if (!pts.length) { x0 = 0; x1 = 1; y0 = 0; y1 = 1; }
    if (x1 <= x0) { x0 -= 1; x1 += 1; }
    if (y1 <= y0) { y1 = y0 + 1; }
    y1 += (y1 - y0) * 0.05;
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
    this.sx = sx; this.sy = sy; this.x0 = x0; this.x1 = x1;
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "#fff", stroke: "#999" }, svg);
    ticks(x0, x1, 8).forEach(function (v) {
      el("line", { x1: sx(v), x2: sx(v), y1: T, y2: H - B, stroke: "#eee" }, svg);
      el("text", { x: sx(v), y: H - B + 16, "text-anchor": "middle", "font-size": 12 }, svg).textContent = label(v);
    });
    ticks(y0, y1, 6).forEach(function (v) {
      el("line", { x1: L, x2: W - R, y1: sy(v), y2: sy(v), stroke: "#eee" }, svg);
      el("text", { x: L - 6, y: sy(v) + 4, "text-anchor": "end", "font-size": 12 }, svg).textContent = label(v);
    });
    el("text", { x: (L + W - R) / 2, y: H - 10, "text-anchor": "middle", "font-size": 13 }, svg).textContent = data.x_label;
    el("text", { x: 16, y: (T + H - B) / 2, "text-anchor": "middle", "font-size": 13,
      transform: "rotate(-90 16 " + (T + H - B) / 2 + ")" }, svg).textContent = data.y_label;
    this.marks = [];
    data.series.forEach(function (s, si) {
      if (self.hidden[si]) { return; }
      var c = COLORS[si % COLORS.length];
      var vis = pts.filter(function (t) { return t[0] === si; }).map(function (t) { return t[2]; });
      var band = vis.filter(function (p) { return finite(p.lo) && finite(p.hi); });
      if (band.length > 1) {
        var up = band.map(function (p) { return sx(p.x) + "," + sy(p.hi); });
        var down = band.slice().reverse().map(function (p) { return sx(p.x) + "," + sy(p.lo); });
        el("polygon", { points: up.concat(down).join(" "), fill: c, "fill-opacity": 0.15, stroke: "none" }, svg);
      }
      el("polyline", { points: vis.map(function (p) { return sx(p.x) + "," + sy(p.y); }).join(" "),
        fill: "none", stroke: c, "stroke-width": 2, "stroke-dasharray": s.dashed ? "6 4" : "none" }, svg);
      vis.forEach(function (p) {
        if (finite(p.lo) && finite(p.hi)) {
          el("line", { x1: sx(p.x), x2: sx(p.x), y1: sy(p.lo), y2: sy(p.hi), stroke: c }, svg);
        }
      });
    });
    pts.forEach(function (t) {
      var p = t[2], c = p.warn ? "#d62728" : COLORS[t[0] % COLORS.length];
      var m = el("circle", { cx: sx(p.x), cy: sy(p.y), r: 3.5, fill: c, stroke: "#fff" }, svg);
      self.marks.push([t[0], t[1], p, m]);
    });
    this.band = el("rect", { x: 0, y: T, width: 0, height: H - T - B, fill: "#1f77b4", "fill-opacity": 0.12, visibility: "hidden" }, svg);
  };

  // From a mouse event to the chart's own coordinates.
  Chart.prototype.at = function (ev) {
    var r = this.svg.getBoundingClientRect();
    return [(ev.clientX - r.left) / r.width * W, (ev.clientY - r.top) / r.height * H];
  };

  Chart.prototype.hover = function (ev) {
    var q = this.at(ev), best = null, bd = Infinity, series = this.data.series;
    this.marks.forEach(function (m) {
      var dx = m[3].cx.baseVal.value - q[0], dy = m[3].cy.baseVal.value - q[1];
      // A reference (dashed: exact MVA, a bound) drawn on top of a
      // simulated point yields to it: the simulated value, with its
      // interval, is what a hover over the two shows.
      var d = dx * dx + dy * dy / 4 + (series[m[0]].dashed ? 36 : 0);
      if (d < bd) { bd = d; best = m; }
    });
    if (this.lit) { this.lit.setAttribute("r", 3.5); }
    if (!best || bd > 60 * 60) { this.tip.style.visibility = "hidden"; this.lit = null; return; }
    best[3].setAttribute("r", 6);
    this.lit = best[3];
    var name = this.data.series[best[0]].name;
    this.tip.textContent = (name ? name + ": " : "") + best[2].text;
    var r = this.svg.getBoundingClientRect(), box = this.box.getBoundingClientRect();
    this.tip.style.left = (best[3].cx.baseVal.value / W * r.width + r.left - box.left + 10) + "px";
    this.tip.style.top = (best[3].cy.baseVal.value / H * r.height + r.top - box.top - 30) + "px";
    this.tip.style.visibility = "visible";
  };

  Chart.prototype.listen = function () {
    var self = this, start = null;
    this.svg.addEventListener("mousedown", function (ev) { start = self.at(ev)[0]; ev.preventDefault(); });
    this.svg.addEventListener("mousemove", function (ev) {
      self.hover(ev);
      if (start !== null) {
        var x = self.at(ev)[0];
        self.band.setAttribute("x", Math.min(start, x));
        self.band.setAttribute("width", Math.abs(x - start));
        self.band.setAttribute("visibility", "visible");
      }
    });
    this.svg.addEventListener("mouseup", function (ev) {
      var x = self.at(ev)[0];
      if (start !== null && Math.abs(x - start) > 8) {
        var inv = function (px) { return self.x0 + (px - L) / (W - L - R) * (self.x1 - self.x0); };
        self.view = [inv(Math.min(start, x)), inv(Math.max(start, x))];
        self.draw();
      }
      start = null;
      self.band.setAttribute("visibility", "hidden");
    });
    this.svg.addEventListener("mouseleave", function () {
      self.tip.style.visibility = "hidden";
      start = null;
    });
    this.svg.addEventListener("dblclick", function () { self.view = null; self.draw(); });
  };

  function init() {
    var charts = [];
    var blocks = document.querySelectorAll("script.qsim-plot");
    for (var i = 0; i < blocks.length; i++) {
      var data = JSON.parse(blocks[i].textContent);
      var figure = blocks[i].parentNode;
      var still = figure.querySelector("svg");
      if (still) { still.style.display = "none"; }
      charts.push(new Chart(figure, data));
    }
    window.qsimCharts = charts;
    var m = /#hover=(\d+),(\d+),(\d+)$/.exec(location.hash);
    if (m && charts[+m[1]]) {
      var c = charts[+m[1]];
      c.marks.forEach(function (k) {
        if (k[0] === +m[2] && k[1] === +m[3]) {
          var r = c.svg.getBoundingClientRect();
          c.svg.dispatchEvent(new MouseEvent("mousemove", {
            bubbles: true,
            clientX: r.left + k[3].cx.baseVal.value / W * r.width,
            clientY: r.top + k[3].cy.baseVal.value / H * r.height
          }));
        }
      });
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
