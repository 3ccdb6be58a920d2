/**
 * `npm run fuzz`: fuzz campaigns with fixed seeds.
 *
 * Run i of a system derives everything (fast-check seed, swarm weights, fault sites) from
 * (campaign seed, system, i), so a campaign is the same whatever the worker or shard count.
 * Findings are shrunk, replayed twice, de-duplicated by signature and written at once as
 * regression files; the summary is checkpointed after every batch of runs, so a killed campaign
 * loses at most the runs in flight and never a finding.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mergeSummaries, shardLabel, type CampaignSummary } from '../harness/campaign.js';
import { falseOutOfMemoryFailures } from '../systems/alloc-common.js';
import { COMMANDS, parseCommand, runMain, UsageError } from './args.js';
import { Campaign } from './fuzz-campaign.js';
import { rootRelative, writeSummary } from './fuzz-files.js';
import { HELP, MERGE_HELP } from './fuzz-help.js';
import { parseCampaign, readSummary, type CampaignArgs } from './fuzz-options.js';
import { runInWorkers } from './fuzz-pool.js';
import { runCampaignPreflight } from './fuzz-preflight.js';
import { printSummary } from './fuzz-report.js';
import { writeCampaignSummaryHtml } from '../report/fuzz-html.js';

async function campaignMain(args: CampaignArgs): Promise<number> {
  const options = await parseCampaign(args);
  const preflight = options.preflight
    ? await runCampaignPreflight(options)
    : { holds: true, failing: 0 };
  if (!preflight.holds) return 4;
  if (!existsSync(options.outDir)) mkdirSync(options.outDir, { recursive: true });
  const campaign = new Campaign(options);
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    // Stops the workers at once; a run being shrunk is written with its best case so far.
    campaign.cut('interrupted');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  console.log(
    `fuzz: seed ${options.seed}, systems ${options.systems.map((system) => system.name).join(',')}, ` +
      `${options.runs !== null ? `runs 0..${options.runs - 1}` : `budget ${options.budgetMs! / 1000}s`}, shard ${shardLabel(options.shard)}, ` +
      `${options.workers} worker${options.workers === 1 ? '' : 's'}, run time limit ${options.timeoutMs === 0 ? 'none' : `${options.timeoutMs / 1000}s`}${options.resumed ? ', resumed' : ''}`,
  );
  await runInWorkers(campaign, options, options.workers).catch((error: unknown) => {
    campaign.stop('interrupted');
    campaign.finish();
    throw error;
  });
  const summary = campaign.finish();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  printSummary(summary);
  console.log(`summary: ${rootRelative(options.project.root, options.jsonFile)}`);
  if (args.values.html !== undefined)
    writeCampaignSummaryHtml(args.values.html, summary, options.project.root);
  const overShare =
    options.maxFalseOomShare === null
      ? []
      : falseOutOfMemoryFailures(summary.systems, options.maxFalseOomShare);
  for (const line of overShare) console.log(`FALSE OUT OF MEMORY ${line}`);
  if (preflight.failing > 0)
    console.log(
      `${preflight.failing} stored regression${preflight.failing === 1 ? '' : 's'} still fail against the implementation (see PREFLIGHT FAILING above)`,
    );
  if (summary.findings.length > 0 || overShare.length > 0 || preflight.failing > 0) return 1;
  return summary.stopped === 'interrupted' ? 3 : 0;
}

async function mergeMain(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['fuzz merge'], argv, MERGE_HELP);
  if (args.positionals.length === 0)
    throw new UsageError(
      'merge needs one or more summary files (see npm run fuzz -- merge --help)',
    );
  let merged: CampaignSummary;
  try {
    merged = mergeSummaries(args.positionals.map(readSummary));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  const out = args.values.json;
  if (out !== undefined) writeSummary(out, merged);
  printSummary(merged);
  if (merged.findings.length > 0) return 1;
  if (merged.stopped === 'incomplete' || merged.stopped === 'interrupted') {
    console.log(
      merged.stopped === 'incomplete'
        ? `incomplete: only shards ${merged.shards.join(', ')} of the campaign are here`
        : 'some shards were interrupted',
    );
    return 3;
  }
  return 0;
}

await runMain(async () => {
  const argv = process.argv.slice(2);
  if (argv[0] === 'merge') return mergeMain(argv.slice(1));
  return campaignMain(parseCommand(COMMANDS.fuzz, argv, HELP));
});
