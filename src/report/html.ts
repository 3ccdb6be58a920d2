/**
 * The HTML report of a finding: one self-contained file (styles, script and data inline; no
 * network) built from the same ReportData as the console report (src/harness/report.ts). For
 * allocator systems it draws a heap map (x: offset, y: step), for residency systems a timeline
 * per object (x: step) with the budget and usage line; the failing step is marked and the ranges
 * or objects at fault are highlighted (src/report/highlights.ts). `regress show --html`, every
 * fuzz finding and the vitest helpers' callers use it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildReport, type ReportData, type ReportInput } from '../harness/report.js';
import { TIMELINE_STATES } from '../harness/visual.js';
import { pageData, type PageData } from './page-data.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** JSON safe inside a <script> element (no "</script", no line separators JavaScript rejects). */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The page skeleton every report page shares. */
export function htmlPage(title: string, body: string, script = ''): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // Nothing is fetched: no network at all, only what is inline.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
    `<title>${escapeHtml(title)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    body,
    script,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function legend(page: PageData): string {
  const item = (label: string, color: string) =>
    `<span style="--c: var(${color})">${escapeHtml(label)}</span>`;
  if (page.kind === 'heap') {
    return [
      item('model live (upper half of a row)', '--model'),
      item('implementation live (lower half)', '--impl'),
      item('free blocks', '--free'),
      item('GPU may still read', '--busy'),
      item('highlighted at the failing step', '--hl'),
      item('failing step', '--fail'),
    ].join('');
  }
  if (page.kind === 'timeline') {
    return [
      ...TIMELINE_STATES.filter((state) => state !== 'untracked').map((state) =>
        item(state, `--s-${state}`),
      ),
      item('flagged by a judge', '--hl'),
      item('work queued per queue (count)', '--s-in-flight'),
      item('usage (impl)', '--impl'),
      item('usage (model)', '--model'),
      item('budget', '--fail'),
    ].join('');
  }
  return '';
}

function highlightList(page: PageData): string {
  if (page.highlights.length === 0)
    return page.failingStep < 0
      ? ''
      : '<p class="keys">nothing to highlight in the picture at the failing step: see the checks above</p>';
  const items = page.highlights.map((h) => {
    const what =
      h.range !== undefined ? `[${h.range[0]}, ${h.range[0] + h.range[1]})` : (h.row ?? '');
    const attrs =
      h.range !== undefined
        ? ` data-offset="${h.range[0]}" data-size="${h.range[1]}"`
        : ` data-row="${escapeHtml(h.row ?? '')}"`;
    return `<li data-step="${h.step}" data-side="${h.side}" data-reason="${h.reason}"${attrs}><code>${escapeHtml(what)}</code> ${h.side === 'impl' ? 'implementation' : 'model'}: ${h.reason.replace(/-/g, ' ')}</li>`;
  });
  return `<h2>Highlighted at step ${page.failingStep}</h2><ul class="highlights" id="highlights">${items.join('')}</ul>`;
}

/** The HTML page of one report. */
export function renderHtmlReport(data: ReportData): string {
  const page = pageData(data);
  const failed = page.failingStep >= 0;
  const body = [
    '<header>',
    `<h1${failed ? ' class="bad"' : ''} id="heading">${escapeHtml(page.heading)}</h1>`,
    '<dl class="facts">',
    ...page.notes.map((note) => {
      const at = note.indexOf(':');
      return at > 0 && at < 12
        ? `<dt>${escapeHtml(note.slice(0, at))}</dt><dd>${escapeHtml(note.slice(at + 1).trim())}</dd>`
        : `<dt></dt><dd>${escapeHtml(note)}</dd>`;
    }),
    `<dt>system</dt><dd>${escapeHtml(page.system)}: ${escapeHtml(page.summary)}</dd>`,
    `<dt>config</dt><dd><code>${escapeHtml(page.config)}</code></dd>`,
    failed ? `<dt>checks</dt><dd>${escapeHtml(page.checks)}</dd>` : '',
    `<dt>steps</dt><dd id="step-count" data-steps="${page.steps.length}">${page.steps.length}</dd>`,
    '</dl>',
    `<pre class="message${failed ? '' : ' ok'}">${escapeHtml(page.message)}</pre>`,
    '</header>',
    '<main>',
    '<div>',
    `<div class="legend">${legend(page)}</div>`,
    `<div class="picture"><canvas id="picture" data-kind="${page.kind}" data-steps="${page.steps.length}" data-failing-step="${page.failingStep}" aria-label="${page.kind === 'heap' ? 'heap map: offset across, step down' : 'timeline: step across, object down'}"></canvas><canvas id="overlay" class="overlay"></canvas><canvas id="labels" class="labels"></canvas></div>`,
    highlightList(page),
    page.ending.length > 0
      ? `<h2>${escapeHtml(page.ending[0]!)}</h2><pre>${escapeHtml(page.ending.slice(1).join('\n'))}</pre>`
      : '',
    '</div>',
    '<aside>',
    '<div class="keys"><kbd>↑</kbd><kbd>↓</kbd> or <kbd>j</kbd><kbd>k</kbd> step, <kbd>PgUp</kbd><kbd>PgDn</kbd> 10 steps, <kbd>Home</kbd><kbd>End</kbd>, <kbd>f</kbd> failing step, <kbd>z</kbd> zoom; hover the picture for a step\'s answers</div>',
    '<div class="detail" id="detail" aria-live="polite"></div>',
    '<ol class="steps mono" id="steps"></ol>',
    '</aside>',
    '</main>',
    `<details><summary>console report (the same data as text)</summary><pre id="text">${escapeHtml(page.text)}</pre></details>`,
    '<div class="tip" id="tip"></div>',
  ].join('\n');
  const script = `<script type="application/json" id="report-data">${scriptJson(page)}</script>\n<script>${PAGE_SCRIPT}</script>`;
  return htmlPage(page.heading, body, script);
}

/** Builds the report of `input` with the systems' pictures and writes its HTML page to `file`. */
export function writeHtmlReport(file: string, input: ReportInput): void {
  const html = renderHtmlReport(buildReport({ ...input, withVisuals: true }));
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, html);
}
