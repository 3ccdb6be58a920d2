/**
 * The fuzz CLI's HTML pages: the report written beside every finding (`<finding>.html` next to
 * its JSON file) and the campaign summary page of `--html OUT`. Both are called once from
 * src/cli/fuzz.ts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CampaignSummary, FindingEntry, RunFinding } from '../harness/campaign.js';
import { runSequence } from '../harness/runner.js';
import type { Target } from '../cli/fuzz-targets.js';
import { WATCHDOG_CHECKS } from '../cli/watchdog.js';
import { writeCampaignHtml } from './campaign-html.js';
import { writeHtmlReport } from './html.js';

/** The HTML report of a finding file: the same name with .html. */
export function findingHtmlPath(findingFile: string): string {
  return findingFile.replace(/\.json$/, '') + '.html';
}

/**
 * Writes the HTML report beside a finding whose file is final (the campaign prints its report at
 * the same moment). A hang or a worker death is not replayed here (it could hang this thread): it
 * gets no page.
 */
export function writeFindingHtml(
  root: string,
  entry: FindingEntry,
  target: Target,
  finding: RunFinding,
): void {
  if (WATCHDOG_CHECKS.includes(finding.check)) return;
  const runOptions = target.implFactory === undefined ? {} : { implFactory: target.implFactory };
  const outcome = runSequence(target.system, finding.config, finding.commands, runOptions);
  if (outcome.ok) return;
  const notes = [
    `run ${finding.runIndex} of the campaign, shrunk from ${finding.originalLength} to ${finding.commands.length} commands`,
    `file: ${entry.file}`,
    `replay: ${entry.replay}`,
    `keep it: npm run regress -- save --finding ${entry.file}`,
  ];
  writeHtmlReport(findingHtmlPath(path.resolve(root, entry.file)), {
    system: target.system,
    failure: outcome.failure,
    commands: finding.commands,
    runOptions,
    notes,
  });
}

/** `--html OUT` of a campaign: its summary page, linking the findings' pages that exist. */
export function writeCampaignSummaryHtml(
  file: string,
  summary: CampaignSummary,
  root: string,
): void {
  const out = path.resolve(file);
  const links = new Map<string, string>();
  for (const finding of summary.findings) {
    const page = findingHtmlPath(path.resolve(root, finding.file));
    if (existsSync(page))
      links.set(finding.file, path.relative(path.dirname(out), page).split(path.sep).join('/'));
  }
  writeCampaignHtml(out, summary, links);
  console.log(`html: ${path.relative(process.cwd(), out) || out}`);
}
