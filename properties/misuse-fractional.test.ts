/**
 * Fractional handles name nothing: they are refused, never answered for the integer they
 * truncate to (`1.5 >>> 5` is word 0 and `1.5 & 31` bit 1, so without a guard release(1.5)
 * would release slot 1; typed arrays read undefined at 0.5).
 */
import { describe, expect, it } from 'vitest';
import { SlotPool } from '../src/residency/slot-pool.js';
import { SimGpu } from '../src/gpu/sim-gpu.js';

describe('fractional handles are refused', () => {
  it('slot pool: release(1.5) throws and slot 1 stays taken', () => {
    const pool = new SlotPool(8);
    const taken = [pool.acquire(), pool.acquire(), pool.acquire()];
    expect(taken).toEqual([0, 1, 2]);
    expect(() => pool.release(1.5)).toThrow(/release of slot 1\.5 that is not taken/);
    expect(pool.isTaken(1)).toBe(true);
    expect(pool.takenSlots()).toEqual([0, 1, 2]);
  });

  it('simulated GPU: object 0.5 is no object', () => {
    const gpu = new SimGpu({
      objectSizesBytes: [256, 256],
      queueCount: 1,
      ticksPerSecond: 1000,
      localBudgetBytes: 1024,
      nonLocalBudgetBytes: 1024,
    });
    expect(() => gpu.createObject(0.5, true)).toThrow(/gpu: no object 0\.5/);
    gpu.createObject(0, true); // object 0 was left alone
  });
});
