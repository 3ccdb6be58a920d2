/**
 * A campaign never prints a path it later replaces (src/cli/fuzz-findings.ts): a finding's file
 * is written when its run first fails, under a name that depends on the run only, rewritten as
 * the shrink goes, and its report is printed only once every earlier run of its system is
 * recorded. An earlier run with the same signature takes the place of an unprinted later one;
 * a printed file is never removed.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptySummary, executeRun, planRun, type RunFinding } from '../src/harness/campaign.js';
import { FindingFiles } from '../src/cli/fuzz-findings.js';
import type { CampaignOptions } from '../src/cli/fuzz-options.js';
import { resolveTargets } from '../src/cli/fuzz-targets.js';
import { projectFromConfig } from '../src/project.js';

const ROOT = path.resolve(__dirname, '..');
const SEED = 'findings-test';

async function setup() {
  const project = projectFromConfig({}, ROOT, null);
  const targets = await resolveTargets({ systems: 'all', mutant: 'set-open-keeps-size' }, project);
  const target = targets[0]!;
  const shard = { index: 0, count: 1 };
  const outDir = mkdtempSync(path.join(tmpdir(), 'fuzz-findings-'));
  const options = { project, seed: SEED, targets, outDir, shard } as unknown as CampaignOptions;
  const summary = emptySummary(SEED, shard, [target.system], 100);
  // Two runs whose findings share a signature (the mutant fails most runs the same way).
  const findings: RunFinding[] = [];
  for (let runIndex = 0; findings.length < 2 && runIndex < 100; runIndex++) {
    const finding = executeRun(
      target.system,
      planRun(SEED, target.system, runIndex),
      target.implFactory,
    ).finding;
    if (finding !== null && (findings.length === 0 || finding.signature === findings[0]!.signature))
      findings.push(finding);
  }
  expect(findings).toHaveLength(2);
  return {
    options,
    summary,
    files: new FindingFiles(options, summary),
    early: findings[0]!,
    late: findings[1]!,
  };
}

describe('finding files', () => {
  it('writes a run first unshrunk, then shrunk, under one name that does not depend on the shrink', async () => {
    const { files, late } = await setup();
    const file = files.fileFor(late.system, late.runIndex, late.firstCheck, late.firstOp);
    const long = [...late.commands, ...late.commands];
    files.found(
      {
        system: late.system,
        runIndex: late.runIndex,
        config: late.config,
        commands: long,
        check: late.firstCheck,
        op: late.firstOp,
        message: late.message,
      },
      0,
    );
    expect(
      (JSON.parse(readFileSync(file, 'utf8')) as { commands: unknown[] }).commands,
    ).toHaveLength(long.length);
    files.record(late);
    expect(
      (JSON.parse(readFileSync(file, 'utf8')) as { commands: unknown[] }).commands,
    ).toHaveLength(late.commands.length);
    expect(path.basename(file)).toMatch(
      new RegExp(`^fuzz-${late.firstCheck}-${late.firstOp}-[0-9a-f]{8}\\.json$`),
    );
  });

  it("holds a later run's report until the earlier runs are recorded; the earlier one replaces it unprinted", async () => {
    const { files, early, late, summary } = await setup();
    const printed: string[] = [];
    const lateFile = files.fileFor(late.system, late.runIndex, late.firstCheck, late.firstOp);
    const earlyFile = files.fileFor(early.system, early.runIndex, early.firstCheck, early.firstOp);
    files.record(late);
    expect(existsSync(lateFile)).toBe(true);
    // Runs below the early one are recorded, the early one is not: nothing is final yet.
    files.flush(
      () => early.runIndex,
      false,
      (text) => printed.push(text),
    );
    expect(printed).toEqual([]);
    files.record(early);
    files.flush(
      () => late.runIndex + 1,
      false,
      (text) => printed.push(text),
    );
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain(`written to ${earlyFile}`);
    expect(existsSync(lateFile)).toBe(false);
    expect(summary.findings.map((entry) => entry.runIndex)).toEqual([early.runIndex]);
  });

  it('never removes a file it printed', async () => {
    const { files, early, late } = await setup();
    const printed: string[] = [];
    const lateFile = files.fileFor(late.system, late.runIndex, late.firstCheck, late.firstOp);
    files.record(late);
    // At the end of a campaign (a budget, a signal) every report is printed, final or not.
    files.flush(
      () => 0,
      true,
      (text) => printed.push(text),
    );
    expect(printed[0]).toContain(`written to ${lateFile}`);
    files.record(early);
    expect(existsSync(lateFile)).toBe(true);
  });
});
