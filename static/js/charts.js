/* designlab: draws the charts of a step page and of the report card with Chart.js.
   Each <canvas data-chart="ID"> reads its spec from <script type="application/json" id="ID">
   (written by app/web/charts.py): a line chart over time with fault windows shaded and markers,
   or a horizontal bar chart. Runs on page load and on every htmx swap. The text summary beside
   each chart says the same in words, so nothing depends on this file. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  var COLOURS = ["#2454c6", "#c2570c", "#5b6475", "#1b7a43"];
  var DASHES = [[], [6, 4], [2, 3], [10, 3]];
  var FAULT_FILL = "rgba(179, 38, 30, 0.12)";
  var FAULT_INK = "#8a1c15";
  var MARK_INK = "#1b7a43";
  var MARK_LABEL_ROOM = 22;  /* px kept above a bar chart's plot for its markers' labels */
  var LABEL_ROWS = 3;        /* rows of fault labels at the top of a line chart's plot */
  var LABEL_GAP = 8;         /* px kept between two fault labels in a row */

  var overlays = {
    id: "designlabOverlays",
    beforeDatasetsDraw: function (chart, _args, opts) {
      var area = chart.chartArea;
      var x = chart.scales.x;
      var ctx = chart.ctx;
      ctx.save();
      ctx.font = "12px system-ui, sans-serif";
      /* Each fault label takes the first row where it clears the labels already there; a
         label equal to one already shown in its row and reached by it is not repeated (a
         run of poison stalls reads once). Beyond LABEL_ROWS the summary names them. */
      var rowEnds = [];
      var rowLabels = [];
      (opts.windows || []).forEach(function (w) {
        var x1 = Math.max(x.getPixelForValue(w.start), area.left);
        var x2 = Math.min(x.getPixelForValue(w.end), area.right);
        ctx.fillStyle = FAULT_FILL;
        ctx.fillRect(x1, area.top, Math.max(x2 - x1, 1), area.bottom - area.top);
        var left = x1 + 4;
        var width = ctx.measureText(w.label).width;
        if (left + width > area.right) { left = Math.max(area.left, area.right - width - 2); }
        for (var row = 0; row < LABEL_ROWS; row++) {
          if (rowLabels[row] === w.label && rowEnds[row] + LABEL_GAP >= x1) {
            rowEnds[row] = Math.max(rowEnds[row], x2);
            return;
          }
          if (rowEnds[row] === undefined || rowEnds[row] + LABEL_GAP <= left) {
            ctx.fillStyle = FAULT_INK;
            ctx.fillText(w.label, left, area.top + 14 * (row + 1));
            rowEnds[row] = Math.max(left + width, x2);
            rowLabels[row] = w.label;
            return;
          }
        }
      });
      var labelRows = rowEnds.length;
      (opts.markers || []).forEach(function (m) {
        var px = x.getPixelForValue(m.x);
        if (px < area.left || px > area.right) { return; }
        ctx.strokeStyle = MARK_INK;
        ctx.setLineDash([5, 4]);
        ctx.beginPath();
        ctx.moveTo(px, opts.labelsAbove ? area.top - MARK_LABEL_ROOM + 4 : area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
        ctx.fillStyle = MARK_INK;
        var width = ctx.measureText(m.label).width;
        var tx = px + 4 + width > chart.width ? px - 4 - width : px + 4;
        /* Bars fill the plot from its top edge: their marker labels go in the room kept above
           it, so a label never lies on a bar. Lines leave the top of the plot freer. */
        var ty = opts.labelsAbove ? area.top - 6 : area.top + 14 * (labelRows + 1) + 2;
        ctx.fillText(m.label, Math.max(tx, 0), ty);
      });
      ctx.restore();
    }
  };

  function axis(title) {
    return { title: { display: true, text: title }, beginAtZero: true };
  }

  function lineConfig(spec) {
    var datasets = spec.series.map(function (s, i) {
      return {
        label: s.label,
        data: spec.t.map(function (t, j) { return { x: t, y: s.data[j] }; }),
        borderColor: COLOURS[i % COLOURS.length],
        backgroundColor: COLOURS[i % COLOURS.length],
        borderDash: DASHES[i % DASHES.length],
        borderWidth: 2,
        pointRadius: 0
      };
    });
    var x = axis(spec.x.label);
    x.type = "linear";
    x.max = spec.t.length ? spec.t[spec.t.length - 1] : undefined;
    return {
      type: "line",
      data: { datasets: datasets },
      options: {
        animation: false,
        parsing: false,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: { x: x, y: axis(spec.y.label) },
        plugins: {
          legend: { labels: { usePointStyle: true, pointStyle: "line", pointStyleWidth: 28 } },
          designlabOverlays: { windows: spec.windows, markers: spec.markers }
        }
      },
      plugins: [overlays]
    };
  }

  function dollars(value) {
    return "$" + Number(value).toLocaleString("en-US", { maximumFractionDigits: 0 });
  }

  /* An axis tick in short form ($0, $500, $20k, $1.2M): level ticks that fit the axis width
     instead of long rotated ones whose last is cut at the edge. */
  function shortDollars(value) {
    var v = Number(value);
    if (Math.abs(v) >= 1e6) { return "$" + +(v / 1e6).toFixed(1) + "M"; }
    if (Math.abs(v) >= 1e3) { return "$" + +(v / 1e3).toFixed(1) + "k"; }
    return "$" + v;
  }

  function barConfig(spec) {
    var x = axis(spec.x.label);
    var largest = Math.max.apply(null, spec.series[0].data.concat([0]));
    var budget = (spec.markers || []).reduce(function (m, k) { return Math.max(m, k.x); }, 0);
    x.ticks = { callback: shortDollars, maxRotation: 0, autoSkipPadding: 12 };
    x.suggestedMax = Math.max(largest, budget) * 1.05;
    return {
      type: "bar",
      data: {
        labels: spec.labels,
        datasets: spec.series.map(function (s, i) {
          return { label: s.label, data: s.data, backgroundColor: COLOURS[i % COLOURS.length] };
        })
      },
      options: {
        animation: false,
        indexAxis: "y",
        maintainAspectRatio: false,
        layout: { padding: { top: spec.markers && spec.markers.length ? MARK_LABEL_ROOM : 0, right: 12 } },
        // Every component keeps its label (Chart.js would skip some where they crowd).
        scales: { x: x, y: { ticks: { autoSkip: false } } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: function (item) { return dollars(item.raw) + " per month"; } } },
          designlabOverlays: { windows: spec.windows, markers: spec.markers, labelsAbove: true }
        }
      },
      plugins: [overlays]
    };
  }

  function draw(root) {
    if (typeof window.Chart !== "function") { return; }
    var canvases = (root || document).querySelectorAll("canvas[data-chart]");
    Array.prototype.forEach.call(canvases, function (canvas) {
      if (canvas.dataset.drawn) { return; }
      var source = document.getElementById(canvas.dataset.chart);
      if (!source) { return; }
      var spec = JSON.parse(source.textContent);
      canvas.dataset.drawn = "true";
      new window.Chart(canvas, spec.type === "bar" ? barConfig(spec) : lineConfig(spec));
    });
  }

  function showRequestError(event) {
    var box = document.getElementById("request-error");
    if (!box) { return; }
    var status = event.detail && event.detail.xhr ? event.detail.xhr.status : 0;
    box.textContent = status
      ? "The server could not answer (HTTP " + status + "). Your decisions are still in the form; try again."
      : "The server could not be reached. Your decisions are still in the form; try again.";
    box.hidden = false;
  }

  function hideRequestError() {
    var box = document.getElementById("request-error");
    if (box) { box.hidden = true; }
  }

  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:load", function (event) { draw(event.detail.elt); });
  document.addEventListener("htmx:afterSettle", function () { draw(document); });
  document.addEventListener("htmx:responseError", showRequestError);
  document.addEventListener("htmx:sendError", showRequestError);
  document.addEventListener("htmx:beforeRequest", hideRequestError);
})();
