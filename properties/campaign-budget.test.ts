/**
 * A campaign keeps its budget and its findings: a shrink that outlives the budget is stopped at
 * budget + margin with its best case written; a signal mid-shrink leaves the finding on disk; a
 * hang's shrink candidates run under a limit derived from the run; every path a campaign prints
 * is still there at its end; the printed commands are spelled for where they run.
 *
 * The slow fixture (fixtures/slow-shrink) costs about 10 ms per call, so its first finding takes
 * tens of seconds to shrink. Time bounds here are generous: they tell a kept budget from one
 * that is not (the shrink alone takes far longer), not fast from slow.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CampaignSummary } from '../src/harness/campaign.js';
import { commandContext, respellCommands, toolCommand } from '../src/harness/command-line.js';
import { budgetMarginMs } from '../src/cli/fuzz-campaign.js';
import { CaseEvaluator, hangShrinkLimitMs } from '../src/cli/hang-shrink.js';
import { campaignWorkerUrl } from '../src/cli/watchdog.js';
import type { JsonObject } from '../src/harness/json.js';
import type { Command } from '../src/harness/system.js';
import { TSX_IMPORT } from './cli.js';

const ROOT = path.resolve(__dirname, '..');
const FUZZ = path.join(ROOT, 'src', 'cli', 'fuzz.ts');
const SLOW = 'properties/fixtures/slow-shrink/slow-broken-allocator.mjs';

const summaryOf = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as CampaignSummary;

describe('printed commands run where they are printed', () => {
  it('are npm scripts in this repository and npx gpumv elsewhere', () => {
    expect(commandContext(ROOT)).toBe('repository');
    expect(commandContext(path.join(ROOT, 'properties'))).toBe('repository');
    expect(commandContext(tmpdir())).toBe('installed');
    expect(toolCommand('regress', 'save --finding F', 'repository')).toBe(
      'npm run regress -- save --finding F',
    );
    expect(toolCommand('regress', 'save --finding F', 'installed')).toBe(
      'npx gpumv regress save --finding F',
    );
    expect(respellCommands('see npm run regress -- --help', 'installed')).toBe(
      'see npx gpumv regress --help',
    );
    expect(respellCommands('see npm run regress -- --help', 'repository')).toBe(
      'see npm run regress -- --help',
    );
  });
});

describe('a campaign prints only final paths', () => {
  it('every file a campaign with two workers reported is there at its end, one per finding; outside the repository its hints are npx gpumv', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-final-'));
    const run = spawnSync(
      process.execPath,
      [
        ...TSX_IMPORT,
        FUZZ,
        '--mutant',
        'set-open-keeps-size',
        '--runs',
        '60',
        '--workers',
        '2',
        '--out',
        'out',
        '--json',
        's.json',
      ],
      { encoding: 'utf8', cwd: dir },
    );
    expect(run.status, run.stderr).toBe(1);
    const written = [...run.stdout.matchAll(/written to (\S+)/g)].map((match) => match[1]!);
    const summary = summaryOf(path.join(dir, 's.json'));
    expect(written.length).toBe(summary.findings.length);
    for (const file of written) expect(existsSync(path.join(dir, file)), file).toBe(true);
    expect(run.stdout).toMatch(
      /keep it: npx gpumv regress save --finding out\/residency-set\/fuzz-contents-match-model-open-[0-9a-f]{8}\.json/,
    );
    expect(run.stdout).not.toMatch(/npm run/);
    expect(summary.findings.map((finding) => finding.file).sort()).toEqual([...written].sort());
  });
});

describe('a budget is kept', () => {
  it('derives a hang shrink candidate limit from the run, within the campaign limit', () => {
    expect(hangShrinkLimitMs(10_000, 0)).toBe(250);
    expect(hangShrinkLimitMs(10_000, 300)).toBe(1200);
    expect(hangShrinkLimitMs(10_000, 9000)).toBe(10_000);
    expect(hangShrinkLimitMs(0, 100)).toBe(400);
    expect(budgetMarginMs(2000)).toBe(200);
    expect(budgetMarginMs(3_600_000)).toBe(30_000);
  });

  it('stops a shrink that outlives the budget and writes its best case so far, which the save finishes', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-budget-'));
    const summaryFile = path.join(dir, 's.json');
    const started = Date.now();
    const run = spawnSync(
      process.execPath,
      [
        ...TSX_IMPORT,
        FUZZ,
        '--allocator',
        SLOW,
        '--budget',
        '8s',
        '--workers',
        '1',
        '--no-preflight',
        '--out',
        dir,
        '--json',
        summaryFile,
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    const wallMs = Date.now() - started;
    expect(run.status, run.stdout + run.stderr).toBe(1);
    const summary = summaryOf(summaryFile);
    expect(summary.stopped).toBe('budget');
    // The campaign's own clock: budget + margin + generous room for stopping the worker (the
    // shrink alone takes well over 20 s on this fixture; the budget leaves room for a worker's
    // start-up on a busy machine and the first run).
    expect(summary.timing.elapsedMs).toBeLessThan(8000 + budgetMarginMs(8000) + 3000);
    // The whole process, with tsx start-up on a busy machine.
    expect(wallMs).toBeLessThan(30_000);
    expect(run.stdout).toMatch(
      /shrinking stopped by the budget after [\d.]+ s at \d+ of \d+ commands; finish it with npm run regress -- save --finding \S+ --shrink/,
    );
    // Its report lists the case without replaying it (regress show does), so it costs no time.
    expect(run.stdout).toMatch(/show it: npm run regress -- show \S+ \(every step's answers\)/);
    expect(summary.findings.length).toBeGreaterThanOrEqual(1);
    const finding = summary.findings[0]!;
    const file = path.resolve(ROOT, finding.file);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { commands: unknown[] };
    expect(stored.commands.length).toBe(finding.commands);
    // The written case fails; `save --finding F --shrink` finishes its shrink.
    const saved = spawnSync(
      process.execPath,
      [
        ...TSX_IMPORT,
        path.join(ROOT, 'src', 'cli', 'regress.ts'),
        'save',
        '--finding',
        file,
        '--shrink',
        '--out',
        path.join(dir, 'kept'),
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    expect(saved.status, saved.stdout + saved.stderr).toBe(0);
    const shrunk = /shrunk from (\d+) to (\d+) commands/.exec(saved.stdout);
    expect(shrunk).not.toBeNull();
    expect(Number(shrunk![2])).toBeLessThanOrEqual(Number(shrunk![1]));
    expect(saved.stdout).toMatch(/it fails against the implementation/);
  }, 120_000);

  it('shows a long shrink on stderr and leaves its finding on disk at a signal mid-shrink', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-signal-'));
    const summaryFile = path.join(dir, 's.json');
    // SIGINT goes to the process running fuzz.ts, not to a `tsx` command (see properties/cli.ts).
    const child = spawn(
      process.execPath,
      [
        ...TSX_IMPORT,
        FUZZ,
        '--allocator',
        SLOW,
        '--runs',
        '5',
        '--workers',
        '1',
        '--no-preflight',
        '--out',
        dir,
        '--json',
        summaryFile,
      ],
      { cwd: ROOT },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    for (
      let waited = 0;
      !/shrinking user-allocator run \d+/.test(stderr) && waited < 60_000;
      waited += 50
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    const line =
      /shrinking user-allocator run (\d+) \(([a-z-]+) on ([a-z]+)\): (\d+) -> (\d+) commands, ([\d.]+) s/.exec(
        stderr,
      );
    expect(line, stderr).not.toBeNull();
    const [, runIndex, check, op] = line!;
    // Mid-shrink, the finding is already on disk (a SIGKILL now would leave it).
    const written = (): string[] => {
      const folder = path.join(dir, 'user-allocator');
      return existsSync(folder) ? readdirSync(folder) : [];
    };
    expect(written().some((name) => name.startsWith(`fuzz-${check}-${op}-`))).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(1);
    const summary = summaryOf(summaryFile);
    expect(summary.stopped).toBe('interrupted');
    expect(stdout).toMatch(/shrinking stopped by a signal after/);
    const finding = summary.findings.find((entry) => entry.runIndex === Number(runIndex))!;
    expect(existsSync(path.resolve(ROOT, finding.file))).toBe(true);
    expect(stdout).toContain(`written to ${finding.file}`);
  }, 120_000);

  it("a hang's shrink does not pay the campaign's run limit per candidate", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fuzz-hang-limit-'));
    const summaryFile = path.join(dir, 's.json');
    const run = spawnSync(
      process.execPath,
      [
        ...TSX_IMPORT,
        FUZZ,
        '--allocator',
        'examples/looping-free-list-allocator.mjs',
        '--runs',
        '1',
        '--workers',
        '1',
        '--timeout',
        '3s',
        '--no-preflight',
        '--out',
        dir,
        '--json',
        summaryFile,
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    expect(run.status, run.stdout + run.stderr).toBe(1);
    // The campaign derives its candidates' limit from the run (printed), well under --timeout...
    const limit = Number(
      /shrinking it in a fresh worker \(candidates stopped after (\d+) ms\)/.exec(run.stdout)?.[1],
    );
    expect(limit).toBeGreaterThanOrEqual(250);
    expect(limit).toBeLessThan(3000);
    const summary = summaryOf(summaryFile);
    const hang = summary.findings.find((finding) => finding.check === 'hang')!;
    expect(hang.commands).toBeLessThan(12);
    // ...and a candidate evaluator with that limit stops a hanging candidate after it, not after 3 s.
    const stored = JSON.parse(readFileSync(path.resolve(ROOT, hang.file), 'utf8')) as {
      system: string;
      config: JsonObject;
      commands: Command[];
    };
    const evaluator = new CaseEvaluator(
      campaignWorkerUrl(),
      {
        campaignSeed: '0',
        targets: { systems: 'all', allocator: 'examples/looping-free-list-allocator.mjs' },
        configFile: null,
        cwd: ROOT,
      },
      limit,
    );
    try {
      const outcome = await evaluator.evaluate(stored.system, stored.config, stored.commands);
      expect(outcome).toMatchObject({
        kind: 'died',
        check: 'hang',
        detail: `a run did not return within ${limit} ms; it was stopped with its worker`,
      });
    } finally {
      await evaluator.close();
    }
  }, 120_000);
});
