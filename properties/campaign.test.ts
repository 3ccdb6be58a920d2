/**
 * Campaign properties: runs derive from the campaign seed alone, shards partition the campaign,
 * merged shard summaries equal the unsharded summary, and the CLI reports user mistakes in one
 * line with exit code 2.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addFinding,
  emptySummary,
  executeRun,
  mergeSummaries,
  planRun,
  recordRun,
  runIndexOf,
  type CampaignSummary,
  type RunResult,
  type Shard,
} from '../src/harness/campaign.js';
import { residencySetSystem } from '../src/systems/residency-set.js';
import type { ImplFactory } from '../src/harness/runner.js';
import { MUTANTS } from '../mutants/index.js';
import { cliScript, type Finished, ROOT, runTs, runTsAsync, tsxCommand } from './cli.js';

const SEED = 'campaign-test';

function runShard(
  shard: Shard,
  runs: number,
  implFactory?: ImplFactory,
): { summary: CampaignSummary; results: RunResult[] } {
  const summary = emptySummary(SEED, shard, [residencySetSystem]);
  const results: RunResult[] = [];
  for (let ordinal = 0; runIndexOf(shard, ordinal) < runs; ordinal++) {
    const result = executeRun(
      residencySetSystem,
      planRun(SEED, residencySetSystem, runIndexOf(shard, ordinal)),
      implFactory,
    );
    results.push(result);
    recordRun(summary.systems[residencySetSystem.name]!, result, shard);
    if (result.finding) {
      const f = result.finding;
      addFinding(summary.findings, {
        signature: f.signature,
        system: f.system,
        check: f.check,
        op: f.op,
        runIndex: f.runIndex,
        commands: f.commands.length,
        file: `x/${f.signature}`,
        replay: '',
        weights: f.weights,
        faults: [...f.faults],
        smallConfigs: f.smallConfigs,
      });
    }
  }
  summary.stopped = 'complete';
  return { summary, results };
}

function withoutTiming(summary: CampaignSummary): unknown {
  const { timing: _timing, shards: _shards, ...rest } = summary;
  const systems = Object.fromEntries(
    Object.entries(rest.systems).map(([name, { completed: _completed, ...system }]) => [
      name,
      system,
    ]),
  );
  return { ...rest, systems };
}

describe('campaign runs', () => {
  it('derive their plan from (seed, system, run index) alone, with swarm and fault variety', () => {
    expect(planRun(SEED, residencySetSystem, 7)).toEqual(planRun(SEED, residencySetSystem, 7));
    const plans = Array.from({ length: 200 }, (_, i) => planRun(SEED, residencySetSystem, i));
    expect(new Set(plans.map((plan) => plan.seed)).size).toBe(200);
    expect(plans.some((plan) => plan.weights === null || plan.weights.insert === undefined)).toBe(
      true,
    );
    expect(plans.some((plan) => plan.weights !== null && plan.weights.open === 0)).toBe(true);
    expect(plans.some((plan) => plan.faults.length === 0)).toBe(true);
    expect(plans.some((plan) => plan.faults.includes('set-growth-failure'))).toBe(true);
    expect(plans.some((plan) => plan.smallConfigs)).toBe(true);
    expect(plans.some((plan) => !plan.smallConfigs)).toBe(true);
    // A fault-free run never generates the fault's op.
    for (const plan of plans.filter((p) => p.faults.length === 0))
      expect(plan.weights?.failNextGrowth).toBe(0);
  });

  it('shard k/K owns exactly the run indices i with i mod K = k', () => {
    for (let count = 1; count <= 5; count++) {
      for (let index = 0; index < count; index++) {
        const owned = Array.from({ length: 6 }, (_, ordinal) =>
          runIndexOf({ index, count }, ordinal),
        );
        expect(owned.every((runIndex) => runIndex % count === index)).toBe(true);
      }
    }
  });

  it('K shards together are exactly the unsharded campaign, and their merged summary equals its summary', () => {
    const mutant = MUTANTS.find((m) => m.name === 'set-open-keeps-size')!;
    const whole = runShard({ index: 0, count: 1 }, 30, mutant.createImpl);
    const shards = [0, 1, 2].map((index) => runShard({ index, count: 3 }, 30, mutant.createImpl));
    const byIndex = (results: RunResult[]) =>
      new Map(results.map((result) => [result.runIndex, result]));
    const union = byIndex(shards.flatMap((shard) => shard.results));
    expect([...union.keys()].sort((a, b) => a - b)).toEqual([...byIndex(whole.results).keys()]);
    expect(union).toEqual(byIndex(whole.results));
    expect(whole.summary.findings.length).toBeGreaterThan(0);
    const merged = mergeSummaries(shards.map((shard) => shard.summary));
    expect(withoutTiming(merged)).toEqual(withoutTiming(whole.summary));
    expect(merged.shards).toEqual(['0/3', '1/3', '2/3']);
  });

  it('refuses to merge different campaigns, mixed shard counts or the same shard twice; a missing shard is incomplete', () => {
    const a = runShard({ index: 0, count: 2 }, 4).summary;
    const b = runShard({ index: 1, count: 2 }, 4).summary;
    const c = runShard({ index: 1, count: 3 }, 4).summary;
    a.runs = b.runs = c.runs = 4;
    expect(() => mergeSummaries([a, { ...b, seed: 'other' }])).toThrow(/different seeds/);
    expect(() => mergeSummaries([a, { ...b, runs: 5 }])).toThrow(/different run counts/);
    expect(() => mergeSummaries([a, { ...b, targets: { systems: 'alloc-buddy' } }])).toThrow(
      /different targets/,
    );
    expect(() => mergeSummaries([a, c])).toThrow(/shards of 2 with shards of 3/);
    expect(() => mergeSummaries([a, a])).toThrow(/more than one summary/);
    expect(mergeSummaries([a]).stopped).toBe('incomplete');
    expect(mergeSummaries([a, b]).stopped).toBe('complete');
  });
});

describe('fuzz CLI', () => {
  const fuzz = (...args: string[]) => runTs(cliScript('fuzz'), args, { cwd: ROOT });

  const usageErrors: [string[], RegExp][] = [
    [['--shard', '3/2'], /--shard 3\/2/],
    [['--budget', '-5m'], /--budget must look like/],
    [['--system', 'nope'], /unknown system 'nope'/],
    [['--resume', '/nonexistent/summary.json'], /cannot read summary/],
    [['--runs', '0'], /--runs must be an integer >= 1/],
    [['--frobnicate'], /unknown option --frobnicate/],
    [
      ['--out', path.join(ROOT, 'package.json', 'findings')],
      /findings folder .*package\.json.findings is not writable \(E[A-Z]+\)/,
    ],
    [
      ['--json', path.join(ROOT, 'package.json', 'summary.json')],
      /summary folder .*package\.json is not writable \(E[A-Z]+\)/,
    ],
  ];
  // The usage errors are independent processes: they run at once, each test awaits its own.
  let usageRuns: Promise<Finished[]> | undefined;
  const usageRun = (index: number) => {
    usageRuns ??= Promise.all(
      usageErrors.map(([args]) => runTsAsync(cliScript('fuzz'), args, { cwd: ROOT })),
    );
    return usageRuns.then((results) => results[index]!);
  };
  it.each(usageErrors.map(([args, pattern], index) => [args, pattern, index] as const))(
    '%j is a one-line error with exit code 2',
    async (_args, pattern, index) => {
      const result = await usageRun(index);
      expect(result.status).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(pattern);
    },
  );

  it('writes byte-identical findings and equal summaries with one worker and with two', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-'));
    const campaign = (workers: string) =>
      runTsAsync(
        cliScript('fuzz'),
        [
          '--mutant',
          'set-open-keeps-size',
          '--runs',
          '30',
          '--workers',
          workers,
          '--json',
          path.join(dir, `w${workers}.json`),
          '--out',
          path.join(dir, `w${workers}`),
        ],
        { cwd: ROOT, env: { ...process.env, SOURCE_DATE_EPOCH: '1764460800' } },
      );
    const [one, two] = await Promise.all([campaign('1'), campaign('2')]);
    expect(one.status, one.stderr).toBe(1);
    expect(two.status, two.stderr).toBe(1);
    // The two campaigns wrote to different folders; everything else must match.
    const read = (name: string) =>
      withoutTiming(
        JSON.parse(
          readFileSync(path.join(dir, name), 'utf8').replaceAll(
            `${path.sep}w2${path.sep}`,
            `${path.sep}w1${path.sep}`,
          ),
        ) as CampaignSummary,
      );
    expect(read('w2.json')).toEqual(read('w1.json'));
    // Every run ran on a (watched) worker thread, with one worker and with two.
    const timing = (name: string) =>
      (JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as CampaignSummary).timing;
    expect(timing('w1.json').workers).toBe(1);
    expect(timing('w2.json').workers).toBe(2);
    expect(timing('w2.json').threadRuns).toBe(timing('w1.json').threadRuns);
    const names = readdirSync(path.join(dir, 'w1', 'residency-set'));
    expect(names).toEqual(readdirSync(path.join(dir, 'w2', 'residency-set')));
    // The finding and its HTML report beside it (docs/html-report.md): byte-identical but for the folder it names.
    expect(names).toHaveLength(2);
    expect(names[1]).toMatch(/^fuzz-contents-match-model-open-[0-9a-f]{8}\.json$/);
    expect(names[0]).toBe(names[1]!.replace(/\.json$/, '.html'));
    const page = path.join('residency-set', names[0]!);
    expect(
      readFileSync(path.join(dir, 'w2', page), 'utf8').replaceAll(
        path.join(dir, 'w2'),
        path.join(dir, 'w1'),
      ),
    ).toBe(readFileSync(path.join(dir, 'w1', page), 'utf8'));
    const finding = path.join('residency-set', names[1]!);
    const text = readFileSync(path.join(dir, 'w1', finding), 'utf8');
    expect(readFileSync(path.join(dir, 'w2', finding), 'utf8')).toBe(text);
    const regression = JSON.parse(text) as {
      catches: string[];
      origin: { date: string; mutant: string; seed: string };
    };
    expect(regression.catches).toEqual(['set-open-keeps-size']);
    expect(regression.origin).toMatchObject({ date: '2025-11-30', mutant: 'set-open-keeps-size' });
    expect(regression.origin.seed).toMatch(/^20261130\/residency-set\/\d+$/);
  });

  it('loses no finding and no run to a SIGKILL: the resumed campaign equals an uninterrupted one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-kill-'));
    const common = [
      '--system',
      'residency-set',
      '--runs',
      '1500',
      '--workers',
      '1',
      '--out',
      dir,
      '--checkpoint',
      '100ms',
    ];
    // The uninterrupted campaign runs beside the one that is killed (it finds nothing, so the two
    // write no file in common).
    const wholeRun = runTsAsync(
      cliScript('fuzz'),
      [...common, '--json', path.join(dir, 'whole.json')],
      {
        cwd: ROOT,
      },
    );

    const summaryFile = path.join(dir, 'killed.json');
    const child = spawn(...tsxCommand(cliScript('fuzz'), [...common, '--json', summaryFile]), {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const progressed = (): boolean => {
      if (!existsSync(summaryFile)) return false;
      const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as CampaignSummary;
      return summary.systems['residency-set']!.runs >= 100;
    };
    for (let waited = 0; !progressed() && waited < 20_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGKILL');
    await exited;
    const killed = JSON.parse(readFileSync(summaryFile, 'utf8')) as CampaignSummary;
    expect(killed.stopped).toBe('running');
    expect(killed.systems['residency-set']!.runs).toBeLessThan(1500);
    const whole = await wholeRun;
    expect(whole.status, whole.stderr).toBe(0);

    const resumed = fuzz('--resume', summaryFile, '--out', dir);
    expect(resumed.status, resumed.stderr).toBe(0);
    const read = (file: string) => {
      const summary = JSON.parse(readFileSync(file, 'utf8')) as CampaignSummary;
      return { ...(withoutTiming(summary) as object), stopped: summary.stopped };
    };
    expect(read(summaryFile)).toEqual(read(path.join(dir, 'whole.json')));
  });

  it('fuzzes a user allocator module and writes a finding that replays against it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-allocator-'));
    const campaignOf = (...args: string[]) =>
      runTsAsync(cliScript('fuzz'), ['--allocator', ...args], { cwd: ROOT });
    const twentyRuns = (summary: string) =>
      ['--runs', '20', '--workers', '1', '--out', dir, '--json', path.join(dir, summary)] as const;
    // Three independent campaigns at once; the replay below needs the first one's finding.
    const [campaign, correct, missing] = await Promise.all([
      campaignOf('examples/broken-allocator.mjs', ...twentyRuns('s.json')),
      campaignOf('examples/simple-first-fit-allocator.mjs', ...twentyRuns('t.json')),
      campaignOf('examples/no-such-module.mjs'),
    ]);
    expect(campaign.status, campaign.stderr).toBe(1);
    const name = readdirSync(path.join(dir, 'user-allocator')).find(
      (candidate) => candidate.startsWith('fuzz-no-overlap-') && candidate.endsWith('.json'),
    );
    const file = path.join(dir, 'user-allocator', name!);
    expect(JSON.parse(readFileSync(file, 'utf8')).config.allocatorModule).toBe(
      'examples/broken-allocator.mjs',
    );
    const replay = runTs(cliScript('regress'), ['replay', file], { cwd: ROOT });
    expect(replay.status).toBe(1);
    expect(replay.stdout).toMatch(/check 'no-overlap'/);
    expect(correct.status, correct.stdout + correct.stderr).toBe(0);
    expect(missing.stderr).toMatch(/^error: examples\/no-such-module\.mjs: no such file/);
  });

  it('turns an allocator that loops forever into a hang finding, shrunk, and completes the campaign', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-hang-'));
    const summaryFile = path.join(dir, 's.json');
    const campaign = fuzz(
      '--allocator',
      'examples/looping-free-list-allocator.mjs',
      '--runs',
      '1',
      '--workers',
      '1',
      '--timeout',
      '400ms',
      '--out',
      dir,
      '--json',
      summaryFile,
    );
    expect(campaign.status, campaign.stdout + campaign.stderr).toBe(1);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as CampaignSummary;
    expect(summary.stopped).toBe('complete');
    expect(summary.systems['user-allocator']!.runs).toBe(1);
    const hangs = summary.findings.filter((finding) => finding.check === 'hang');
    expect(hangs.length).toBeGreaterThan(0);
    const file = path.join(dir, 'user-allocator', path.basename(hangs[0]!.file));
    const regression = JSON.parse(readFileSync(file, 'utf8')) as {
      origin: { check: string };
      commands: { op: string }[];
    };
    expect(regression.origin.check).toBe('hang');
    // Shrunk: a handful of commands, the last one the call that never returns (an alloc or a
    // free: both walk the self-linked list).
    expect(regression.commands.length).toBeLessThan(12);
    expect(['alloc', 'free']).toContain(regression.commands.at(-1)!.op);
    expect(campaign.stdout).toMatch(
      /FINDING user-allocator: hang: a run did not return within 400 ms/,
    );
    // Its replay runs in a watched worker: it reports the hang instead of hanging.
    const replay = runTs(cliScript('regress'), ['replay', file, '--timeout', '400ms'], {
      cwd: ROOT,
    });
    expect(replay.status).toBe(1);
    expect(replay.stdout).toMatch(/fails against the implementation: hang at step \d+/);
  });

  it("--max-false-oom-share turns an allocator's false out-of-memory share into a failure", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-oom-share-'));
    const fuzzAsync = (...args: string[]) => runTsAsync(cliScript('fuzz'), args, { cwd: ROOT });
    const roundsUpRun = fuzzAsync(
      '--allocator',
      'examples/size-class-allocator.mjs',
      '--runs',
      '60',
      '--workers',
      '1',
      '--max-false-oom-share',
      '0.05',
      '--out',
      dir,
      '--json',
      path.join(dir, 'a.json'),
    );
    const exactRun = fuzzAsync(
      '--allocator',
      'examples/simple-first-fit-allocator.mjs',
      '--runs',
      '60',
      '--workers',
      '1',
      '--max-false-oom-share',
      '0.05',
      '--out',
      dir,
      '--json',
      path.join(dir, 'b.json'),
    );
    const [roundsUp, exact] = await Promise.all([roundsUpRun, exactRun]);
    expect(roundsUp.status).toBe(1);
    expect(roundsUp.stdout).toMatch(
      /FALSE OUT OF MEMORY user-allocator: \d+ of \d+ null answers \([\d.]+ %\) were given while an aligned free gap large enough existed; the limit is 5\.0 %/,
    );
    expect(exact.status, exact.stdout).toBe(0);
    expect(exact.stdout).toMatch(/false OOM/);
    expect(exact.stdout).not.toMatch(/FALSE OUT OF MEMORY/);
  });

  it('--stop-on-first ends the campaign at its first finding', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-first-'));
    const summaryFile = path.join(dir, 's.json');
    const campaign = fuzz(
      '--mutant',
      'set-open-keeps-size',
      '--runs',
      '400',
      '--workers',
      '1',
      '--stop-on-first',
      '--out',
      dir,
      '--json',
      summaryFile,
    );
    expect(campaign.status, campaign.stderr).toBe(1);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as CampaignSummary;
    expect(summary.stopped).toBe('first-finding');
    expect(summary.findings.length).toBeGreaterThanOrEqual(1);
    expect(summary.systems['residency-set']!.runs).toBeLessThan(400);
  });

  it('reads summaries strictly: a damaged one is a one-line error naming the field; a budgeted one resumes only with --budget', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-summary-'));
    const file = path.join(dir, 's.json');
    const ran = fuzz(
      '--system',
      'residency-set',
      '--budget',
      '300ms',
      '--workers',
      '1',
      '--json',
      file,
      '--out',
      dir,
    );
    expect(ran.status, ran.stderr).toBe(0);
    const noBudget = fuzz('--resume', file, '--out', dir);
    expect(noBudget.status).toBe(2);
    expect(noBudget.stderr).toMatch(/give --budget for how long to continue/);
    const summary = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    delete summary.shards;
    writeFileSync(file, JSON.stringify(summary));
    const damaged = fuzz('--resume', file, '--budget', '1s', '--out', dir);
    expect(damaged.status).toBe(2);
    expect(damaged.stderr.trim().split('\n')).toHaveLength(1);
    expect(damaged.stderr).toMatch(/s\.json: \$\.shards: missing field/);
  });
});
