/**
 * More pins on the allocators' internal structures (issue 14, survivors of the small mutation
 * run): behaviours self-checks-structures.test.ts does not reach. Each test names the answer it
 * pins; the whole file runs in milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { BitsetIndex } from '../src/alloc/bitset-index.js';

describe('BitsetIndex.findNext from at or past bitCount', () => {
  it('answers -1 for every start at or past bitCount, also past 2^32 (where a 32-bit shift of the start wraps to word 0)', () => {
    for (const bitCount of [1, 32, 64, 1025]) {
      const bits = new BitsetIndex(bitCount);
      bits.set(0);
      bits.set(bitCount - 1);
      // A start of 2^32 + k names word k >>> 5 after `>>> 5`: the set bits there must not answer.
      for (const from of [
        bitCount,
        bitCount + 1,
        2 ** 31,
        2 ** 32,
        2 ** 32 + 1,
        2 ** 32 + bitCount - 1,
        2 ** 40,
        2 ** 53 - 1,
      ]) {
        expect(bits.findNext(from), `${bitCount} bits, from ${from}`).toBe(-1);
      }
      expect([bits.findNext(0), bits.findNext(1)]).toEqual([0, bitCount === 1 ? -1 : bitCount - 1]);
    }
  });
});
