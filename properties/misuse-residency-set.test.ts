/**
 * Misuse of residency sets (issue 14): handles no createSet returned (never created, negative,
 * fractional, destroyed) are refused with a plain Error naming the set, never answered as some
 * other set; contract errors carry their code and the set in the message; and a stuck set in a
 * slot past the first flag word still answers a flagged object as a duplicate.
 */
import { describe, expect, it } from 'vitest';
import { ResidencySetPoolImpl } from '../src/residency/residency-set.js';
import { ResidencySetModel } from '../models/residency-set.js';
import { ContractError } from '../src/contract.js';
import { thrownBy } from './support.js';

const config = (slotCount: number) => ({
  slotCount,
  initialCapacity: 2,
  objectSizesBytes: [10, 20, 30],
});

describe('residency sets: handles that name no set', () => {
  for (const [side, make, message] of [
    [
      'implementation',
      () => new ResidencySetPoolImpl(config(4)),
      (id: number) => `residency set ${id} does not exist`,
    ],
    ['model', () => new ResidencySetModel(config(4)), (id: number) => `model: unknown set ${id}`],
  ] as const) {
    it(`${side}: never created, negative, fractional or destroyed handles are refused by every call`, () => {
      const pool = make();
      const kept = pool.createSet();
      const destroyed = pool.createSet();
      pool.destroySet(destroyed);
      expect(pool.open(kept)).toBe('S_OK');
      for (const id of [destroyed, 2, 7, -1, 0.5, Number.NaN]) {
        for (const [name, call] of [
          ['open', () => pool.open(id)],
          ['close', () => pool.close(id)],
          ['insert', () => pool.insert(id, 0)],
          ['destroySet', () => pool.destroySet(id)],
          ['contents', () => pool.contents(id)],
          ['execute', () => pool.execute([id])],
        ] as const) {
          const error = thrownBy(call);
          expect(error, `${name}(${id})`).toBeInstanceOf(Error);
          expect(error, `${name}(${id}) is not a contract error`).not.toBeInstanceOf(ContractError);
          expect((error as Error).message, `${name}(${id})`).toBe(message(id));
        }
      }
      // Nothing happened to the set that exists.
      expect(pool.isOpen(kept)).toBe(true);
      expect(pool.takenSlots()).toEqual([0]);
    });

    it(`${side}: the first set of a new pool is handle 0, and it is that set`, () => {
      const pool = make();
      expect(() => pool.open(0)).toThrow(message(0));
      expect(pool.createSet()).toBe(0);
      expect(pool.open(0)).toBe('S_OK');
      expect(pool.insert(0, 2)).toBe(true);
      expect(pool.contents(0)).toEqual([2]);
    });
  }
});

describe('residency sets: contract errors name their set', () => {
  it('destroying an open set, inserting into a closed one, inserting into a stuck one', () => {
    const pool = new ResidencySetPoolImpl(config(4));
    const a = pool.createSet();
    const b = pool.createSet();
    expect(pool.open(b)).toBe('S_OK');
    expect(() => pool.destroySet(b)).toThrow(`DESTROY_OPEN: set ${b} is open`);
    expect(() => pool.insert(a, 0)).toThrow(`INSERT_CLOSED: set ${a} is not open`);
    pool.failNextGrowth();
    expect(pool.insert(b, 0)).toBe(false);
    expect(() => pool.insert(b, 1)).toThrow(
      `INSERT_OUT_OF_MEMORY: set ${b} is stuck out of memory`,
    );
  });
});

describe('residency sets: a stuck set past the first flag word', () => {
  const wide = { slotCount: 40, initialCapacity: 2, objectSizesBytes: [10, 20, 30, 40] };
  for (const [side, make] of [
    ['implementation', () => new ResidencySetPoolImpl(wide)],
    ['model', () => new ResidencySetModel(wide)],
  ] as const) {
    it(`${side}: slot 32 keeps its flags in the second word; a flagged object is still a duplicate`, () => {
      const pool = make();
      const ids = Array.from({ length: 33 }, () => pool.createSet());
      for (const id of ids) expect(pool.open(id)).toBe('S_OK');
      const last = ids[32]!;
      expect(pool.slotOf(last)).toBe(32);
      expect(pool.insert(last, 1)).toBe(true); // grows to capacity 2
      pool.failNextGrowth();
      expect(pool.insert(last, 2)).toBe(true); // fits: no growth, the failure stays armed
      expect(pool.insert(last, 0)).toBe(false); // needs growth: it fails, the set is stuck
      expect(pool.isOutOfMemory(last)).toBe(true);
      expect(pool.flaggedSlots(0)).toEqual([32]);
      expect(pool.insert(last, 0)).toBe(false); // flagged before the failed growth: a duplicate
      expect(pool.insert(last, 1)).toBe(false); // stored earlier: flagged, a duplicate
      expect(() => pool.insert(last, 3)).toThrow(/INSERT_OUT_OF_MEMORY/);
    });
  }
});
