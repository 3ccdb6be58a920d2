/**
 * Shared scaffolding of the property suites: one fixed seed, and for each system the three
 * questions every suite asks: do model and implementation agree, does every mutant of the
 * catalog get caught by the check it names, and does the generator reach every probe.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSystem, saveCommandLine } from '../src/harness/property';
import { formatFailure, RunContext } from '../src/harness/runner';
import type { AnySystem } from '../src/harness/system';
import { MUTANTS } from '../mutants/index';
import { DEFAULT_SEED } from '../src/harness/seed';

/** The fixed global seed of `npm test` (also the default of `npm run mutants` and `npm run fuzz`). */
export const TEST_SEED = DEFAULT_SEED;

export interface SuiteOptions {
  /** Runs for the agreement property (sized so `npm test` stays well under two minutes). */
  readonly numRuns: number;
  /** Runs allowed to find each mutant. */
  readonly mutantRuns?: number;
}

export function describeSystem(system: AnySystem, options: SuiteOptions): void {
  const mutants = MUTANTS.filter((mutant) => mutant.system === system.name);

  describe(`${system.name}: model and implementation`, () => {
    it(`agree step for step over ${options.numRuns} generated sequences (seed ${TEST_SEED})`, () => {
      const context = new RunContext();
      const result = checkSystem(system, { seed: TEST_SEED, numRuns: options.numRuns, context });
      if (result.failed) {
        throw new Error(
          `${formatFailure(result.failure, result.commands)}\n\nSave it as a regression:\n  ${saveCommandLine(system.name, result.seed, result.path)}`,
        );
      }
      const missed = system.probes.filter((probe) => (context.probeCounts.get(probe) ?? 0) === 0);
      expect(missed, 'probes the generator never reached').toEqual([]);
    });
  });

  describe(`${system.name}: mutants`, () => {
    it('the catalog has mutants for this system', () => {
      expect(mutants.length).toBeGreaterThan(0);
    });
    it('every invariant catches at least one mutant first', () => {
      const expected = new Set(mutants.map((mutant) => mutant.expectedCheck));
      const uncovered = system.invariants.map((invariant) => invariant.name).filter((name) => !expected.has(name));
      expect(uncovered, 'invariants no mutant is expected to trip').toEqual([]);
    });
    for (const mutant of mutants) {
      it(`catches ${mutant.name} with ${mutant.expectedCheck}`, () => {
        const result = checkSystem(system, {
          seed: TEST_SEED,
          numRuns: options.mutantRuns ?? options.numRuns,
          implFactory: mutant.createImpl,
        });
        expect(result.failed, `${mutant.name} survived ${options.mutantRuns ?? options.numRuns} runs`).toBe(true);
        if (result.failed) expect(result.failure.check, formatFailure(result.failure, result.commands)).toBe(mutant.expectedCheck);
      });
    }
  });
}

/** Every .json file under `dir`, in sorted order (regression files, fixtures). */
export function jsonFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? jsonFilesUnder(full) : name.endsWith('.json') ? [full] : [];
    });
}
