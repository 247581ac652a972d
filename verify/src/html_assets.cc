// report.html's style and script. The script draws a case's section when it is opened (or named by
// the URL's #fragment): tables from the case's JSON and charts as inline SVG, with no library.
#include "html_report.h"

namespace parity::verify {

const char* const kHtmlStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f1f3f5; } table.sortable th { cursor: pointer; user-select: none; }
th.asc::after { content: " \25B2"; } th.desc::after { content: " \25BC"; }
.st { padding: 1px 6px; border-radius: 3px; }
.st-pass, .ok { background: #d3f9d8; } .st-fail, .st-error, .st-crashed, .st-timeout, .bad { background: #ffe3e3; }
.st-xfail, .st-capture_failed, .st-skipped, .part { background: #fff3bf; } .st-xpass { background: #d0ebff; }
.error { color: #a61e1e; white-space: pre-wrap; } td.reason { max-width: 60em; font-size: 0.9em; }
.divergence { background: #fff5f5; padding: 0.5em; border-left: 4px solid #c92a2a; margin: 0.5em 0; }
details.case { border-top: 1px solid #ddd; padding: 0.3em 0; } details.case > summary { cursor: pointer; }
.chart { display: block; margin: 0.5em 0; } .chart .bar { fill: #4c6ef5; } .chart .badbar { fill: #c92a2a; }
.chart .ct { font-size: 13px; font-weight: bold; } .chart .tick, .chart .val { font-size: 10px; }
.chart .val { text-anchor: middle; } .chart .axis { stroke: #888; } .chart .line { fill: none; stroke: #4c6ef5; }
.chart .pt { fill: #2b8a3e; } .chart .badpt { fill: #c92a2a; }
.hidden { display: none; }
)css";

const char* const kHtmlScript = R"js(
(function () {
  var CASES = JSON.parse(document.getElementById('case-data').textContent);
  var META = JSON.parse(document.getElementById('page-meta').textContent);
  var ENT = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'};
  function esc(s) { return String(s == null ? '' : s).replace(/[&<>"]/g, function (c) { return ENT[c]; }); }
  function num(v) { return typeof v === 'number' ? v.toExponential(2) : (v == null ? '-' : String(v)); }
  function short(v) { return v >= 1000 || (v > 0 && v < 0.01) ? v.toExponential(1) : String(Math.round(v * 100) / 100); }
  function verdict(v) { return v ? '<td class="' + (v[1] ? 'ok' : 'bad') + '">' + esc(num(v[0])) + '</td>' : '<td>-</td>'; }
  function svgOpen(title, w, h) {
    return '<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="' + w + '" height="' + h + '" role="img">' +
      '<title>' + esc(title) + '</title><text x="50" y="16" class="ct">' + esc(title) + '</text>';
  }
  // Bars; heights on a log scale of (1 + count) for counts (1 and 10^6 both show), linear otherwise.
  function bars(title, labels, values, linear, classes) {
    var W = 760, H = 180, L = 50, T = 26, n = values.length, bw = (W - L - 10) / Math.max(n, 1);
    function f(v) { return linear ? v : Math.log10(1 + v); }
    var max = Math.max.apply(null, values.map(f).concat([1e-12]));
    var s = svgOpen(title, W, H + T + 70);
    for (var i = 0; i < n; i++) {
      var h = f(values[i]) / max * H, x = L + i * bw, y = T + H - h, cx = x + bw / 2;
      s += '<rect x="' + (x + 2) + '" y="' + y + '" width="' + Math.max(bw - 4, 1) + '" height="' + h + '" class="' +
        ((classes && classes[i]) || 'bar') + '"><title>' + esc(labels[i]) + ': ' + values[i] + '</title></rect>';
      if (values[i] > 0) s += '<text x="' + cx + '" y="' + (y - 3) + '" class="val">' + esc(short(values[i])) + '</text>';
      s += '<text x="' + cx + '" y="' + (T + H + 12) + '" class="tick" transform="rotate(30 ' + cx + ' ' + (T + H + 12) +
        ')">' + esc(labels[i]) + '</text>';
    }
    return s + '<line x1="' + L + '" y1="' + (T + H) + '" x2="' + (W - 10) + '" y2="' + (T + H) + '" class="axis"/></svg>';
  }
  // The error of every compared value along the graph (topological order), log scale; red beyond tolerance.
  function path(title, values) {
    var W = 760, H = 160, L = 50, T = 26, n = values.length, lo = -12, hi = 3;
    function y(v) { var e = typeof v === 'number' ? Math.max(v, 1e-12) : 1e3; return T + (hi - Math.log10(e)) / (hi - lo) * H; }
    function x(i) { return L + (n > 1 ? i / (n - 1) : 0.5) * (W - L - 10); }
    var s = svgOpen(title, W, H + T + 20), pts = [];
    for (var i = 0; i < n; i++) pts.push(x(i).toFixed(1) + ',' + y(values[i][1]).toFixed(1));
    s += '<polyline class="line" points="' + pts.join(' ') + '"/>';
    for (var k = 0; k < n; k++)
      s += '<circle cx="' + x(k).toFixed(1) + '" cy="' + y(values[k][1]).toFixed(1) + '" r="2.5" class="' +
        (values[k][2] ? 'pt' : 'badpt') + '"><title>' + esc(values[k][0]) + ': ' + esc(num(values[k][1])) + '</title></circle>';
    [-12, -8, -4, 0].forEach(function (e) {
      s += '<text x="4" y="' + (y(Math.pow(10, e)) + 4) + '" class="tick">1e' + e + '</text>';
    });
    return s + '<line x1="' + L + '" y1="' + (T + H) + '" x2="' + (W - 10) + '" y2="' + (T + H) + '" class="axis"/></svg>';
  }
  function outputsTable(rows) {
    var h = '<table class="outputs"><thead><tr><th>input set</th><th>output</th><th>dtype</th><th>shape</th>' +
      '<th>refrt vs eager</th><th>libtorch vs eager</th><th>refrt vs libtorch</th><th>mismatches</th><th>NaN / Inf, worst elements</th></tr></thead><tbody>';
    rows.forEach(function (r) {
      h += '<tr><td>' + esc(r[0]) + '</td><td>' + esc(r[1]) + '</td><td>' + esc(r[2]) + '</td><td>' + esc(r[3]) + '</td>' +
        verdict(r[4]) + verdict(r[5]) + verdict(r[6]) + '<td>' + r[7] + ' / ' + r[8] + (r[9] ? ' (' + r[9] + ' ties)' : '') +
        '</td><td>' + esc(r[10]) + '</td></tr>';
    });
    return h + '</tbody></table>';
  }
  function divergence(v) {
    return '<div class="divergence"><b>First divergence</b> in ' + esc(v.input_set) + ': FX node <code>' + esc(v.fx_node) +
      '</code> (' + esc(v.op) + ') &rarr; ONNX node <code>' + esc(v.onnx_node) + '</code> (' + esc(v.onnx_op) +
      '), max abs error ' + esc(num(v.max_abs_error)) + (v.detail ? '<br>' + esc(v.detail) : '') +
      '<br>source: <code>' + esc(v.source) + '</code></div>';
  }
  function render(d) {
    var body = d.querySelector('.body');
    if (body.getAttribute('data-drawn')) return;
    var c = CASES[+d.getAttribute('data-i')], h = '';
    if (c.error) h += '<p class="error"><b>' + esc(c.stage) + ':</b> ' + esc(c.error) + '</p>';
    if (c.expected) h += '<p>Known failure: ' + esc(c.expected) + '</p>';
    if (c.official_error) h += '<p>Official exporter: ' + esc(JSON.stringify(c.official_error)) + '</p>';
    if (c.divergence) h += divergence(c.divergence);
    if (c.outputs) h += outputsTable(c.outputs);
    if (c.histogram) h += bars('Output error histogram (|refrt - eager|, elements, all sets)', META.bins, c.histogram, false,
      META.bins.map(function (_, i) { return i === META.bins.length - 1 ? 'badbar' : 'bar'; }));
    if (c.path) h += path('Divergence path, ' + c.path.set + ' (max abs error per value; red: beyond tolerance)', c.path.values);
    if (c.fresh) h += '<p>Fresh dynamic dims (refrt vs libtorch): ' + c.fresh.map(function (f) {
      return '<span class="' + (f[2] ? 'ok' : 'bad') + '">' + esc(f[0]) + ' ' + esc(num(f[1])) + '</span>';
    }).join(' ') + '</p>';
    if (c.profile) h += bars('refrt time per op type (ms), ' + c.profile.set, c.profile.ops.map(function (o) { return o[0]; }),
      c.profile.ops.map(function (o) { return o[1]; }), true);
    body.innerHTML = h || '<p>Nothing recorded.</p>';
    body.setAttribute('data-drawn', '1');
  }
  document.querySelectorAll('details.case').forEach(function (d) {
    d.addEventListener('toggle', function () { if (d.open) render(d); });
  });
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1)), d = id && document.getElementById(id);
    if (d && d.tagName === 'DETAILS') { d.open = true; render(d); d.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openHash);
  openHash();
  // The filter box: rows of the failure and case tables and the detail sections whose text holds it.
  var box = document.getElementById('filter'), shown = document.getElementById('shown');
  function applyFilter() {
    var q = box.value.trim().toLowerCase(), n = 0, total = 0;
    document.querySelectorAll('table.filtered tbody tr.row, details.case').forEach(function (el) {
      var text = (el.tagName === 'DETAILS' ? el.querySelector('summary') : el).textContent.toLowerCase();
      var hit = !q || text.indexOf(q) >= 0;
      el.classList.toggle('hidden', !hit);
      if (el.parentNode.parentNode.id === 'summary') { total++; if (hit) n++; }
    });
    shown.textContent = q ? n + ' of ' + total + ' cases' : '';
  }
  box.addEventListener('input', applyFilter);
  applyFilter();
  // Sorting: a click on a column of a sortable table sorts by data-sort numbers, else by text.
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, col) {
      th.addEventListener('click', function () {
        var asc = !th.classList.contains('asc');
        table.querySelectorAll('th').forEach(function (o) { o.classList.remove('asc', 'desc'); });
        th.classList.add(asc ? 'asc' : 'desc');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col];
          var nx = parseFloat(x.getAttribute('data-sort')), ny = parseFloat(y.getAttribute('data-sort'));
          var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.textContent.localeCompare(y.textContent);
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
)js";

}  // namespace parity::verify
