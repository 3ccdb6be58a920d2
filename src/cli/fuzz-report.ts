/** What a campaign prints: the report of each new finding and the closing summary table. */
import type { CampaignSummary, FindingEntry, RunFinding } from '../harness/campaign.js';
import { toolCommand } from '../harness/command-line.js';
import { formatReport, formatUnreturnedReport } from '../harness/report.js';
import { runSequence } from '../harness/runner.js';
import { ALLOCATOR_METRICS_TITLE, allocatorMetricsCell } from '../systems/alloc-common.js';
import type { Target } from './fuzz-targets.js';
import { WATCHDOG_CHECKS } from './watchdog.js';

/** The 'false OOM' cell of a system: its false out-of-memory share and the largest request an empty pool served. */
function falseOomCell(probes: Readonly<Record<string, number>>): string {
  return allocatorMetricsCell(probes);
}

/** The console report of a new finding: the readable report, then where it is and how to keep it. */
export function findingReport(
  target: Target,
  finding: RunFinding,
  entry: FindingEntry,
  replaced: string,
): string {
  const notes = [
    `run ${finding.runIndex} of the campaign, shrunk from ${finding.originalLength} to ${finding.commands.length} commands${replaced}`,
    `written to ${entry.file}`,
    `replay:  ${entry.replay}`,
    `keep it: ${toolCommand('regress', `save --finding ${entry.file}`)}`,
  ];
  if (finding.note !== undefined && !WATCHDOG_CHECKS.includes(finding.check)) {
    // A shrink stopped by the budget or a signal: the case may be long and slow, and the
    // campaign is ending, so it is not replayed here (`regress show` replays it, step by step).
    return [
      `FINDING ${finding.system}: check '${finding.check}' failed on op ${finding.op}: ${finding.message}`,
      ...[
        ...notes,
        finding.note,
        `show it: ${toolCommand('regress', `show ${entry.file}`)} (every step's answers)`,
      ].map((note) => `  ${note}`),
      `  config:  ${JSON.stringify(finding.config)}`,
      `  sequence (${finding.commands.length} commands):`,
      ...finding.commands.map(
        (command, index) => `    ${String(index).padStart(3)}  ${JSON.stringify(command)}`,
      ),
    ].join('\n');
  }
  if (finding.note !== undefined) notes.push(finding.note);
  if (WATCHDOG_CHECKS.includes(finding.check)) {
    return formatUnreturnedReport(
      `FINDING ${finding.system}: ${finding.check}: ${finding.message}`,
      notes,
      finding.config,
      finding.commands,
    );
  }
  const runOptions = target.implFactory === undefined ? {} : { implFactory: target.implFactory };
  const outcome = runSequence(target.system, finding.config, finding.commands, runOptions);
  if (outcome.ok)
    return `FINDING ${finding.signature}: ${finding.message}\n  ${notes.join('\n  ')}`;
  return formatReport({
    system: target.system,
    failure: outcome.failure,
    commands: finding.commands,
    runOptions,
    notes,
  });
}

export function printSummary(summary: CampaignSummary): void {
  const rows = Object.entries(summary.systems).map(([name, system]) => [
    name,
    String(system.runs),
    String(system.commands),
    String(summary.timing.commandsPerSecond[name] ?? 0),
    String(summary.findings.filter((finding) => finding.system === name).length),
    falseOomCell(system.probes),
    system.probesNeverHit.length === 0 ? '-' : system.probesNeverHit.join(','),
  ]);
  const header = [
    'system',
    'runs',
    'commands',
    'commands/s/core',
    'findings',
    ALLOCATOR_METRICS_TITLE,
    'probes never hit',
  ];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const format = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 0 || column === 6
          ? cell.padEnd(widths[column]!)
          : cell.padStart(widths[column]!),
      )
      .join('  ');
  console.log(format(header));
  for (const row of rows) console.log(format(row));
  const total = Object.values(summary.systems).reduce((sum, system) => sum + system.commands, 0);
  console.log(
    `\ncampaign seed ${summary.seed}, shard ${summary.shards.join('+')}: ${total} commands in ${(summary.timing.elapsedMs / 1000).toFixed(1)} s ` +
      `(${summary.timing.totalCommandsPerSecond} commands/s side by side with ${summary.timing.workers} worker${summary.timing.workers === 1 ? '' : 's'}), stopped: ${summary.stopped}`,
  );
  if (summary.findings.length === 0) console.log('no findings');
  for (const finding of summary.findings) {
    console.log(
      `FINDING ${finding.signature}: run ${finding.runIndex}, ${finding.commands} commands -> ${finding.file}\n  ${finding.replay}`,
    );
  }
}
