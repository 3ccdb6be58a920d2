/**
 * The report page's script (inlined, no dependencies): draws the heap map or the timeline on one
 * canvas (spans merged per pixel, so a 1000-step sequence is one pass of rectangles, no element
 * per cell), a selection overlay on a second canvas, the step list and the selected step's
 * details; keyboard: arrows or j/k step, PageUp/PageDown 10 steps, Home/End, f the failing step,
 * z zooms the heap map to the highlighted ranges and back.
 * window.gpumvReport exposes the geometry and what was drawn (the browser tests read it).
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var steps = data.steps, n = steps.length, failing = data.failingStep;
  var css = getComputedStyle(document.documentElement);
  function v(name) { return css.getPropertyValue(name).trim(); }
  var C = { model: v('--model'), impl: v('--impl'), free: v('--free'), busy: v('--busy'), region: v('--region'), fail: v('--fail'),
    hl: v('--hl'), sel: v('--sel'), fg: v('--fg'), muted: v('--muted'), line: v('--line'), bg: v('--bg') };
  var STATES = ['resident', 'in-flight', 'evicted', 'untracked', 'open', 'closed', 'failed'];
  var SC = {};
  STATES.forEach(function (s) { SC[s] = v('--s-' + s); });
  var canvas = document.getElementById('picture');
  var overlay = document.getElementById('overlay');
  var detail = document.getElementById('detail');
  var list = document.getElementById('steps');
  var tip = document.getElementById('tip');
  var dpr = window.devicePixelRatio || 1;
  var sel = failing >= 0 && failing < n ? failing : 0;
  var geo = { kind: data.kind };
  var drawn = { kind: data.kind, steps: n, failingStep: failing, highlights: [], failingMarked: false };

  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); }
  function setup(c, w, h) {
    c.width = Math.ceil(w * dpr); c.height = Math.ceil(h * dpr);
    c.style.width = w + 'px'; c.style.height = h + 'px';
    var g = c.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0); return g;
  }
  var zoom = false, zoomWindow = null;
  (function () {
    var lo = Infinity, hi = -Infinity, extent = 1;
    data.highlights.forEach(function (h) { if (h.range) { lo = Math.min(lo, h.range[0]); hi = Math.max(hi, h.range[0] + h.range[1]); } });
    steps.forEach(function (s) { [s.modelVisual, s.implVisual].forEach(function (hv) { if (hv && hv.kind === 'heap') extent = Math.max(extent, hv.extentBytes); }); });
    if (hi <= lo) return;
    var pad = Math.max(hi - lo, extent / 400, 4);
    zoomWindow = [Math.max(0, Math.floor(lo - pad)), Math.ceil(hi + pad)];
    zoom = (hi - lo) / extent < 0.03 && zoomWindow[1] - zoomWindow[0] < extent;
  })();
  function vis(i, side) { var s = steps[i]; return s ? (side === 'model' ? s.modelVisual : s.implVisual) : undefined; }

  // ---- heap map: x offset, y step; model in the upper half of a row, implementation in the lower
  function drawHeap() {
    var extent = 1, i, k, r, sides = ['model', 'impl'];
    for (i = 0; i < n; i++) for (k = 0; k < 2; k++) {
      var hv = vis(i, sides[k]); if (!hv) continue;
      extent = Math.max(extent, hv.extentBytes);
      for (r = 0; r < hv.live.length; r++) extent = Math.max(extent, hv.live[r][0] + hv.live[r][1]);
    }
    var capacity = 1;
    for (i = 0; i < n; i++) for (k = 0; k < 2; k++) { var cv = vis(i, sides[k]); if (cv) capacity = Math.max(capacity, cv.extentBytes); }
    var left = 56, right = 12, top = 22;
    // The view: the whole map, or zoomed to the highlighted ranges (key z) when they are small.
    var v0 = 0, v1 = extent;
    if (zoom && zoomWindow) { v0 = zoomWindow[0]; v1 = zoomWindow[1]; }
    var width = Math.max(640, canvas.parentElement.clientWidth - 2);
    var rowH = n <= 24 ? 22 : n <= 60 ? 12 : n <= 200 ? 5 : 2;
    var height = top + n * rowH + 8;
    var plotW = width - left - right;
    var g = setup(canvas, width, height);
    setup(overlay, width, height);
    function x(o) { return left + ((o - v0) / (v1 - v0)) * plotW; }
    geo = { kind: 'heap', left: left, top: top, rowH: rowH, plotW: plotW, extentBytes: extent, capacityBytes: capacity, width: width, height: height, view: [v0, v1], zoomed: zoom && !!zoomWindow };
    g.font = '11px ui-monospace, monospace'; g.textBaseline = 'middle';
    // axis: the view's ends, the capacity, and past it the out-of-bounds zone
    g.fillStyle = C.muted; g.fillText('offset ' + v0 + (geo.zoomed ? '  (zoomed to the highlighted ranges: z shows the whole heap)' : zoomWindow ? '  (z zooms to the highlighted ranges)' : ''), left, 10);
    var capLabel = v1 < capacity ? 'offset ' + v1 : 'capacity ' + capacity;
    g.fillText(capLabel, Math.min(x(Math.min(capacity, v1)), width - right) - g.measureText(capLabel).width, 10);
    g.save(); g.beginPath(); g.rect(left, 0, plotW, height); g.clip();
    if (v1 > capacity) {
      g.fillStyle = C.hl; g.globalAlpha = 0.08; g.fillRect(x(capacity), top, plotW + left - x(capacity), n * rowH); g.globalAlpha = 1;
      g.fillStyle = C.hl; g.fillText('out of bounds', x(capacity) + 4, 10);
      g.fillRect(x(capacity), top, 1, n * rowH);
    }
    function spans(ranges, y, h, style) {
      if (!ranges || ranges.length === 0) return;
      g.fillStyle = style;
      var last = -1;
      for (var j = 0; j < ranges.length; j++) {
        var a = x(ranges[j][0]), b = x(ranges[j][0] + ranges[j][1]);
        var p0 = Math.floor(a), p1 = Math.max(p0 + 2, Math.ceil(b));
        if (p1 <= last) continue;
        if (p0 < last) p0 = last;
        var w = p1 - p0;
        if (w >= 4 && rowH >= 5) w -= 1; // a 1px seam between neighbours where there is room
        g.fillRect(p0, y, w, h);
        last = p1;
      }
    }
    for (i = 0; i < n; i++) {
      var y = top + i * rowH, half = rowH / 2;
      var m = vis(i, 'model'), im = vis(i, 'impl');
      if (m && m.free) spans(m.free, y, half, C.free);
      if (im && im.free) spans(im.free, y + half, half, C.free);
      if (m) spans(m.live, y, half, C.model);
      if (im) spans(im.live, y + half, half, C.impl);
      var busy = (im && im.busy) || (m && m.busy);
      if (busy) spans(busy, y + half - Math.max(1, rowH / 6), Math.max(1, rowH / 3), C.busy);
      var regions = (im && im.regions) || (m && m.regions);
      if (regions && rowH >= 5) {
        g.strokeStyle = C.region; g.lineWidth = 1;
        for (r = 0; r < regions.length; r++) g.strokeRect(Math.floor(x(regions[r][0])) + 0.5, y + 0.5, Math.max(1, x(regions[r][0] + regions[r][1]) - x(regions[r][0]) - 1), rowH - 1);
      }
    }
    g.restore();
    // step numbers
    g.fillStyle = C.muted; g.textAlign = 'right';
    var every = Math.max(1, Math.ceil(14 / rowH));
    for (i = 0; i < n; i += every) if (failing < 0 || Math.abs(i - failing) >= every) g.fillText(String(i), left - 8, top + i * rowH + rowH / 2);
    g.textAlign = 'left';
    // the failing step: a band in the margin and a frame around the row
    if (failing >= 0 && failing < n) {
      var fy = top + failing * rowH;
      g.fillStyle = C.fail; g.fillRect(0, fy, 6, Math.max(rowH, 2));
      g.strokeStyle = C.fail; g.lineWidth = 2; g.strokeRect(left - 1, fy - 1, plotW + 2, Math.max(rowH, 2) + 2);
      g.textAlign = 'right'; g.fillText(String(failing), left - 8, fy + rowH / 2); g.textAlign = 'left';
      drawn.failingMarked = true;
    }
    // the highlighted ranges of the failing step
    drawn.highlights = [];
    data.highlights.forEach(function (h) {
      if (!h.range) return;
      var hy = top + h.step * rowH + (h.side === 'impl' ? rowH / 2 : 0);
      var hx0 = x(h.range[0]), hx1 = Math.max(hx0 + 3, x(h.range[0] + h.range[1]));
      g.fillStyle = C.hl; g.fillRect(hx0, hy, hx1 - hx0, Math.max(rowH / 2, 1));
      g.strokeStyle = C.hl; g.lineWidth = 2; g.strokeRect(hx0 - 1, hy - 1, hx1 - hx0 + 2, Math.max(rowH / 2, 1) + 2);
      drawn.highlights.push({ step: h.step, side: h.side, reason: h.reason, range: h.range, x0: hx0, x1: hx1, y0: hy, y1: hy + rowH / 2 });
    });
  }

  // ---- timeline: x step, y object; model in the upper half of a cell, implementation in the lower
  function drawTimeline() {
    var names = [], index = {}, queues = [], i, k, r, sides = ['model', 'impl'], budgetMax = 0, hasBudget = false;
    for (i = 0; i < n; i++) for (k = 0; k < 2; k++) {
      var tv = vis(i, sides[k]); if (!tv) continue;
      for (r = 0; r < tv.rows.length; r++) if (!(tv.rows[r].name in index)) { index[tv.rows[r].name] = names.length; names.push(tv.rows[r].name); }
      if (tv.budgetBytes !== undefined) { hasBudget = true; budgetMax = Math.max(budgetMax, tv.budgetBytes, tv.usageBytes || 0); }
      if (tv.queued) Object.keys(tv.queued).forEach(function (q) { if (queues.indexOf(q) < 0) queues.push(q); });
    }
    var left = 96, top = 22, rowH = 18;
    // Columns fill the pane's width (2 to 44 pixels a step; past that the timeline scrolls).
    var colW = Math.max(2, Math.min(44, Math.floor((canvas.parentElement.clientWidth - left - 18) / Math.max(n, 1))));
    var queueTop = top + names.length * rowH + 8, chartH = hasBudget ? 90 : 0, chartTop = queueTop + queues.length * 14 + 10;
    var width = Math.max(640, left + n * colW + 16), height = chartTop + chartH + 20;
    var g = setup(canvas, width, height);
    setup(overlay, width, height);
    geo = { kind: 'timeline', left: left, top: top, rowH: rowH, colW: colW, rows: names, queues: queues, queueTop: queueTop, width: width, height: height, chartTop: chartTop, chartH: chartH, budgetMax: budgetMax };
    g.font = '11px ui-monospace, monospace'; g.textBaseline = 'middle';
    g.fillStyle = C.muted;
    for (r = 0; r < names.length; r++) g.fillText(names[r], 6, top + r * rowH + rowH / 2);
    var every = Math.max(1, Math.ceil(40 / colW));
    for (i = 0; i < n; i += every) if (failing < 0 || Math.abs(i - failing) >= every) g.fillText(String(i), left + i * colW, 10);
    if (failing >= 0 && failing < n) { g.fillStyle = C.fail; g.fillText(String(failing), left + failing * colW + Math.max(colW, 2) + 3, 10); g.fillStyle = C.muted; }
    for (i = 0; i < n; i++) for (k = 0; k < 2; k++) {
      var cv = vis(i, sides[k]); if (!cv) continue;
      for (r = 0; r < cv.rows.length; r++) {
        var row = cv.rows[r], ry = top + index[row.name] * rowH + (k === 0 ? 1 : rowH / 2);
        g.fillStyle = SC[row.state] || C.muted;
        g.fillRect(left + i * colW, ry, Math.max(1, colW - (colW >= 6 ? 1 : 0)), rowH / 2 - 1);
        if (row.flagged) { g.strokeStyle = C.hl; g.lineWidth = 1.5; g.strokeRect(left + i * colW + 0.75, ry + 0.75, Math.max(1, colW - 1.5), rowH / 2 - 2.5); }
      }
    }
    // Per queue: the work submitted and not yet run after each step (the implementation's), darker the more.
    for (r = 0; r < queues.length; r++) {
      var qy = queueTop + r * 14;
      g.fillStyle = C.muted; g.fillText(queues[r], 6, qy + 6);
      for (i = 0; i < n; i++) {
        var qv = vis(i, 'impl') || vis(i, 'model'), count = qv && qv.queued ? qv.queued[queues[r]] || 0 : 0;
        if (count <= 0) continue;
        g.globalAlpha = Math.min(1, 0.25 + count / 8); g.fillStyle = SC['in-flight'];
        g.fillRect(left + i * colW, qy, Math.max(1, colW - (colW >= 6 ? 1 : 0)), 12); g.globalAlpha = 1;
        if (colW >= 14) { g.fillStyle = C.fg; g.fillText(String(count), left + i * colW + 3, qy + 6); }
      }
    }
    if (hasBudget && budgetMax > 0) {
      var yOf = function (b) { return chartTop + chartH - (b / budgetMax) * chartH; };
      g.strokeStyle = C.line; g.lineWidth = 1; g.strokeRect(left + 0.5, chartTop + 0.5, n * colW, chartH);
      g.fillStyle = C.muted; g.fillText('budget', 6, chartTop + 8); g.fillText('usage', 6, chartTop + 24);
      var line = function (side, key, style, dash) {
        g.strokeStyle = style; g.lineWidth = 1.5; g.setLineDash(dash); g.beginPath();
        var started = false;
        for (var s = 0; s < n; s++) {
          var lv = vis(s, side); if (!lv || lv[key] === undefined) continue;
          var ly = yOf(lv[key]);
          if (!started) { g.moveTo(left + s * colW, ly); started = true; } else g.lineTo(left + s * colW, ly);
          g.lineTo(left + (s + 1) * colW, ly);
        }
        g.stroke(); g.setLineDash([]);
      };
      line('impl', 'budgetBytes', C.fail, [4, 3]);
      line('model', 'usageBytes', C.model, [2, 2]);
      line('impl', 'usageBytes', C.impl, []);
    }
    if (failing >= 0 && failing < n) {
      var fx = left + failing * colW;
      g.fillStyle = C.fail; g.fillRect(fx, 0, Math.max(colW, 2), 6);
      g.strokeStyle = C.fail; g.lineWidth = 2; g.strokeRect(fx - 1, top - 2, Math.max(colW, 2) + 2, names.length * rowH + 4);
      drawn.failingMarked = true;
    }
    data.highlights.forEach(function (h) {
      if (h.row === undefined || !(h.row in index)) return;
      var hx = left + h.step * colW, hy = top + index[h.row] * rowH;
      g.strokeStyle = C.hl; g.lineWidth = 3; g.strokeRect(hx - 2, hy - 1, Math.max(colW, 2) + 4, rowH + 2);
      g.fillStyle = C.hl; g.fillRect(left - 10, hy + 4, 6, rowH - 8);
      drawn.highlights.push({ step: h.step, side: h.side, reason: h.reason, row: h.row, x0: hx, y0: hy, y1: hy + rowH });
    });
    // The names column again on a canvas that stays at the left edge while the timeline scrolls.
    var labels = document.getElementById('labels');
    labels.style.display = 'block';
    var lg = setup(labels, left - 2, height);
    lg.drawImage(canvas, 0, 0, (left - 2) * dpr, height * dpr, 0, 0, left - 2, height);
  }

  function stepAt(px, py) {
    if (geo.kind === 'heap') return Math.floor((py - geo.top) / geo.rowH);
    if (geo.kind === 'timeline') return Math.floor((px - geo.left) / geo.colW);
    return -1;
  }

  function answers(s) {
    var h = '';
    if (data.modelless) {
      return '<div><span class="k">implementation (no model):</span> <code>' + esc(s.implReturned !== undefined ? s.implReturned : s.impl) + '</code></div>';
    }
    if (s.same) h += '<div><span class="k">both:</span> <code>' + esc(s.model) + '</code></div>';
    else h += '<div><span class="k">model:</span> <code>' + esc(s.model) + '</code></div><div><span class="k">implementation:</span> <code>' + esc(s.impl) + '</code></div>';
    if (s.modelReturned !== undefined && s.modelReturned === s.implReturned) h += '<div><span class="k">returned (both):</span> <code>' + esc(s.modelReturned) + '</code></div>';
    else {
      if (s.modelReturned !== undefined) h += '<div><span class="k">model returned:</span> <code>' + esc(s.modelReturned) + '</code></div>';
      if (s.implReturned !== undefined) h += '<div><span class="k">impl returned:</span> <code>' + esc(s.implReturned) + '</code></div>';
    }
    return h;
  }
  function rangesText(rs, max) {
    if (!rs) return '-';
    var parts = rs.slice(0, max).map(function (r) { return '[' + r[0] + ', ' + (r[0] + r[1]) + ')'; });
    return parts.join(' ') + (rs.length > max ? ' ... (' + rs.length + ')' : '');
  }
  function pictureText(i) {
    var h = '', sidesShown = [['model', vis(i, 'model')], ['implementation', vis(i, 'impl')]];
    sidesShown.forEach(function (p) {
      var pv = p[1]; if (!pv) return;
      if (pv.kind === 'heap') {
        h += '<div><span class="k">' + p[0] + ' live (' + pv.live.length + '):</span> <code>' + esc(rangesText(pv.live, 24)) + '</code></div>';
        if (pv.free) h += '<div><span class="k">' + p[0] + ' free blocks:</span> <code>' + esc(rangesText(pv.free, 12)) + '</code></div>';
        if (pv.busy && pv.busy.length) h += '<div><span class="k">' + p[0] + ' GPU reads:</span> <code>' + esc(rangesText(pv.busy, 12)) + '</code></div>';
      } else if (pv.kind === 'timeline') {
        var f = pv.fences ? Object.keys(pv.fences).map(function (k) { return k + ' ' + pv.fences[k]; }).join(', ') : '';
        if (pv.queued) f += '; still queued: ' + Object.keys(pv.queued).map(function (k) { return k + ' ' + pv.queued[k]; }).join(', ');
        h += '<div><span class="k">' + p[0] + ':</span> ' + (pv.budgetBytes !== undefined ? 'usage ' + pv.usageBytes + ' of budget ' + pv.budgetBytes + ' bytes' : '') + (f ? '; completed fences: ' + esc(f) : '') + '</div>';
        h += '<div class="mono">' + pv.rows.map(function (row) { return (row.flagged ? '<b style="color:var(--fail)">! </b>' : '') + esc(row.name) + ': ' + esc(row.state) + (row.detail ? ' <span class="k">(' + esc(row.detail) + ')</span>' : ''); }).join('<br>') + '</div>';
      }
    });
    return h;
  }
  function showDetail(i) {
    var s = steps[i]; if (!s) { detail.innerHTML = '<span class="k">no steps</span>'; return; }
    detail.dataset.step = String(i);
    detail.innerHTML = '<div><b>step ' + i + '</b> of ' + n + (i === failing ? ' <span class="fails">fails here</span>' : '') + '</div>' +
      '<div><code>' + esc(s.command) + '</code></div>' + answers(s) + pictureText(i);
  }
  function drawSelection() {
    var g = overlay.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0); g.clearRect(0, 0, overlay.width, overlay.height); g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.strokeStyle = C.sel; g.lineWidth = 2;
    var box;
    if (geo.kind === 'heap') box = [geo.left - 3, geo.top + sel * geo.rowH - 3, geo.plotW + 6, Math.max(geo.rowH, 2) + 6];
    else if (geo.kind === 'timeline') box = [geo.left + sel * geo.colW - 3, geo.top - 5, Math.max(geo.colW, 2) + 6, geo.rows.length * geo.rowH + 10];
    if (!box) return;
    g.setLineDash([4, 2]); g.strokeRect(box[0], box[1], box[2], box[3]); g.setLineDash([]);
    var pane = canvas.parentElement;
    if (box[1] < pane.scrollTop || box[1] + box[3] > pane.scrollTop + pane.clientHeight) pane.scrollTop = Math.max(0, box[1] - pane.clientHeight / 2);
    if (box[0] < pane.scrollLeft || box[0] + box[2] > pane.scrollLeft + pane.clientWidth) pane.scrollLeft = Math.max(0, box[0] - pane.clientWidth / 2);
  }
  var items = [];
  function select(i) {
    if (n === 0) return;
    i = Math.max(0, Math.min(n - 1, i));
    if (items[sel]) items[sel].classList.remove('sel');
    sel = i;
    if (items[sel]) {
      // Scrolls the list only (scrollIntoView would scroll the page too).
      var li = items[sel], top = li.offsetTop;
      li.classList.add('sel');
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + li.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = top + li.offsetHeight - list.clientHeight;
    }
    document.body.dataset.step = String(sel);
    showDetail(sel); drawSelection();
  }

  var html = new Array(n);
  for (var i = 0; i < n; i++) {
    html[i] = '<li data-step="' + i + '"' + (i === failing ? ' class="failing"' : '') + '>' + (i === failing ? '&gt;&gt; ' : '') + i + '  ' + esc(steps[i].command) + '</li>';
  }
  list.innerHTML = html.join('');
  items = list.children;
  list.addEventListener('click', function (e) { var li = e.target.closest('li'); if (li) select(Number(li.dataset.step)); });

  if (data.kind === 'heap') drawHeap(); else if (data.kind === 'timeline') drawTimeline(); else canvas.parentElement.style.display = 'none';

  canvas.addEventListener('mousemove', function (e) {
    var rect = canvas.getBoundingClientRect(), i = stepAt(e.clientX - rect.left, e.clientY - rect.top);
    if (i < 0 || i >= n) { tip.style.display = 'none'; return; }
    var s = steps[i], extra = '';
    if (geo.kind === 'timeline') {
      var r = Math.floor((e.clientY - rect.top - geo.top) / geo.rowH), name = geo.rows[r], iv = vis(i, 'impl');
      if (name !== undefined && iv) iv.rows.forEach(function (row) { if (row.name === name) extra = '<div>' + esc(name) + ': ' + esc(row.state) + (row.detail ? ' (' + esc(row.detail) + ')' : '') + '</div>'; });
    }
    tip.innerHTML = '<div><b>step ' + i + '</b>' + (i === failing ? ' <span class="fails">fails here</span>' : '') + '</div><div><code>' + esc(s.command) + '</code></div>' + answers(s) + extra;
    tip.style.display = 'block';
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 530) + 'px';
    tip.style.top = Math.min(e.clientY + 14, window.innerHeight - tip.offsetHeight - 4) + 'px';
  });
  canvas.parentElement.addEventListener('scroll', function () {
    document.getElementById('labels').style.transform = 'translateX(' + canvas.parentElement.scrollLeft + 'px)';
  });
  canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  canvas.addEventListener('click', function (e) { var rect = canvas.getBoundingClientRect(); select(stepAt(e.clientX - rect.left, e.clientY - rect.top)); });
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var to = null;
    switch (e.key) {
      case 'ArrowDown': case 'ArrowRight': case 'j': case 'l': to = sel + 1; break;
      case 'ArrowUp': case 'ArrowLeft': case 'k': case 'h': to = sel - 1; break;
      case 'PageDown': to = sel + 10; break;
      case 'PageUp': to = sel - 10; break;
      case 'Home': to = 0; break;
      case 'End': to = n - 1; break;
      case 'f': if (failing >= 0) to = failing; break;
      case 'z': if (data.kind === 'heap' && zoomWindow) { zoom = !zoom; drawHeap(); window.gpumvReport.geometry = geo; select(sel); e.preventDefault(); } return;
    }
    if (to !== null) { e.preventDefault(); select(to); }
  });
  select(sel);
  window.gpumvReport = { geometry: geo, drawn: drawn, selected: function () { return sel; }, select: select };
  performance.mark('gpumv-drawn');
})();
`;
