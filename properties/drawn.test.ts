/**
 * Drawn arbitraries (src/harness/drawn.ts): their fast draws give fast-check's values and leave
 * the random stream where fast-check leaves it, so a campaign's sequences and shrinks are the
 * ones fast-check's generation gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as drawn from '../src/harness/drawn.js';
import { generationPlan, planRun } from '../src/harness/campaign-plan.js';
import { checkSystem, firstCase } from '../src/harness/property.js';
import type { AnySystem } from '../src/harness/system.js';
import { residencyManagerSystem } from '../src/systems/residency-manager.js';
import { RESIDENCY_MANAGER_MUTANTS } from '../mutants/residency-manager.js';

/**
 * Draws `drawn` and generates its fast-check arbitrary from two copies of each of `runs`
 * streams; returns the first stream on which the values or the streams' next numbers differ.
 */
function firstDisagreement<T>(subject: drawn.Drawn<T>, seed: number, runs: number): string | null {
  let found: string | null = null;
  const probe = new (class extends fc.Arbitrary<number> {
    generate(mrng: fc.Random): fc.Value<number> {
      const byDraw = mrng.clone();
      const byFastCheck = mrng.clone();
      const drawnValue = subject.draw(byDraw);
      const generated = subject.arbitrary.generate(byFastCheck, undefined).value;
      const next = [byDraw.nextInt(0, 1 << 30), byFastCheck.nextInt(0, 1 << 30)];
      if (found === null && JSON.stringify(drawnValue) !== JSON.stringify(generated))
        found = `drew ${JSON.stringify(drawnValue)}, fast-check generated ${JSON.stringify(generated)}`;
      else if (found === null && next[0] !== next[1])
        found = `same value ${JSON.stringify(generated)}, but the streams went on with ${next[0]} and ${next[1]}`;
      return new fc.Value(mrng.nextInt(0, 9), undefined);
    }
    canShrinkWithoutContext(_value: unknown): _value is number {
      return false;
    }
    shrink(): fc.Stream<fc.Value<number>> {
      return fc.Stream.nil();
    }
  })();
  fc.sample(probe, { seed, numRuns: runs });
  return found;
}

/** The system with its command arbitraries unwrapped: fast-check's own generation throughout. */
function undrawn(system: AnySystem): AnySystem {
  return {
    ...system,
    commandArb: (config, plan) => {
      const arbitrary = system.commandArb(config, plan);
      return arbitrary instanceof drawn.Drawn ? arbitrary.arbitrary : arbitrary;
    },
  };
}

describe('drawn arbitraries', () => {
  it('each builder draws what fast-check generates and leaves the stream where it does', () => {
    const builders: [string, drawn.Drawn<unknown>][] = [
      ['integer', drawn.drawnInteger(-3, 17)],
      ['nat', drawn.drawnNat(5)],
      ['boolean', drawn.drawnBoolean()],
      ['constantFrom', drawn.drawnConstantFrom('a', 'b', 'c')],
      [
        'tuple',
        drawn.drawnTuple(drawn.drawnNat(3), drawn.drawnBoolean(), drawn.drawnInteger(10, 12)),
      ],
      ['map', drawn.drawnTuple(drawn.drawnNat(3), drawn.drawnNat(9)).map(([a, b]) => ({ a, b }))],
      ['array', drawn.drawnArray(drawn.drawnNat(7), { minLength: 1, maxLength: 6 })],
      ['array, default bounds', drawn.drawnArray(drawn.drawnBoolean(), {})],
      [
        'array, size max',
        drawn.drawnArray(drawn.drawnNat(2), { minLength: 0, maxLength: 40, size: 'max' }),
      ],
      ['option', drawn.drawnArray(drawn.drawnOption(drawn.drawnNat(3), 8, null), { maxLength: 4 })],
      [
        'oneof',
        drawn.drawnOneof(
          { arbitrary: drawn.drawnInteger(0, 4), weight: 3 },
          { arbitrary: drawn.drawnConstantFrom(-1), weight: 0 },
          { arbitrary: drawn.drawnInteger(100, 140), weight: 2 },
        ),
      ],
    ];
    for (const [name, subject] of builders)
      expect(firstDisagreement(subject, 20261202, 500), name).toBeNull();
  });

  it("residency-manager: every plan's command arbitrary is drawn, and draws fast-check's commands", () => {
    const system = residencyManagerSystem as unknown as AnySystem;
    for (let run = 0; run < 150; run++) {
      const plan = planRun(20261202, system, run);
      const { config } = firstCase(system, {
        seed: plan.seed,
        plan: generationPlan(plan),
        unbiased: true,
      });
      const command = system.commandArb(config, generationPlan(plan));
      expect(command).toBeInstanceOf(drawn.Drawn);
      const sequence = drawn.drawnArray(command as drawn.Drawn<unknown>, {
        minLength: 1,
        maxLength: 150,
        size: 'max',
      });
      expect(firstDisagreement(sequence, plan.seed, 20), `run ${run}`).toBeNull();
    }
  });

  it('residency-manager: campaign and property cases are the ones fast-check generates', () => {
    const system = residencyManagerSystem as unknown as AnySystem;
    const slow = undrawn(system);
    for (let run = 0; run < 400; run++) {
      const plan = planRun(20261130, system, run);
      for (const unbiased of [true, false]) {
        const options = { seed: plan.seed, plan: generationPlan(plan), unbiased };
        expect(firstCase(system, options), `run ${run}`).toEqual(firstCase(slow, options));
      }
    }
  });

  it('residency-manager: a finding shrinks to the same case, path and failure', () => {
    const system = residencyManagerSystem as unknown as AnySystem;
    const slow = undrawn(system);
    for (const name of ['rm-referenced-not-moved', 'rm-split-ge', 'rm-paging-ring-overrun']) {
      const mutant = RESIDENCY_MANAGER_MUTANTS.find((candidate) => candidate.name === name)!;
      const options = {
        seed: 20261130,
        numRuns: 300,
        implFactory: mutant.createImpl,
        unbiased: true,
      };
      const fast = checkSystem(system, options);
      expect(fast.failed, name).toBe(true);
      expect(fast, name).toEqual(checkSystem(slow, options));
    }
  });
});
