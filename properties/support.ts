/**
 * Shared scaffolding of the property suites: one fixed seed, and for each system the three
 * questions every suite asks: do model and implementation agree, does every mutant of the
 * catalog get caught by the check it names, and does the generator reach every probe.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import type { AnySystem } from '../src/harness/system.js';
import { describeSystem as describeSystemWith } from '../src/vitest.js';
import { MUTANTS } from '../mutants/index.js';
import { DEFAULT_SEED } from '../src/harness/seed.js';
import { xorshift32 } from '../src/alloc/typed-arrays.js';
import { ContractError } from '../src/contract.js';

/** The fixed global seed of `npm test` (also the default of `npm run mutants` and `npm run fuzz`). */
export const TEST_SEED = DEFAULT_SEED;

export interface SuiteOptions {
  /** Runs for the agreement property (sized so `npm test` stays well under two minutes). */
  readonly numRuns: number;
  /** Runs allowed to find each mutant. */
  readonly mutantRuns?: number;
}

/** The repo's suites use the package's own vitest helper (src/vitest.ts), with the catalog's mutants. */
export function describeSystem(system: AnySystem, options: SuiteOptions): void {
  describeSystemWith(system, {
    seed: TEST_SEED,
    numRuns: options.numRuns,
    mutants: MUTANTS,
    ...(options.mutantRuns === undefined ? {} : { mutantRuns: options.mutantRuns }),
  });
}

/** Every .json file under `dir`, in sorted order (regression files, fixtures): the preflight's own walk. */
export { regressionFilesUnder as jsonFilesUnder } from '../src/cli/preflight.js';

/** What `call` threw, or null when it returned (tests then assert on the error's code and message). */
export function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return null;
}

/** A deterministic stream of numbers in [0, 1): xorshift32 words from `seed`, divided by 2^32. */
export function uniformStream(seed: number): () => number {
  let state = seed;
  return () => {
    state = xorshift32(state);
    return state / 2 ** 32;
  };
}

/** Takes a random entry out of `live` (the last one moves into its place) and returns it. */
export function takeRandom(live: number[], next: () => number): number {
  const k = Math.floor(next() * live.length);
  const taken = live[k]!;
  live[k] = live[live.length - 1]!;
  live.pop();
  return taken;
}

const ROOT = path.resolve(__dirname, '..');

/** Runs the fuzz CLI (src/cli/fuzz.ts through tsx) in the repository root with `args`. */
export function runFuzzCli(args: readonly string[], timeoutMs = 120_000): SpawnSyncReturns<string> {
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'fuzz.ts'), ...args],
    { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs },
  );
}

/** What a call answered: its result, or `error CODE` for the contract error it threw. */
function answerOf<T>(call: () => T): T | string {
  try {
    return call();
  } catch (error) {
    if (error instanceof ContractError) return `error ${error.code}`;
    throw error;
  }
}

/** A command both sides of a twin comparison run: an alloc, or a free of a live offset (skewed for a bad free). */
export type TwinCommand =
  | { op: 'alloc'; sizeBytes: number; alignBytes: number }
  | { op: 'free'; pick: number; skewBytes: number };

/** What a twin comparison needs of each side. */
interface TwinSide {
  alloc(sizeBytes: number, alignBytes: number): number | null;
  free(offsetBytes: number): void;
  checkIndexes(): string | null;
}

/**
 * Runs `commands` on a shipped allocator and its step-by-step twin (the bug catalog's). A free
 * picks one of the shipped side's live offsets (`pick` modulo their count, 0 when none) plus its
 * skew. After each command both self-checks must pass and `state` must read the same on both
 * sides. The first difference, worded with its step and command, or null.
 */
export function firstTwinDifference<S extends TwinSide>(
  shipped: S,
  twin: S,
  commands: readonly TwinCommand[],
  state: (side: S) => unknown,
): string | null {
  const live: number[] = [];
  for (const [step, command] of commands.entries()) {
    let a: unknown;
    let b: unknown;
    if (command.op === 'alloc') {
      a = answerOf(() => shipped.alloc(command.sizeBytes, command.alignBytes));
      b = answerOf(() => twin.alloc(command.sizeBytes, command.alignBytes));
      if (typeof a === 'number') live.push(a);
    } else {
      const offset =
        (live.length === 0 ? 0 : live[command.pick % live.length]!) + command.skewBytes;
      a = answerOf(() => shipped.free(offset));
      b = answerOf(() => twin.free(offset));
      if (a === undefined) live.splice(live.indexOf(offset), 1);
    }
    if (a !== b)
      return `step ${step} (${JSON.stringify(command)}): shipped ${String(a)}, twin ${String(b)}`;
    expect(shipped.checkIndexes()).toBeNull();
    expect(twin.checkIndexes()).toBeNull();
    const sa = JSON.stringify(state(shipped));
    const sb = JSON.stringify(state(twin));
    if (sa !== sb) return `step ${step} (${JSON.stringify(command)}): shipped ${sa}, twin ${sb}`;
  }
  return null;
}
