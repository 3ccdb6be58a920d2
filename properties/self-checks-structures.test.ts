/**
 * The allocators' internal data structures and shared helpers (issue 14), each pinned against a
 * reference simple enough to read at a glance: BitsetIndex (src/alloc/bitset-index.ts) against a
 * Set of numbers, NumberMap (src/alloc/typed-arrays.ts) against a JS Map, NumberDeque
 * (src/alloc/number-deque.ts) against a plain array, xorshift32 against BigInt arithmetic, the
 * in-order walk against a recursive one, and the helpers of src/alloc/allocator.ts against their
 * documented answers (exact error codes and messages, which records are reused and which copied).
 *
 * The random parts use fixed seeds. Key and index generators lean on the places these structures
 * branch: word edges (31/32/63/64) and level edges (1024, 32768) of the bitset, keys above 2^32
 * and 2^52 and runs of keys that probe the same slots in the map, a ring whose front has wrapped
 * when it grows in the deque. The whole file runs in well under two seconds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BitsetIndex, lowestBit } from '../src/alloc/bitset-index.js';
import { NumberDeque } from '../src/alloc/number-deque.js';
import { grownCopy, inOrderNodes, NumberMap, xorshift32 } from '../src/alloc/typed-arrays.js';
import {
  AllocErrors,
  alignUp,
  badFree,
  copyBlocks,
  copyLive,
  inspectBlocks,
  inspectLive,
  setBlockEntry,
  setLiveEntry,
  validateRequest,
  type BlockAllocator,
  type BlockInfo,
  type InspectableAllocator,
  type LiveAllocation,
} from '../src/alloc/allocator.js';
import { ContractError } from '../src/contract.js';
import { thrownBy } from './support.js';

/** The lowest member of `set` that is >= `from`, or -1. */
function nextIn(set: ReadonlySet<number>, from: number): number {
  let best = -1;
  for (const member of set) if (member >= from && (best < 0 || member < best)) best = member;
  return best;
}

// ---------------------------------------------------------------------------------------------
// BitsetIndex
// ---------------------------------------------------------------------------------------------

/** Sizes around every word edge and level edge (1 word, 32 words = one level-1 word, 1024 words). */
const BIT_COUNTS = [
  1, 2, 31, 32, 33, 63, 64, 65, 100, 1023, 1024, 1025, 32767, 32768, 32769, 33000,
];
/** Positions where a word or a level changes. */
const EDGES = [
  0, 1, 30, 31, 32, 33, 63, 64, 65, 95, 96, 1023, 1024, 1025, 2047, 2048, 32767, 32768,
];

/** An index in [0, bitCount): a word/level edge, the last bit, or anywhere. */
const bitIndex = fc.oneof(
  fc.constantFrom(...EDGES).map((edge) => (bitCount: number) => Math.min(edge, bitCount - 1)),
  fc.constant((bitCount: number) => bitCount - 1),
  fc.nat().map((n) => (bitCount: number) => n % bitCount),
);
/** A findNext start: any index, or one of the places outside [0, bitCount). */
const bitFrom = fc.oneof(
  bitIndex,
  fc
    .constantFrom(-1, -33, 0, 1)
    .map((offset) => (bitCount: number) => (offset <= 0 ? offset : bitCount)),
  fc.constant((bitCount: number) => bitCount + 1),
  fc.constant(() => 2 ** 31 + 7),
);
type BitOp =
  | { kind: 'set' | 'clear' | 'test'; at: (bitCount: number) => number }
  | { kind: 'next'; at: (bitCount: number) => number };
const bitOp: fc.Arbitrary<BitOp> = fc.oneof(
  { weight: 4, arbitrary: bitIndex.map((at) => ({ kind: 'set' as const, at })) },
  { weight: 2, arbitrary: bitIndex.map((at) => ({ kind: 'clear' as const, at })) },
  { weight: 1, arbitrary: bitIndex.map((at) => ({ kind: 'test' as const, at })) },
  { weight: 3, arbitrary: bitFrom.map((at) => ({ kind: 'next' as const, at })) },
);

