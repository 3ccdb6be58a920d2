import { describe, expect, it } from 'vitest';
import {
  GROWTH_PROBES,
  residencySetSystem,
  scaleConfigArb,
  type ScaleShape,
} from '../src/systems/residency-set.js';
import { checkSystem } from '../src/harness/property.js';
import { RunContext } from '../src/harness/runner.js';
import { ResidencySetPoolImpl } from '../src/residency/residency-set.js';
import { ResidencySetModel } from '../models/residency-set.js';
import { nextCapacity } from '../src/residency/residency-set-types.js';
import { SlotPool } from '../src/residency/slot-pool.js';
import { ContractError } from '../src/contract.js';
import { describeSystem, TEST_SEED } from './support.js';

describeSystem(residencySetSystem, { numRuns: 400 });

describe('residency-set: scale configs reach the growth paths', () => {
  const shapes: [ScaleShape, number][] = [
    ['objects', 30],
    ['slots', 30],
    ['slots1024', 4],
  ];
  for (const [shape, numRuns] of shapes) {
    const growth = GROWTH_PROBES[shape];
    it(`${shape}: the model agrees over ${numRuns} runs and ${growth.join(', ')} fire`, () => {
      const context = new RunContext();
      const result = checkSystem(
        { ...residencySetSystem, configArb: () => scaleConfigArb(shape) },
        { seed: TEST_SEED, numRuns, context, unbiased: true },
      );
      expect(result.failed).toBe(false);
      expect(
        growth.filter((probe) => (context.probeCounts.get(probe) ?? 0) === 0),
        'growth probes the scale configs never reached',
      ).toEqual([]);
    });
  }
});

describe('residency-set: spec examples', () => {
  it('grows 4096, 6144, 9216, 13824, 20736, 31104, 46656 (float32 x1.5, truncated)', () => {
    const sequence = [nextCapacity(0, 4096)];
    while (sequence.length < 7) sequence.push(nextCapacity(sequence[sequence.length - 1]!, 4096));
    expect(sequence).toEqual([4096, 6144, 9216, 13824, 20736, 31104, 46656]);
  });

  it('uses 128 bytes of flags per object with 1024 slots', () => {
    const pool = new ResidencySetPoolImpl({
      slotCount: 1024,
      initialCapacity: 4096,
      objectSizesBytes: [1],
    });
    expect(pool.flagBytesPerObject).toBe(128);
  });

  it('hands out the lowest free slot and reports exhaustion', () => {
    const pool = new SlotPool(33);
    const taken = Array.from({ length: 33 }, () => pool.acquire());
    expect(taken).toEqual(Array.from({ length: 33 }, (_, i) => i));
    expect(pool.acquire()).toBe(-1);
    pool.release(17);
    pool.release(3);
    expect(pool.takenSlots()).toEqual(taken.filter((slot) => slot !== 3 && slot !== 17));
    expect(pool.taken).toBe(31);
    expect(pool.acquire()).toBe(3);
    expect(() => pool.release(40)).toThrow(/not taken/);
    // The padding bits past slot 32 are permanently taken but never listed.
    expect(new SlotPool(5).takenSlots()).toEqual([]);
  });

  for (const [name, make] of [
    [
      'model',
      (slots: number) =>
        new ResidencySetModel({
          slotCount: slots,
          initialCapacity: 2,
          objectSizesBytes: [10, 20, 30],
        }),
    ],
    [
      'implementation',
      (slots: number) =>
        new ResidencySetPoolImpl({
          slotCount: slots,
          initialCapacity: 2,
          objectSizesBytes: [10, 20, 30],
        }),
    ],
  ] as const) {
    it(`${name}: contents survive Close and Open empties; the master needs a slot`, () => {
      const pool = make(2);
      const a = pool.createSet();
      const b = pool.createSet();
      expect(pool.open(a)).toBe('S_OK');
      expect(pool.insert(a, 1)).toBe(true);
      expect(pool.insert(a, 1)).toBe(false);
      expect(pool.insert(a, 2)).toBe(true);
      expect(pool.close(a)).toBe('S_OK');
      expect(pool.close(a)).toBe('E_INVALIDARG');
      expect(pool.contents(a)).toEqual([1, 2]);
      expect(() => pool.insert(a, 0)).toThrow(ContractError);
      expect(pool.execute([a, null, a])).toEqual({
        hr: 'S_OK',
        objects: [1, 2],
        totalSizeBytes: 50,
      });
      // Two sets open hold both slots: the master set cannot open.
      expect(pool.open(a)).toBe('S_OK');
      expect(pool.contents(a)).toEqual([]);
      expect(pool.open(b)).toBe('S_OK');
      const c = pool.createSet();
      expect(pool.open(c)).toBe('E_OUTOFMEMORY');
      expect(pool.execute([c]).hr).toBe('E_OUTOFMEMORY');
      expect(pool.execute([a]).hr).toBe('E_INVALIDARG');
      expect(() => pool.destroySet(a)).toThrow(/DESTROY_OPEN/);
    });

    it(`${name}: a failed growth leaves the set stuck, its slot held and the object flagged`, () => {
      const pool = make(2);
      const a = pool.createSet();
      pool.open(a);
      pool.failNextGrowth();
      expect(pool.insert(a, 0)).toBe(false);
      expect(pool.isOutOfMemory(a)).toBe(true);
      expect(pool.flaggedSlots(0)).toEqual([0]);
      expect(pool.close(a)).toBe('E_OUTOFMEMORY');
      expect(pool.open(a)).toBe('E_INVALIDARG');
      expect(pool.takenSlots()).toEqual([0]);
      expect(pool.insert(a, 0)).toBe(false); // still flagged: a duplicate, as in the original
      expect(() => pool.insert(a, 1)).toThrow(/INSERT_OUT_OF_MEMORY/);
    });
  }
});
