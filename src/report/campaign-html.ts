/**
 * The summary page of a fuzz campaign (`npm run fuzz -- --html OUT`): per system its runs,
 * commands, commands/s per core, findings, false out-of-memory share and the probes never hit,
 * with a bar of commands/s; then the findings with links to their HTML reports. Built from the
 * campaign's summary, the same data the console table prints.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CampaignSummary } from '../harness/campaign.js';
import { ALLOCATOR_METRICS_TITLE, allocatorMetricsCell } from '../systems/alloc-common.js';
import { escapeHtml, htmlPage } from './html.js';

/** The summary page; `links` maps a finding's file (as the summary names it) to its page's URL. */
export function renderCampaignHtml(
  summary: CampaignSummary,
  links: ReadonlyMap<string, string> = new Map(),
): string {
  const entries = Object.entries(summary.systems);
  const rates = entries.map(([name]) => summary.timing.commandsPerSecond[name] ?? 0);
  const fastest = Math.max(1, ...rates);
  const rows = entries.map(([name, system]) => {
    const findings = summary.findings.filter((finding) => finding.system === name).length;
    const rate = summary.timing.commandsPerSecond[name] ?? 0;
    const never = system.probesNeverHit;
    return [
      `<tr data-system="${escapeHtml(name)}">`,
      `<td>${escapeHtml(name)}</td>`,
      `<td>${system.runs}</td>`,
      `<td>${system.commands}</td>`,
      `<td>${rate} <span class="bar" style="width:${Math.round((60 * rate) / fastest)}px"></span></td>`,
      `<td${findings > 0 ? ' class="bad"' : ''}>${findings}</td>`,
      `<td>${escapeHtml(allocatorMetricsCell(system.probes))}</td>`,
      `<td class="left${never.length > 0 ? ' bad' : ''}">${never.length === 0 ? '-' : escapeHtml(never.join(', '))}</td>`,
      '</tr>',
    ].join('');
  });
  const total = entries.reduce((sum, [, system]) => sum + system.commands, 0);
  const findings = summary.findings.map((finding) => {
    const link = links.get(finding.file);
    const name = escapeHtml(finding.signature);
    return `<li data-signature="${name}">${link === undefined ? name : `<a href="${escapeHtml(link)}">${name}</a>`}: run ${finding.runIndex}, ${finding.commands} commands, <code>${escapeHtml(finding.file)}</code><br><code>${escapeHtml(finding.replay)}</code></li>`;
  });
  const title = `fuzz campaign ${summary.seed}`;
  const body = [
    '<section class="page">',
    `<h1>${escapeHtml(title)}${summary.findings.length > 0 ? ` <span class="bad">${summary.findings.length} finding${summary.findings.length === 1 ? '' : 's'}</span>` : ''}</h1>`,
    '<dl class="facts">',
    `<dt>seed</dt><dd>${escapeHtml(summary.seed)}</dd>`,
    `<dt>targets</dt><dd><code>${escapeHtml(JSON.stringify(summary.targets))}</code></dd>`,
    `<dt>shards</dt><dd>${escapeHtml(summary.shards.join(' + '))}</dd>`,
    `<dt>commands</dt><dd>${total} in ${(summary.timing.elapsedMs / 1000).toFixed(1)} s (${summary.timing.totalCommandsPerSecond} commands/s side by side, ${summary.timing.workers} worker${summary.timing.workers === 1 ? '' : 's'})</dd>`,
    `<dt>stopped</dt><dd>${escapeHtml(summary.stopped)}</dd>`,
    '</dl>',
    '<table class="summary" id="systems">',
    `<thead><tr><th>system</th><th>runs</th><th>commands</th><th>commands/s/core</th><th>findings</th><th>${escapeHtml(ALLOCATOR_METRICS_TITLE)}</th><th>probes never hit</th></tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody>`,
    '</table>',
    '<p class="keys">false OOM: the share of an allocator\'s null answers given while an aligned free gap large enough existed (of that many null answers); largest on empty: the largest request, as a share of the capacity, an empty pool served. Probes never hit: deep paths no run of this campaign reached.</p>',
    `<h2>Findings (${summary.findings.length})</h2>`,
    summary.findings.length === 0
      ? '<p>no findings</p>'
      : `<ul id="findings">${findings.join('\n')}</ul>`,
    '</section>',
  ].join('\n');
  return htmlPage(title, body);
}

export function writeCampaignHtml(
  file: string,
  summary: CampaignSummary,
  links: ReadonlyMap<string, string>,
): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, renderCampaignHtml(summary, links));
}