describe('BitsetIndex against a Set of numbers', () => {
  it('refuses a bit count that is not an integer in [1, 2^31], with its message', () => {
    for (const bitCount of [
      0,
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 31 + 1,
      2 ** 32,
      2 ** 53,
    ]) {
      expect(() => new BitsetIndex(bitCount)).toThrow(
        new Error(`BitsetIndex: bitCount ${bitCount} out of range`),
      );
    }
  });

  it('takes the limits: one bit, and 2^31 bits (the last one usable)', () => {
    const one = new BitsetIndex(1);
    expect(one.bitCount).toBe(1);
    expect([one.count, one.findFirst(), one.findNext(0), one.test(0)]).toEqual([0, -1, -1, false]);
    one.set(0);
    expect([one.count, one.findFirst(), one.findNext(0), one.findNext(1), one.test(0)]).toEqual([
      1,
      0,
      0,
      -1,
      true,
    ]);
    one.clear(0);
    expect([one.count, one.findFirst(), one.findNext(0), one.test(0)]).toEqual([0, -1, -1, false]);

    // The words are zero-filled lazily by the engine: only the pages touched below are written.
    const huge = new BitsetIndex(2 ** 31);
    expect(huge.bitCount).toBe(2 ** 31);
    const last = 2 ** 31 - 1;
    expect(huge.findFirst()).toBe(-1);
    huge.set(last);
    expect([
      huge.count,
      huge.findFirst(),
      huge.findNext(0),
      huge.findNext(last),
      huge.findNext(2 ** 31),
      huge.test(last),
    ]).toEqual([1, last, last, last, -1, true]);
    huge.set(2 ** 30);
    expect([huge.count, huge.findFirst(), huge.findNext(2 ** 30 + 1)]).toEqual([2, 2 ** 30, last]);
    huge.clear(2 ** 30);
    huge.clear(last);
    expect([huge.count, huge.findFirst(), huge.findNext(0), huge.test(last)]).toEqual([
      0,
      -1,
      -1,
      false,
    ]);
  });

  it('an empty set answers -1 from everywhere, at every size', () => {
    for (const bitCount of BIT_COUNTS) {
      const bits = new BitsetIndex(bitCount);
      expect(bits.findFirst()).toBe(-1);
      for (const from of [-5, 0, 31, 32, 63, 64, bitCount - 1, bitCount, bitCount + 40])
        expect(bits.findNext(from), `${bitCount} from ${from}`).toBe(-1);
      expect(bits.count).toBe(0);
    }
  });

  it('one bit at each edge: test, findFirst and findNext from every edge around it', () => {
    for (const bitCount of BIT_COUNTS) {
      const positions = [...new Set([...EDGES, bitCount - 1].filter((p) => p < bitCount))];
      for (const bit of positions) {
        const bits = new BitsetIndex(bitCount);
        bits.set(bit);
        expect(bits.findFirst(), `${bitCount}: bit ${bit}`).toBe(bit);
        for (const from of [-1, ...positions, bitCount]) {
          expect(bits.findNext(from), `${bitCount}: bit ${bit} from ${from}`).toBe(
            from <= bit ? bit : -1,
          );
        }
        for (const other of positions) expect(bits.test(other)).toBe(other === bit);
        bits.clear(bit);
        expect([bits.count, bits.findFirst(), bits.findNext(0)]).toEqual([0, -1, -1]);
      }
    }
  });

  it('two bits far apart in a five-level index: the walk climbs and descends every level', () => {
    const bitCount = 2 ** 20 + 1; // 32769, 1025, 33, 2 and 1 words
    const bits = new BitsetIndex(bitCount);
    bits.set(2 ** 20);
    bits.set(5);
    expect([
      bits.findFirst(),
      bits.findNext(0),
      bits.findNext(5),
      bits.findNext(6),
      bits.findNext(2 ** 20),
      bits.findNext(2 ** 20 + 1),
    ]).toEqual([5, 5, 5, 2 ** 20, 2 ** 20, -1]);
    bits.set(32768 * 17 + 3);
    expect(bits.findNext(6)).toBe(32768 * 17 + 3);
    expect(bits.findNext(32768 * 17 + 4)).toBe(2 ** 20);
    bits.clear(5);
    expect(bits.findFirst()).toBe(32768 * 17 + 3);
    bits.clear(32768 * 17 + 3);
    expect([bits.findFirst(), bits.count]).toEqual([2 ** 20, 1]);
  });

  it('clearing one bit of a word keeps its neighbours findable (summary bits stay while the word is non-zero)', () => {
    const bits = new BitsetIndex(4096);
    for (const bit of [32, 33, 63, 1024, 1055]) bits.set(bit);
    bits.clear(32);
    expect([bits.findFirst(), bits.findNext(0), bits.findNext(34)]).toEqual([33, 33, 63]);
    bits.clear(33);
    bits.clear(63);
    expect([bits.findFirst(), bits.findNext(0)]).toEqual([1024, 1024]);
    bits.clear(1024);
    expect([bits.findFirst(), bits.findNext(0), bits.count]).toEqual([1055, 1055, 1]);
    bits.clear(1024); // already clear: no change
    bits.set(1055); // already set: no change
    expect([bits.findFirst(), bits.count]).toEqual([1055, 1]);
  });

  it('random set/clear/test/findNext sequences agree with a Set after every step', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BIT_COUNTS),
        fc.array(bitOp, { maxLength: 80 }),
        (bitCount, ops) => {
          const bits = new BitsetIndex(bitCount);
          const reference = new Set<number>();
          for (const op of ops) {
            const at = op.at(bitCount);
            if (op.kind === 'set') {
              bits.set(at);
              reference.add(at);
            } else if (op.kind === 'clear') {
              bits.clear(at);
              reference.delete(at);
            } else if (op.kind === 'test') {
              expect(bits.test(at)).toBe(reference.has(at));
            } else {
              expect(bits.findNext(at), `findNext(${at})`).toBe(
                at >= bitCount ? -1 : nextIn(reference, at),
              );
            }
            expect(bits.count).toBe(reference.size);
            expect(bits.findFirst()).toBe(nextIn(reference, 0));
          }
          for (const member of reference) expect(bits.test(member)).toBe(true);
          // Walking findNext from the first bit lists the members in order.
          const walked: number[] = [];
          for (let at = bits.findFirst(); at >= 0; at = bits.findNext(at + 1)) walked.push(at);
          expect(walked).toEqual([...reference].sort((a, b) => a - b));
        },
      ),
      { seed: 1, numRuns: 200 },
    );
  });

  it('lowestBit names the lowest set bit of every 32-bit word', () => {
    for (let bit = 0; bit < 32; bit++) {
      expect(lowestBit(2 ** bit)).toBe(bit);
      expect(lowestBit((1 << bit) | 0)).toBe(bit); // the signed form of bit 31 too
      expect(lowestBit(0xffffffff - (2 ** bit - 1))).toBe(bit);
    }
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0xffffffff }), (word) => {
        let expected = 0;
        while (Math.floor(word / 2 ** expected) % 2 === 0) expected++;
        expect(lowestBit(word)).toBe(expected);
        expect(lowestBit(word | 0)).toBe(expected);
      }),
      { seed: 2, numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// NumberMap
// ---------------------------------------------------------------------------------------------

/**
 * Keys that share their low 20 bits. The map's slot depends on the low bits first, so in a
 * small table these probe the same slots and build long runs; the test does not rely on it
 * (every answer is checked against a Map whatever the slots are), it only makes runs likely.
 */
const SPREAD = 2 ** 20;
const mapKey = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc
    .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 15 }))
    .map(([base, i]) => base + i * SPREAD),
  fc.integer({ min: 0, max: 20 }).map((i) => 2 ** 32 + i),
  fc.integer({ min: 0, max: 20 }).map((i) => 2 ** 32 * (i + 1)), // same low 32 bits (zero), different high parts
  fc.integer({ min: 0, max: 20 }).map((i) => 2 ** 52 + i * 4096),
  fc.integer({ min: 0, max: 5 }).map((i) => Number.MAX_SAFE_INTEGER - i),
  fc.constantFrom(0xffffffff, 0x100000000, 0x7fffffff, 0x80000000),
  fc.maxSafeNat(),
);
const mapValue = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: false }),
  fc.constant(-1),
);
type MapOp = { kind: 'set'; key: number; value: number } | { kind: 'delete' | 'get'; key: number };
const mapOp: fc.Arbitrary<MapOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('set' as const), key: mapKey, value: mapValue }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: mapKey }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('get' as const), key: mapKey }) },
);

