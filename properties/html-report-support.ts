/**
 * Builds the report of a stored regression as `regress show` does (shown failing against the
 * first mutant it catches, else against the implementation), for the HTML report's tests.
 */
import path from 'node:path';
import fc from 'fast-check';
import { MUTANTS } from '../mutants/index.js';
import { loadRegression, replayRegression, type Regression } from '../src/harness/regression.js';
import type { ReportInput } from '../src/harness/report.js';
import { runSequence, type Failure } from '../src/harness/runner.js';
import type { AnySystem, Command } from '../src/harness/system.js';
import { BUILTIN_REGISTRY } from '../src/systems/index.js';

export const REGRESSIONS = path.resolve(import.meta.dirname, '..', 'regressions');

export interface StoredReport {
  readonly regression: Regression;
  readonly system: AnySystem;
  readonly input: ReportInput;
  readonly failure: Failure;
}

export async function storedReport(relative: string): Promise<StoredReport> {
  const file = path.join(REGRESSIONS, relative);
  const mutantSystems = new Map(MUTANTS.map((mutant) => [mutant.name, mutant.system]));
  const { regression, system } = await loadRegression(file, mutantSystems, (name, raw) =>
    BUILTIN_REGISTRY.systemForFile(name, raw),
  );
  const mutant = MUTANTS.find((candidate) => candidate.name === regression.catches[0]);
  const result = replayRegression(
    file,
    { ...regression, catches: [] },
    system,
    MUTANTS,
    mutant?.createImpl,
  );
  if (result.real.ok) throw new Error(`${relative} passes: pick a file that fails`);
  const runOptions = mutant === undefined ? {} : { implFactory: mutant.createImpl };
  return {
    regression,
    system,
    failure: result.real.failure,
    input: {
      system,
      failure: result.real.failure,
      commands: regression.commands,
      runOptions,
      title: 'REGRESSION',
      notes: [`file: ${relative}`],
    },
  };
}

/** The ranges "[a, b)" a finding's first message line names, as [offset, size]. */
export function namedRanges(message: string): [number, number][] {
  const first = message.split('\n')[0]!;
  return [...first.matchAll(/\[(\d+), (\d+)\)/g)].map((match) => [
    Number(match[1]),
    Number(match[2]) - Number(match[1]),
  ]);
}

/** The report of a long sequence of a system's own generated commands (fixed seed): failing where it fails, else passing. */
export function longSequenceReport(system: AnySystem, length: number, seed: number): ReportInput {
  const [config] = fc.sample(system.configArb(), { seed, numRuns: 1 });
  const commands = fc.sample(system.commandArb(config), { seed, numRuns: length }) as Command[];
  const outcome = runSequence(system, config, commands);
  if (!outcome.ok) return { system, failure: outcome.failure, commands, title: 'FINDING' };
  const passing: Failure = {
    system: system.name,
    config,
    step: -1,
    command: { op: '(none)' },
    check: '(none)',
    checks: [],
    message: 'every check holds on this sequence',
    modelObservation: null,
    implObservation: null,
    diff: [],
  };
  return { system, failure: passing, commands, title: 'PASSES' };
}
