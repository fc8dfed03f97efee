// Draws the report's charts with uPlot from the JSON in #chart-data (see
// htmlcharts.go for its shape). When every chart has drawn, the root
// element's data-charts says "drawn N"; on any error it says "error"
// and data-chart-error says why: the browser test reads both.
(function () {
  "use strict";
  var root = document.documentElement;
  var status = document.getElementById("chart-status");
  var errors = [];
  function fail(msg) {
    errors.push(msg);
    root.setAttribute("data-charts", "error");
    root.setAttribute("data-chart-error", errors.join("; "));
    status.textContent = "A chart failed to draw (" + msg + "); every number is in the tables.";
  }
  window.addEventListener("error", function (e) { fail(String(e.message)); });

  var data;
  try {
    data = JSON.parse(document.getElementById("chart-data").textContent);
  } catch (e) {
    fail("chart data: " + e.message);
    return;
  }
  var specs = data.charts || [];
  if (typeof uPlot !== "function") {
    fail("uPlot did not load");
    return;
  }
  var drawn = 0;
  function done(el) {
    if (el.getAttribute("data-drawn")) return;
    el.setAttribute("data-drawn", "1");
    drawn++;
    if (drawn === specs.length && errors.length === 0) {
      root.setAttribute("data-charts", "drawn " + drawn);
      status.textContent = drawn + " charts; hover for exact values, click a legend entry to hide it. Every number is also in a table.";
    }
  }
  if (specs.length === 0) {
    root.setAttribute("data-charts", "drawn 0");
    status.textContent = "No charts for these records; the tables hold every number.";
  }

  var px = window.devicePixelRatio || 1;

  function fmtMs(v) {
    if (v < 1) return (v * 1000).toFixed(0) + " µs";
    if (v < 10) return v.toFixed(2) + " ms";
    if (v < 100) return v.toFixed(1) + " ms";
    if (v < 1000) return v.toFixed(0) + " ms";
    return (v / 1000).toFixed(2) + " s";
  }
  function fmt(kind, v) {
    if (v == null || isNaN(v)) return "–";
    switch (kind) {
      case "count": return Math.round(v).toLocaleString("en-US");
      case "ratio": return v.toFixed(2);
      case "us": return (v < 10 ? v.toFixed(1) : v.toFixed(0)) + " µs";
      case "ms": return fmtMs(v);
      case "int": return String(Math.round(v));
      case "nines":
        var p = 100 * (1 - Math.pow(10, -v));
        return p.toFixed(Math.max(0, Math.ceil(v - 1e-9) - 1)) + "%";
    }
    return String(v);
  }
  function fmtAxis(kind, v) {
    if (kind === "count") return v >= 1000 ? Math.round(v / 1000).toLocaleString("en-US") + "k" : String(v);
    if (kind === "ms") return v >= 1000 ? v / 1000 + " s" : v < 1 ? +(v * 1000).toPrecision(3) + " µs" : +v.toPrecision(3) + " ms";
    if (kind === "us") return String(v);
    return String(+v.toPrecision(4));
  }
  // Long topology names wrap at a hyphen near their middle.
  function wrap(name) {
    if (name.length <= 12) return name;
    var mid = name.length / 2, best = -1;
    for (var i = 0; i < name.length; i++) {
      if (name[i] === "-" && (best < 0 || Math.abs(i - mid) < Math.abs(best - mid))) best = i;
    }
    return best < 0 ? name : name.slice(0, best + 1) + "\n" + name.slice(best + 1);
  }
  function width(el) { return Math.max(320, Math.min(el.clientWidth || 800, 1100)); }

  function clip(u, ctx) {
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
  }
  function marker(ctx, style, x, y, color) {
    var r = 5 * px;
    ctx.beginPath();
    if (style === "diamond") {
      ctx.moveTo(x, y - r * 1.3); ctx.lineTo(x + r * 1.3, y); ctx.lineTo(x, y + r * 1.3); ctx.lineTo(x - r * 1.3, y); ctx.closePath();
      ctx.fillStyle = "#fff"; ctx.fill(); ctx.lineWidth = 2 * px; ctx.strokeStyle = color; ctx.stroke();
      return;
    }
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fillStyle = style === "ring" ? "#fff" : color;
    ctx.fill();
    ctx.lineWidth = 2 * px; ctx.strokeStyle = color; ctx.stroke();
  }

  // A categorical chart: categories along x, each with slots side by
  // side; uPlot draws the axes, grid, legend and cursor, the draw hook
  // the markers, whiskers and bars.
  function catChart(spec, el) {
    var n = spec.cats.length, K = Math.max(1, spec.slots), W = 0.8;
    function pos(i, k) { return i - W / 2 + (k + 0.5) * W / K; }
    var xs = [];
    for (var i = 0; i < n; i++) for (var k = 0; k < K; k++) xs.push(pos(i, k));
    var data = [xs];
    var ymax = 0;
    var series = [{ label: spec.xlabel, value: function (u, v, si, idx) { return idx == null ? "" : spec.cats[Math.floor(idx / K)]; } }];
    spec.series.forEach(function (s) {
      var arr = new Array(n * K).fill(null);
      for (var i = 0; i < n; i++) {
        if (s.y[i] == null) continue;
        var base = s.base && s.base[i] != null ? s.base[i] : 0;
        arr[i * K + s.slot] = s.y[i] - base;
        ymax = Math.max(ymax, s.y[i], s.hi && s.hi[i] != null ? s.hi[i] : 0);
      }
      data.push(arr);
      series.push({
        // The legend's swatch: filled for dots and bars, hollow for rings
        // and diamonds, as on the chart.
        label: s.label, stroke: s.color, fill: s.style === "bar" || s.style === "dot" ? s.color : "#fff", width: 2,
        paths: function () { return null; }, points: { show: false },
        value: function (u, v, si, idx) {
          if (v == null) return "–";
          var i = Math.floor(idx / K), out = fmt(spec.yfmt, v);
          if (s.lo && s.lo[i] != null) out += " (" + fmt(spec.yfmt, s.lo[i]) + "–" + fmt(spec.yfmt, s.hi[i]) + ")";
          return out;
        }
      });
    });
    if (spec.ref != null) ymax = Math.max(ymax, spec.ref);
    // Wide intervals (few runs) would flatten every marker: the axis
    // stops at 2.5 times the largest marker and longer whiskers run off
    // the top.
    var centers = 0;
    spec.series.forEach(function (s) { s.y.forEach(function (v) { if (v != null) centers = Math.max(centers, v); }); });
    ymax = Math.min(ymax, 2.5 * centers);
    var opts = {
      title: spec.title, width: width(el), height: 320, legend: { live: true },
      cursor: { points: { show: false }, drag: { x: false, y: false } },
      scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: [0, ymax * 1.1 || 1] } },
      axes: [
        { label: spec.xlabel, size: 56, grid: { show: false },
          splits: function () { return spec.cats.map(function (_, i) { return i; }); },
          values: function (u, sp) { return sp.map(function (i) { return wrap(spec.cats[i] || ""); }); } },
        { label: spec.ylabel, size: 60, values: function (u, sp) { return sp.map(function (v) { return fmtAxis(spec.yfmt, v); }); } }
      ],
      series: series,
      hooks: { draw: [function (u) {
        var ctx = u.ctx, marks = 0;
        var slotPx = (u.valToPos(1, "x", true) - u.valToPos(0, "x", true)) * W / K;
        ctx.save();
        clip(u, ctx);
        if (spec.ref != null) {
          var yr = u.valToPos(spec.ref, "y", true);
          ctx.setLineDash([5 * px, 4 * px]); ctx.lineWidth = px; ctx.strokeStyle = "#333";
          ctx.beginPath(); ctx.moveTo(u.bbox.left, yr); ctx.lineTo(u.bbox.left + u.bbox.width, yr); ctx.stroke();
          ctx.setLineDash([]);
        }
        spec.series.forEach(function (s, si) {
          if (!u.series[si + 1].show) return;
          for (var i = 0; i < n; i++) {
            if (s.y[i] == null) continue;
            var x = u.valToPos(pos(i, s.slot), "x", true), y = u.valToPos(s.y[i], "y", true);
            marks++;
            if (s.style === "bar") {
              var y0 = u.valToPos(s.base && s.base[i] != null ? s.base[i] : 0, "y", true), w = slotPx * 0.85;
              ctx.fillStyle = s.color;
              ctx.fillRect(x - w / 2, y, w, y0 - y);
              continue;
            }
            if (s.lo && s.lo[i] != null) {
              var lo = u.valToPos(s.lo[i], "y", true), hi = u.valToPos(s.hi[i], "y", true), c = 4 * px;
              ctx.strokeStyle = s.color; ctx.lineWidth = 1.5 * px;
              ctx.beginPath();
              ctx.moveTo(x, lo); ctx.lineTo(x, hi);
              ctx.moveTo(x - c, lo); ctx.lineTo(x + c, lo);
              ctx.moveTo(x - c, hi); ctx.lineTo(x + c, hi);
              ctx.stroke();
            }
            marker(ctx, s.style, x, y, s.color);
          }
        });
        ctx.restore();
        finish(u, el, spec, marks);
      }] }
    };
    return new uPlot(opts, data, el);
  }

  // An xy chart: numeric x shared by every series, lines, log axes where
  // asked; flagged points ringed in black.
  function xyChart(spec, el) {
    var data = [spec.x].concat(spec.series.map(function (s) { return s.y; }));
    var ticks = spec.xticks || null;
    var xs = {
      label: spec.xlabel, size: 48,
      values: function (u, sp) { return sp.map(function (v) { return ticks ? labelOf(v) : fmt(spec.xfmt, v); }); }
    };
    function labelOf(v) {
      // A log scale hands back its splits with rounding error.
      for (var i = 0; i < ticks.length; i++) if (Math.abs(ticks[i].v - v) <= 1e-6 * Math.max(1, Math.abs(ticks[i].v))) return ticks[i].l;
      return "";
    }
    if (ticks) {
      // uPlot labels only powers of ten on a log axis unless told.
      xs.filter = function (u, sp) { return sp; };
      xs.splits = function (u) {
        return ticks.map(function (t) { return t.v; }).filter(function (v) { return v >= u.scales.x.min - 1e-9 && v <= u.scales.x.max + 1e-9; });
      };
    }
    var xmin = Math.min.apply(null, spec.x), xmax = Math.max.apply(null, spec.x);
    var xscale = { time: false };
    if (spec.xlog) { xscale.distr = 3; xscale.log = 10; xscale.range = [xmin / 1.3, xmax * 1.3]; }
    else if (xmin === xmax) { xscale.range = [xmin - 1, xmax + 1]; }
    else { xscale.range = [xmin, xmax]; }
    if (spec.xfmt === "int" && !spec.xlog && xmin !== xmax) xscale.range = [xmin - 0.3, xmax + 0.3];
    var ys = { label: spec.ylabel, size: 64, values: function (u, sp) { return sp.map(function (v) { return v == null ? "" : fmtAxis(spec.yfmt, v); }); } };
    if (spec.ylog) {
      // Powers of ten only: uPlot's 2..9 in between crowd the grid.
      ys.filter = function (u, sp) { return sp; };
      ys.splits = function (u) {
        var out = [], lo = u.scales.y.min, hi = u.scales.y.max;
        for (var p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++) {
          var v = Math.pow(10, p);
          if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
        }
        return out;
      };
    }
    var yscale = spec.ylog ? { distr: 3, log: 10 } : { range: function (u, lo, hi) { return [0, (hi || 1) * 1.1]; } };
    var opts = {
      title: spec.title, width: width(el), height: 320, legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: xscale, y: yscale },
      axes: [xs, ys],
      series: [{ label: spec.xlabel, value: function (u, v) { return v == null ? "" : fmt(spec.xfmt, v); } }].concat(spec.series.map(function (s) {
        return {
          label: s.label, stroke: s.color, width: 2 * (s.style === "dash" ? 0.8 : 1), dash: s.style === "dash" ? [8, 5] : undefined,
          spanGaps: true, points: { show: spec.x.length <= 40, size: 6 },
          value: function (u, v) { return fmt(spec.yfmt, v); }
        };
      })),
      hooks: { draw: [function (u) {
        var ctx = u.ctx, marks = 0;
        ctx.save();
        clip(u, ctx);
        spec.series.forEach(function (s, si) {
          for (var i = 0; i < s.y.length; i++) if (s.y[i] != null) marks++;
          if (!s.mark || !u.series[si + 1].show) return;
          s.mark.forEach(function (i) {
            if (s.y[i] == null) return;
            var x = u.valToPos(spec.x[i], "x", true), y = u.valToPos(s.y[i], "y", true);
            ctx.beginPath(); ctx.arc(x, y, 8 * px, 0, 2 * Math.PI);
            ctx.lineWidth = 2 * px; ctx.strokeStyle = "#000"; ctx.stroke();
          });
        });
        ctx.restore();
        finish(u, el, spec, marks);
      }] }
    };
    return new uPlot(opts, data, el);
  }

  function finish(u, el, spec, marks) {
    if (marks === 0) {
      fail(spec.id + " (" + spec.title + ") has nothing to draw");
      return;
    }
    done(el);
  }

  var plots = [];
  specs.forEach(function (spec) {
    var el = document.getElementById(spec.id);
    if (!el) {
      fail("no element for " + spec.id);
      return;
    }
    try {
      plots.push({ el: el, u: spec.kind === "cat" ? catChart(spec, el) : xyChart(spec, el) });
    } catch (e) {
      fail(spec.id + ": " + e.message);
    }
  });

  function resize(w) {
    plots.forEach(function (p) { p.u.setSize({ width: w || width(p.el), height: 320 }); });
  }
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { resize(); }, 150);
  });
  // A printed page is about 680 CSS pixels wide.
  window.addEventListener("beforeprint", function () { resize(680); });
  window.addEventListener("afterprint", function () { resize(); });
})();