/** Lookups no entry can answer: negative (the empty mark -1 among them), NaN, fractions never set. */
const IMPOSSIBLE = [-1, -2, -0.5, Number.NaN, Number.NEGATIVE_INFINITY, -(2 ** 32), -(2 ** 52)];

function entriesOf(map: Iterable<[number, number]>): [number, number][] {
  return [...map].sort((a, b) => a[0] - b[0]);
}

/** Every key of `reference` and every probed key answers as the Map does; iteration lists exactly its entries. */
function expectSameMap(
  map: NumberMap,
  reference: Map<number, number>,
  probes: Iterable<number>,
): void {
  // One comparison of whole answer lists (an expect per lookup would dominate the run time).
  const keys = [...probes, ...IMPOSSIBLE];
  const answers = (m: {
    size: number;
    has(key: number): boolean;
    get(key: number): number | undefined;
  }) => ({
    size: m.size,
    lookups: keys.map((key) => [key, m.has(key), m.get(key)]),
  });
  expect(answers(map)).toEqual(answers(reference));
  expect(entriesOf(map)).toEqual(entriesOf(reference));
}

describe('NumberMap against a JS Map', () => {
  it('an empty map: size 0, every lookup absent (the empty mark -1 included), deletes answer false', () => {
    const map = new NumberMap();
    expectSameMap(map, new Map(), [0, 1, 15, 16, 2 ** 32, 2 ** 52, Number.MAX_SAFE_INTEGER]);
    for (const key of [0, 7, -1, Number.NaN, 2 ** 40]) expect(map.delete(key)).toBe(false);
    expect(map.size).toBe(0);
    expect([...map]).toEqual([]);
  });

  it('refuses a negative or NaN key with its message and stays unchanged', () => {
    const map = new NumberMap().set(3, 30);
    for (const key of [-1, -0.5, -(2 ** 40), Number.NaN, Number.NEGATIVE_INFINITY]) {
      expect(() => map.set(key, 1)).toThrow(
        new Error(`NumberMap: keys are non-negative, got ${key}`),
      );
    }
    expectSameMap(map, new Map([[3, 30]]), [3, 0]);
  });

  it('key 0, set returning the map, overwrite keeping the size, delete answering true once', () => {
    const map = new NumberMap();
    expect(map.set(0, 5)).toBe(map);
    expect(map.set(0, 6)).toBe(map); // the overwrite path returns it too
    expect([map.size, map.get(0), map.has(0)]).toEqual([1, 6, true]);
    map.set(2 ** 53 - 1, -1).set(2 ** 32, 0);
    expectSameMap(
      map,
      new Map([
        [0, 6],
        [2 ** 53 - 1, -1],
        [2 ** 32, 0],
      ]),
      [0, 1, 2 ** 32 + 1, 2 ** 53 - 2],
    );
    expect(map.delete(0)).toBe(true);
    expect(map.delete(0)).toBe(false);
    expect([map.size, map.get(0), map.has(0)]).toEqual([2, undefined, false]);
    // -0 is the key 0, as in a Map.
    map.set(-0, 9);
    expect([map.get(0), map.has(0), map.size]).toEqual([9, true, 3]);
  });

  it('grows past many entries (every doubling), then shrinks back by deletes, answering like a Map', () => {
    const map = new NumberMap();
    const reference = new Map<number, number>();
    const keyOf = (i: number): number =>
      i % 3 === 0 ? i * 256 : i % 3 === 1 ? 2 ** 32 + i * 7 : 2 ** 52 + i * 4096;
    for (let i = 0; i < 3000; i++) {
      map.set(keyOf(i), i);
      reference.set(keyOf(i), i);
      // Check around each rebuild (the table doubles when it is half full: 9, 17, 33, ... entries).
      if ((i & (i - 1)) === 0 || ((i + 1) & i) === 0)
        expectSameMap(map, reference, [keyOf(i), keyOf(i + 1), 0]);
    }
    expectSameMap(
      map,
      reference,
      Array.from({ length: 3001 }, (_, i) => keyOf(i)),
    );
    for (let i = 0; i < 3000; i += 2) {
      expect(map.delete(keyOf(i))).toBe(true);
      reference.delete(keyOf(i));
    }
    expectSameMap(
      map,
      reference,
      Array.from({ length: 3000 }, (_, i) => keyOf(i)),
    );
    for (let i = 1; i < 3000; i += 2) {
      map.set(keyOf(i), -i); // overwrite after the churn
      reference.set(keyOf(i), -i);
    }
    expectSameMap(
      map,
      reference,
      Array.from({ length: 3000 }, (_, i) => keyOf(i)),
    );
  });

  it('runs of keys that probe together: deleting from any place of the run keeps the rest reachable', () => {
    // 16 bases (so some runs start near the end of the 16-slot table and wrap to its start), 8
    // keys each (the most the first table holds), deleted in 24 orders each, checked after every delete.
    const orders = fc.sample(
      fc.shuffledSubarray([0, 1, 2, 3, 4, 5, 6, 7], { minLength: 8, maxLength: 8 }),
      { seed: 3, numRuns: 24 },
    );
    for (let base = 0; base < 16; base++) {
      const keys = Array.from({ length: 8 }, (_, i) => base + i * SPREAD);
      for (const order of orders) {
        const map = new NumberMap();
        const reference = new Map<number, number>();
        for (const key of keys) {
          map.set(key, key + 1);
          reference.set(key, key + 1);
        }
        for (const at of order) {
          expect(map.delete(keys[at]!)).toBe(true);
          reference.delete(keys[at]!);
          expectSameMap(map, reference, keys);
        }
      }
    }
  });

  it('a half-full table churned (delete one, insert another) keeps every answer, with no growth needed', () => {
    const map = new NumberMap();
    const reference = new Map<number, number>();
    const live: number[] = [];
    let next = 0;
    const keyOf = (i: number): number =>
      (i % 4) + Math.floor(i / 4) * SPREAD + (i % 5 === 0 ? 2 ** 33 : 0);
    for (; next < 8; next++) {
      map.set(keyOf(next), next);
      reference.set(keyOf(next), next);
      live.push(keyOf(next));
    }
    for (let step = 0; step < 400; step++) {
      const victim = live.splice((step * 5) % live.length, 1)[0]!;
      expect(map.delete(victim)).toBe(true);
      reference.delete(victim);
      map.set(keyOf(next), next);
      reference.set(keyOf(next), next);
      live.push(keyOf(next));
      next++;
      expectSameMap(map, reference, [...live, victim]);
    }
  });

  it('random set/delete/get sequences agree with a Map after every step', () => {
    fc.assert(
      fc.property(fc.array(mapOp, { maxLength: 120 }), (ops) => {
        const map = new NumberMap();
        const reference = new Map<number, number>();
        const touched = new Set<number>();
        for (const op of ops) {
          touched.add(op.key);
          if (op.kind === 'set') {
            expect(map.set(op.key, op.value)).toBe(map);
            reference.set(op.key, op.value);
          } else if (op.kind === 'delete') {
            expect(map.delete(op.key), `delete(${op.key})`).toBe(reference.delete(op.key));
          } else {
            expect(map.get(op.key)).toBe(reference.get(op.key));
            expect(map.has(op.key)).toBe(reference.has(op.key));
          }
          expect(map.size).toBe(reference.size);
        }
        expectSameMap(map, reference, touched);
      }),
      { seed: 4, numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// NumberDeque
// ---------------------------------------------------------------------------------------------

function expectSameDeque(deque: NumberDeque, reference: readonly number[]): void {
  const contents = Array.from({ length: deque.count }, (_, i) => deque.at(i));
  expect({
    count: deque.count,
    contents,
    front: deque.count > 0 ? deque.peekFront() : undefined,
  }).toEqual({
    count: reference.length,
    contents: reference,
    front: reference[0],
  });
}

describe('NumberDeque against a plain array', () => {
  it('refuses an initial capacity that is not a power of two, with its message', () => {
    for (const capacity of [
      0,
      -1,
      -4,
      3,
      6,
      12,
      1.5,
      0.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      2 ** 53 + 2,
      2 ** 32 + 2,
      3 * 2 ** 32,
      2 ** 31 + 2 ** 30,
      2 ** 31,
    ]) {
      expect(() => new NumberDeque(capacity)).toThrow(
        new Error(`deque: initial capacity must be a power of two from 1 to 2^30, got ${capacity}`),
      );
    }
  });

  it('takes capacity 1 and the default, and grows from both', () => {
    for (const deque of [new NumberDeque(1), new NumberDeque(2), new NumberDeque()]) {
      const reference: number[] = [];
      expectSameDeque(deque, reference);
      for (let i = 0; i < 40; i++) {
        deque.push(i * 1.5 - 7);
        reference.push(i * 1.5 - 7);
        expectSameDeque(deque, reference);
      }
      for (let i = 0; i < 40; i++) {
        deque.popFront();
        reference.shift();
        expectSameDeque(deque, reference);
      }
    }
  });

  it('a ring whose front has passed the end grows with its order kept (every front position)', () => {
    for (const capacity of [1, 2, 4, 8, 16]) {
      for (let shift = 0; shift < capacity; shift++) {
        const deque = new NumberDeque(capacity);
        const reference: number[] = [];
        // Move the front `shift` places on, then fill the ring so its contents wrap, then grow it.
        for (let i = 0; i < shift; i++) {
          deque.push(-1 - i);
          deque.popFront();
        }
        for (let i = 0; i < capacity * 3 + 1; i++) {
          deque.push(i);
          reference.push(i);
          expectSameDeque(deque, reference);
        }
        // Pop half and push again so the grown ring wraps too.
        for (let i = 0; i < capacity * 2; i++) {
          deque.popFront();
          reference.shift();
          deque.push(1000 + i);
          reference.push(1000 + i);
          expectSameDeque(deque, reference);
        }
      }
    }
  });

  it('random push/pop sequences agree with an array after every step', () => {
    const op = fc.oneof(
      fc.record({ push: fc.double({ noNaN: true }) }),
      fc.record({ pops: fc.integer({ min: 1, max: 5 }) }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 4, 8, 16, 32),
        fc.array(op, { maxLength: 150 }),
        (capacity, ops) => {
          const deque = new NumberDeque(capacity);
          const reference: number[] = [];
          for (const step of ops) {
            if ('push' in step) {
              deque.push(step.push);
              reference.push(step.push);
            } else {
              for (let i = 0; i < step.pops && reference.length > 0; i++) {
                deque.popFront();
                reference.shift();
              }
            }
            expectSameDeque(deque, reference);
          }
        },
      ),
      { seed: 5, numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// typed-arrays: grownCopy, inOrderNodes, xorshift32
// ---------------------------------------------------------------------------------------------

/** xorshift32 (13, 17, 5) in BigInt arithmetic modulo 2^32. */
function xorshiftReference(state: number): number {
  const mask = (1n << 32n) - 1n;
  let x = BigInt(state >>> 0);
  x ^= (x << 13n) & mask;
  x ^= x >> 17n;
  x ^= (x << 5n) & mask;
  return Number(x);
}

/** A binary search tree over nodes 0..n-1 (inserted in `order`), links in typed arrays. */
function buildTree(
  order: readonly number[],
  nil: number,
): { root: number; left: Int32Array; right: Int32Array; height: number } {
  const n = order.length;
  const left = new Int32Array(Math.max(n, 1)).fill(nil);
  const right = new Int32Array(Math.max(n, 1)).fill(nil);
  let root = nil;
  let height = 0;
  for (const node of order) {
    if (root === nil) {
      root = node;
      height = 1;
      continue;
    }
    let at = root;
    let depth = 1;
    for (;;) {
      depth++;
      const side = node < at ? left : right;
      if (side[at] === nil) {
        side[at] = node;
        break;
      }
      at = side[at]!;
    }
    height = Math.max(height, depth);
  }
  return { root, left, right, height };
}

function inOrderReference(
  root: number,
  nil: number,
  left: Int32Array,
  right: Int32Array,
): number[] {
  if (root === nil) return [];
  return [
    ...inOrderReference(left[root]!, nil, left, right),
    root,
    ...inOrderReference(right[root]!, nil, left, right),
  ];
}

/** Runs inOrderNodes with `out`/`stack` of bound + 1 entries plus a guard tail that must stay untouched. */
function walk(
  root: number,
  nil: number,
  left: Int32Array,
  right: Int32Array,
  bound: number,
): number[] {
  const GUARD = 12345;
  const out = new Int32Array(bound + 1 + 8).fill(GUARD);
  const stack = new Int32Array(bound + 1 + 8).fill(GUARD);
  const count = inOrderNodes(root, nil, left, right, out, stack, bound);
  expect(count).toBeLessThanOrEqual(bound + 1);
  expect([...out.subarray(bound + 1)].every((v) => v === GUARD)).toBe(true);
  expect([...stack.subarray(bound + 1)].every((v) => v === GUARD)).toBe(true);
  return [...out.subarray(0, count)];
}

describe('typed-array helpers', () => {
  it('grownCopy keeps the element type and the contents, zero-fills the tail, leaves the old array alone', () => {
    const cases: [Int32Array | Uint32Array | Uint8Array | Float64Array, number][] = [
      [Int32Array.from([-5, 7, 2 ** 31 - 1]), 8],
      [Uint32Array.from([0xffffffff, 1]), 2],
      [Uint8Array.from([255, 0, 9]), 5],
      [Float64Array.from([0.5, -1e300, 2 ** 53]), 4],
      [new Float64Array(0), 3],
    ];
    for (const [old, length] of cases) {
      const before = [...old];
      const fresh = grownCopy(old, length);
      expect(fresh).not.toBe(old);
      expect(fresh.constructor).toBe(old.constructor);
      expect(fresh.length).toBe(length);
      expect([...fresh]).toEqual([...before, ...new Array(length - before.length).fill(0)]);
      fresh[0] = 42;
      expect([...old]).toEqual(before);
    }
  });

  it('inOrderNodes lists a tree in order, exactly its nodes when the bound allows them all', () => {
    expect(walk(-1, -1, new Int32Array(1), new Int32Array(1), 4)).toEqual([]);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }).chain((n) =>
          fc.shuffledSubarray(
            Array.from({ length: n }, (_, i) => i),
            { minLength: n, maxLength: n },
          ),
        ),
        fc.constantFrom(-1, 1 << 30),
        fc.integer({ min: 0, max: 3 }),
        (order, nil, slack) => {
          const { root, left, right, height } = buildTree(order, nil);
          const expected = inOrderReference(root, nil, left, right);
          expect(expected).toEqual([...order].sort((a, b) => a - b));
          // The documented bound: out and stack hold bound + 1 entries; n - 1 is the least that lists all n.
          expect(walk(root, nil, left, right, order.length - 1 + slack)).toEqual(expected);
          // A smaller bound stops after bound + 1 nodes (when the tree is no deeper than that).
          const bound = Math.max(0, order.length - 2 - slack);
          if (bound + 1 < order.length && height <= bound + 1)
            expect(walk(root, nil, left, right, bound)).toEqual(expected.slice(0, bound + 1));
        },
      ),
      { seed: 6, numRuns: 200 },
    );
  });

  it('inOrderNodes stops within its bound on corrupt links (cycles), writing nothing past bound + 1 entries', () => {
    const nil = -1;
    // A node that is its own left child: the descent never reaches nil.
    expect(walk(0, nil, Int32Array.from([0]), Int32Array.from([nil]), 5)).toEqual([
      0, 0, 0, 0, 0, 0,
    ]);
    // Node 1 (the root's left child) links right back to the root: each return to the root pushes
    // it and node 1 again, so the stack grows by one per node listed; once it holds bound + 1
    // entries the descent stops at the root, which is listed last.
    expect(walk(0, nil, Int32Array.from([1, nil]), Int32Array.from([nil, 0]), 6)).toEqual([
      1, 1, 1, 1, 1, 1, 0,
    ]);
    // A right link to itself.
    expect(walk(0, nil, Int32Array.from([nil]), Int32Array.from([0]), 3)).toEqual([0, 0, 0, 0]);
    // Bound 0: at most one node.
    expect(walk(0, nil, Int32Array.from([nil]), Int32Array.from([0]), 0)).toEqual([0]);
  });

  it('xorshift32 is the (13, 17, 5) xorshift of 32-bit words: exact sequences from fixed seeds', () => {
    expect(xorshift32(0)).toBe(0);
    // Marsaglia's example seed; the reference is BigInt arithmetic, not a recorded value.
    let a = 2463534242;
    let b = 2463534242;
    for (let i = 0; i < 1000; i++) {
      a = xorshift32(a);
      b = xorshiftReference(b);
      expect(a).toBe(b);
      expect(Number.isInteger(a) && a > 0 && a <= 0xffffffff).toBe(true);
    }
    expect(xorshift32(2463534242)).toBe(xorshiftReference(2463534242));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0xffffffff }), (seed) => {
        expect(xorshift32(seed)).toBe(xorshiftReference(seed));
        expect(xorshift32(seed | 0)).toBe(xorshiftReference(seed)); // a signed state is the same word
      }),
      { seed: 7, numRuns: 300 },
    );
    for (const seed of [1, 0x80000000, 0xffffffff, 0x7fffffff, 0x10000, 0x20000])
      expect(xorshift32(seed)).toBe(xorshiftReference(seed));
  });
});

// ---------------------------------------------------------------------------------------------
// allocator.ts helpers
// ---------------------------------------------------------------------------------------------

function expectContractError(error: unknown, code: string, message: string): void {
  expect(error).toBeInstanceOf(ContractError);
  expect((error as ContractError).code).toBe(code);
  expect((error as ContractError).message).toBe(`${code}: ${message}`);
}

describe('allocator.ts helpers', () => {
  it('the error codes are their own names', () => {
    expect(AllocErrors).toEqual({
      BAD_SIZE: 'BAD_SIZE',
      BAD_ALIGN: 'BAD_ALIGN',
      BAD_FREE: 'BAD_FREE',
    });
  });

  it('alignUp rounds up to a multiple of a power of two, as BigInt arithmetic does', () => {
    expect([
      alignUp(0, 256),
      alignUp(1, 256),
      alignUp(256, 256),
      alignUp(257, 256),
      alignUp(5, 1),
    ]).toEqual([0, 256, 256, 512, 5]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 0, max: 20 }),
        (value, log2) => {
          const align = 2 ** log2;
          const big = BigInt(align);
          expect(alignUp(value, align)).toBe(Number(((BigInt(value) + big - 1n) / big) * big));
        },
      ),
      { seed: 8, numRuns: 300 },
    );
  });

  it('validateRequest: size first (BAD_SIZE), then alignment (BAD_ALIGN), each naming the value', () => {
    for (const size of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expectContractError(
        thrownBy(() => validateRequest(size, 8)),
        'BAD_SIZE',
        `sizeBytes must be a positive integer, got ${size}`,
      );
      // A request bad in both ways answers BAD_SIZE.
      expectContractError(
        thrownBy(() => validateRequest(size, 3)),
        'BAD_SIZE',
        `sizeBytes must be a positive integer, got ${size}`,
      );
    }
    for (const align of [0, -2, 3, 1.5, Number.NaN, 2 ** 53 + 2]) {
      expectContractError(
        thrownBy(() => validateRequest(1, align)),
        'BAD_ALIGN',
        `alignBytes must be a power of two, got ${align}`,
      );
    }
    for (const [size, align] of [
      [1, 1],
      [Number.MAX_SAFE_INTEGER, 2 ** 52],
      [4096, 256],
    ] as const) {
      expect(() => validateRequest(size, align)).not.toThrow();
    }
  });

  it('badFree returns (does not throw) a BAD_FREE error naming the offset', () => {
    for (const offset of [0, 12, 2 ** 40, -1]) {
      expectContractError(
        badFree(offset),
        'BAD_FREE',
        `offset ${offset} is not the start of a live allocation`,
      );
      expect(badFree(offset)).toBeInstanceOf(Error);
    }
  });

  it('setLiveEntry/setBlockEntry rewrite an existing record in place and push a new one past the end', () => {
    const live: { offsetBytes: number; sizeBytes: number }[] = [];
    setLiveEntry(live, 0, 0, 16);
    setLiveEntry(live, 1, 16, 32);
    expect(live).toEqual([
      { offsetBytes: 0, sizeBytes: 16 },
      { offsetBytes: 16, sizeBytes: 32 },
    ]);
    const [first, second] = live;
    setLiveEntry(live, 1, 64, 8);
    setLiveEntry(live, 0, 48, 4);
    expect(live.length).toBe(2);
    expect(live[0]).toBe(first);
    expect(live[1]).toBe(second);
    expect(live).toEqual([
      { offsetBytes: 48, sizeBytes: 4 },
      { offsetBytes: 64, sizeBytes: 8 },
    ]);

    const blocks: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
    setBlockEntry(blocks, 0, 0, 256, true);
    setBlockEntry(blocks, 1, 256, 768, false);
    expect(blocks).toEqual([
      { offsetBytes: 0, sizeBytes: 256, free: true },
      { offsetBytes: 256, sizeBytes: 768, free: false },
    ]);
    const [b0, b1] = blocks;
    setBlockEntry(blocks, 0, 0, 512, false);
    setBlockEntry(blocks, 1, 512, 512, true);
    expect(blocks.length).toBe(2);
    expect(blocks[0]).toBe(b0);
    expect(blocks[1]).toBe(b1);
    expect(blocks).toEqual([
      { offsetBytes: 0, sizeBytes: 512, free: false },
      { offsetBytes: 512, sizeBytes: 512, free: true },
    ]);
  });

  it('copyLive/copyBlocks return fresh arrays of fresh records with exactly the fields', () => {
    expect(copyLive([])).toEqual([]);
    expect(copyBlocks([])).toEqual([]);
    const live = [
      { offsetBytes: 0, sizeBytes: 16, extra: 1 },
      { offsetBytes: 32, sizeBytes: 8, extra: 2 },
    ];
    const liveCopy = copyLive(live);
    expect(liveCopy).not.toBe(live);
    expect(liveCopy).toStrictEqual([
      { offsetBytes: 0, sizeBytes: 16 },
      { offsetBytes: 32, sizeBytes: 8 },
    ]);
    for (const [i, record] of liveCopy.entries()) expect(record).not.toBe(live[i]);
    live[0]!.offsetBytes = 99; // the view's records are reused later: the copy must not follow them
    expect(liveCopy[0]!.offsetBytes).toBe(0);

    const blocks = [
      { offsetBytes: 0, sizeBytes: 256, free: true, extra: 'x' },
      { offsetBytes: 256, sizeBytes: 256, free: false, extra: 'y' },
    ];
    const blockCopy = copyBlocks(blocks);
    expect(blockCopy).not.toBe(blocks);
    expect(blockCopy).toStrictEqual([
      { offsetBytes: 0, sizeBytes: 256, free: true },
      { offsetBytes: 256, sizeBytes: 256, free: false },
    ]);
    for (const [i, record] of blockCopy.entries()) expect(record).not.toBe(blocks[i]);
    blocks[1]!.free = true;
    expect(blockCopy[1]!.free).toBe(false);
  });

  it('inspectBlocks/inspectLive read the view methods when present, the copying ones otherwise', () => {
    const calls: string[] = [];
    const viewBlocks: readonly BlockInfo[] = [{ offsetBytes: 0, sizeBytes: 64, free: true }];
    const copiedBlocks: BlockInfo[] = [{ offsetBytes: 0, sizeBytes: 64, free: true }];
    const viewLive: readonly LiveAllocation[] = [{ offsetBytes: 0, sizeBytes: 8 }];
    const copiedLive: LiveAllocation[] = [{ offsetBytes: 0, sizeBytes: 8 }];
    const base = {
      capacityBytes: 64,
      alloc: () => null,
      free: () => undefined,
      live: () => {
        calls.push('live');
        return copiedLive;
      },
      freeBytes: () => 64,
      usedBytes: () => 0,
      wasteBytes: () => 0,
      isPristine: () => true,
      blocks: () => {
        calls.push('blocks');
        return copiedBlocks;
      },
      checkIndexes: () => null,
    };
    const plain: BlockAllocator = { ...base };
    const withViews: BlockAllocator = {
      ...base,
      blocksView: () => {
        calls.push('blocksView');
        return viewBlocks;
      },
      liveView: () => {
        calls.push('liveView');
        return viewLive;
      },
    };
    expect(inspectBlocks(withViews)).toBe(viewBlocks);
    expect(inspectLive(withViews)).toBe(viewLive);
    expect(calls).toEqual(['blocksView', 'liveView']);
    calls.length = 0;
    expect(inspectBlocks(plain)).toBe(copiedBlocks);
    expect(inspectLive(plain as InspectableAllocator)).toBe(copiedLive);
    expect(calls).toEqual(['blocks', 'live']);
  });
});
