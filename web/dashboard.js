// Hotline live dashboard: polls /api/dashboard once a second (incrementally, `since` the last
// point) and draws big numbers and SVG time-series charts of the last ten minutes. Own code, no
// libraries.
'use strict';

(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const W = 600;   // viewBox width; the SVG scales to its box
  const H = 200;
  const PAD = { left: 46, right: 8, top: 8, bottom: 20 };
  const COLORS = ['#4cc2ff', '#3fb950', '#d29922', '#f85149', '#bc8cff', '#39c5cf', '#ff9bce', '#8b98a5', '#e6edf3'];

  // Client copy of the server's ring: columns keyed like the JSON's "series".
  const data = { series: { t: [] }, totals: null, historyMs: 600000, engine: false, tiers: [], stages: [] };
  window.hotlineDashboard = data;
  let lastT = 0;
  let failures = 0;

  const numbers = [
    { key: 'active', label: 'calls now', get: (s, t) => last(s.active_calls) },
    { key: 'p50', label: 'voice→voice P50 (ms, 1 min)', get: (s) => last(s.v2v_p50_ms), warn: 800, bad: 1500 },
    { key: 'p95', label: 'voice→voice P95 (ms, 1 min)', get: (s) => last(s.v2v_p95_ms), warn: 1000, bad: 1500 },
    { key: 'p99', label: 'voice→voice P99 (ms, 1 min)', get: (s) => last(s.v2v_p99_ms), warn: 1200, bad: 1500 },
    { key: 'tpm', label: 'turns per minute', get: (s) => last(s.turns_per_min) },
    { key: 'hit', label: 'cache hit rate (L1-L3, 1 min)', get: (s) => pct(last(s.cache_hit_rate)) },
    { key: 'calls', label: 'calls since start', get: (s, t) => t && t.calls },
    { key: 'turns', label: 'turns since start', get: (s, t) => t && t.turns },
    { key: 'rejects', label: 'cache rejects (1 min)', get: (s) => last(s.cache_rejects) },
    { key: 'unanswered', label: 'unanswered (fallback)', get: (s, t) => t && t.unanswered },
    { key: 'gated', label: 'LLM gated (1 min)', get: (s) => last(s.llm_gated) },
    { key: 'busy', label: 'turned away (busy)', get: (s, t) => t && t.over_capacity, bad: 1 },
    { key: 'errors', label: 'stage errors', get: (s, t) => t && t.errors, warn: 1 },
    { key: 'batch', label: 'engine batch (seq/step)', get: (s) => last(s.engine_batch_mean), engine: true },
    { key: 'queue', label: 'engine queue', get: (s) => last(s.engine_queue_depth), engine: true },
    { key: 'kv', label: 'KV blocks in use', get: (s, t) => kv(last(s.engine_kv_blocks_in_use), t), engine: true },
  ];

  const charts = [
    { id: 'calls', title: 'Calls in progress', lines: [['active_calls', 'calls']], min: 4 },
    { id: 'v2v', title: 'Voice-to-voice latency, last minute (ms)',
      lines: [['v2v_p50_ms', 'P50'], ['v2v_p95_ms', 'P95'], ['v2v_p99_ms', 'P99']], min: 500, target: 1500 },
    { id: 'stages', title: 'Per-stage mean, last minute (ms)', stages: true, min: 100 },
    { id: 'tiers', title: 'Answers per tier and cache rejects, last minute', tiers: true, min: 4 },
    { id: 'hits', title: 'Cache hit rate (L1-L3 share of answers)', lines: [['cache_hit_rate', 'hit rate']], min: 1, max: 1, percent: true },
    { id: 'engine', title: 'Engine: batch size, queue, KV blocks in use', engine: true,
      lines: [['engine_batch_mean', 'batch'], ['engine_queue_depth', 'queue'], ['engine_running', 'running'], ['engine_kv_blocks_in_use', 'KV blocks']], min: 4 },
    { id: 'cpu', title: 'Process CPU (cores)', lines: [['cpu_cores', 'cores']], min: 1 },
    { id: 'rss', title: 'Process memory (MiB)', lines: [['rss_mb', 'RSS']], min: 64 },
  ];

  function last(col) {
    if (!col) return null;
    for (let i = col.length - 1; i >= 0; i--) if (col[i] !== null && col[i] !== undefined) return col[i];
    return null;
  }
  function pct(v) { return v === null || v === undefined ? null : Math.round(v * 100) + ' %'; }
  function kv(v, t) {
    if (v === null || v === undefined) return null;
    return t && t.engine_kv_blocks_total ? v + ' / ' + t.engine_kv_blocks_total : v;
  }
  function fmt(v) {
    if (v === null || v === undefined || (typeof v === 'number' && !isFinite(v))) return '–';
    if (typeof v === 'string') return v;
    if (Math.abs(v) >= 100 || Number.isInteger(v)) return String(Math.round(v));
    return v.toFixed(1);
  }

  function el(tag, attrs, parent, ns) {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function buildNumbers() {
    const root = document.getElementById('numbers');
    for (const n of numbers) {
      const box = el('div', { class: 'number' + (n.engine ? ' hidden' : ''), id: 'num-' + n.key }, root);
      el('div', { class: 'value' }, box).textContent = '–';
      el('div', { class: 'label' }, box).textContent = n.label;
    }
  }

  function chartLines(c) {
    if (c.stages) return data.stages.map((s) => ['stage_' + s + '_ms', s]);
    if (c.tiers) {
      return data.tiers.map((t) => ['answers_' + t, t.toUpperCase()])
        .concat([['cache_rejects', 'rejected (L1/L2)'], ['llm_gated', 'gated (LLM)']]);
    }
    return c.lines;
  }

  function buildCharts() {
    const root = document.getElementById('charts');
    root.textContent = '';
    for (const c of charts) {
      const box = el('section', { class: 'chart' + (c.engine && !data.engine ? ' hidden' : ''), id: 'chart-' + c.id }, root);
      el('h2', {}, box).textContent = c.title;
      el('svg', { viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img', 'aria-label': c.title }, box, SVG);
      const legend = el('div', { class: 'legend' }, box);
      chartLines(c).forEach(([, label], i) => {
        const item = el('span', {}, legend);
        const sw = el('span', { class: 'swatch' }, item);
        sw.style.background = COLORS[i % COLORS.length];
        item.appendChild(document.createTextNode(label));
      });
    }
  }

  // Draws one chart: time on x (the last historyMs), values on y from 0; a gap where a value is
  // null (no turns in the window, no engine).
  function draw(c) {
    const box = document.getElementById('chart-' + c.id);
    if (!box) return;
    box.classList.toggle('hidden', !!c.engine && !data.engine);
    const svg = box.querySelector('svg');
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const t = data.series.t;
    const now = t.length ? t[t.length - 1] : Date.now();
    const from = now - data.historyMs;
    const lines = chartLines(c);
    let max = c.min || 1;
    if (!c.max) {
      for (const [key] of lines) {
        for (const v of data.series[key] || []) if (v !== null && v > max) max = v;
      }
      if (c.target && c.target > max * 0.8) max = Math.max(max, c.target * 1.1);
      max = niceCeil(max);
    } else {
      max = c.max;
    }
    const x = (ms) => PAD.left + ((ms - from) / (now - from || 1)) * (W - PAD.left - PAD.right);
    const y = (v) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
    // Grid and y ticks.
    for (const f of [0, 0.5, 1]) {
      const yy = y(max * f);
      el('line', { class: f === 0 ? 'axis' : 'grid', x1: PAD.left, x2: W - PAD.right, y1: yy, y2: yy }, svg, SVG);
      const label = el('text', { class: 'tick', x: PAD.left - 4, y: yy + 4, 'text-anchor': 'end' }, svg, SVG);
      label.textContent = c.percent ? Math.round(max * f * 100) + '%' : fmt(max * f);
    }
    for (let m = 0; m <= data.historyMs / 60000; m += 2) {
      const xx = x(now - m * 60000);
      const label = el('text', { class: 'tick', x: xx, y: H - 4, 'text-anchor': m === 0 ? 'end' : 'middle' }, svg, SVG);
      label.textContent = m === 0 ? 'now' : '-' + m + ' min';
    }
    if (c.target) {
      el('line', { x1: PAD.left, x2: W - PAD.right, y1: y(c.target), y2: y(c.target), stroke: '#f85149',
        'stroke-dasharray': '6 4', 'stroke-width': 1 }, svg, SVG);
    }
    lines.forEach(([key], i) => {
      const col = data.series[key] || [];
      let pts = [];
      const flush = () => {
        if (pts.length > 0) {
          el('polyline', { points: pts.join(' '), fill: 'none', stroke: COLORS[i % COLORS.length],
            'stroke-width': 2, 'stroke-linejoin': 'round', 'data-series': key }, svg, SVG);
        }
        pts = [];
      };
      for (let k = 0; k < t.length; k++) {
        const v = col[k];
        if (t[k] < from) continue;
        if (v === null || v === undefined) { flush(); continue; }
        pts.push(x(t[k]).toFixed(1) + ',' + y(Math.min(v, max)).toFixed(1));
      }
      flush();
    });
  }

  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function render() {
    const s = data.series;
    for (const n of numbers) {
      const box = document.getElementById('num-' + n.key);
      box.classList.toggle('hidden', !!n.engine && !data.engine);
      const v = n.get(s, data.totals);
      box.querySelector('.value').textContent = fmt(v);
      const num = typeof v === 'number' ? v : null;
      box.classList.toggle('bad', num !== null && n.bad !== undefined && num >= n.bad);
      box.classList.toggle('warn', num !== null && n.warn !== undefined && num >= n.warn && !(n.bad !== undefined && num >= n.bad));
    }
    for (const c of charts) draw(c);
  }

  function merge(doc) {
    const first = data.series.t.length === 0;
    data.historyMs = (doc.history_s || 600) * 1000;
    if (doc.totals) data.totals = doc.totals;
    const engineBefore = data.engine;
    data.engine = data.engine || !!doc.engine;
    if (first || data.tiers.length === 0) {
      data.tiers = doc.tiers || [];
      data.stages = doc.stages || [];
    }
    const add = doc.series || {};
    const n = (add.t || []).length;
    const have = data.series.t.length;
    for (const key in add) {
      if (!data.series[key]) data.series[key] = new Array(have).fill(null);
      Array.prototype.push.apply(data.series[key], add[key]);
    }
    for (const key in data.series) {
      if (!(key in add)) for (let i = 0; i < n; i++) data.series[key].push(null);
    }
    if (n > 0) lastT = add.t[n - 1];
    // Keep the history window only.
    const cut = data.series.t.findIndex((v) => v >= lastT - data.historyMs);
    if (cut > 0) for (const key in data.series) data.series[key].splice(0, cut);
    if (first || engineBefore !== data.engine) buildCharts();
  }

  async function poll() {
    try {
      const r = await fetch('/api/dashboard' + (lastT ? '?since=' + lastT : ''), { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      merge(await r.json());
      render();
      failures = 0;
      document.getElementById('updated').textContent =
        'updated ' + new Date(lastT || Date.now()).toLocaleTimeString();
    } catch (e) {
      failures++;
      document.getElementById('updated').textContent = 'no data (' + (e.message || e) + ')';
    }
    setTimeout(poll, failures > 5 ? 5000 : 1000);
  }

  buildNumbers();
  buildCharts();
  poll();
})();
