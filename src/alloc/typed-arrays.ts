/** Typed-array helpers shared by the allocators' node pools (best fit, first fit). */

export type NodeArray = Int32Array | Uint32Array | Uint8Array | Float64Array;

/** A copy of `old` of the same element type with `length` elements (the tail is zero). */
export function grownCopy<T extends NodeArray>(old: T, length: number): T {
  const fresh = new (old.constructor as new (length: number) => T)(length);
  fresh.set(old);
  return fresh;
}

/**
 * Writes the nodes of a binary tree (child links in `left`/`right`, `nil` for none) into `out`
 * in order, using `stack`; both must hold `bound` + 1 entries. Bounded by `bound` nodes even if
 * the links are corrupt (inspection must not hang on a broken allocator). Returns the count.
 */
export function inOrderNodes(root: number, nil: number, left: Int32Array, right: Int32Array, out: Int32Array, stack: Int32Array, bound: number): number {
  let count = 0;
  let depth = 0;
  let node = root;
  while ((node !== nil || depth > 0) && count <= bound && depth <= bound) {
    while (node !== nil && depth <= bound) {
      stack[depth++] = node;
      node = left[node]!;
    }
    node = stack[--depth]!;
    out[count++] = node;
    node = right[node]!;
  }
  return count;
}

/** The next value of a xorshift32 sequence: deterministic treap priorities. */
export function xorshift32(state: number): number {
  let x = state;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

const EMPTY = 0;
const FULL = 1;
const DELETED = 2;

/**
 * A map from non-negative safe integers to numbers in typed arrays (open addressing, linear
 * probing). It replaces Map on the allocators' hot paths: V8's Map rehashes at an unchanged
 * capacity when a table near its limit sees a delete then a set, so a steady state that frees
 * and reallocates the same offsets paid O(n) per operation. Here a full table (live entries plus
 * tombstones over 3/4) is rebuilt with room for twice the live entries: O(1) amortized.
 */
export class NumberMap {
  private keys = new Float64Array(16);
  private values = new Float64Array(16);
  private states = new Uint8Array(16);
  private count = 0;
  private used = 0;

  get size(): number {
    return this.count;
  }

  /** The first slot `key` probes (a hash of both 32-bit halves of a safe integer). */
  private homeSlot(key: number): number {
    const h = Math.imul((key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x9e3779b1), 0x85ebca6b);
    return (h ^ (h >>> 13)) & (this.keys.length - 1);
  }

  /** The slot holding `key`, else the slot an insert of it takes (the first tombstone or empty slot on its probe). */
  private slotOf(key: number): number {
    const mask = this.keys.length - 1;
    let slot = this.homeSlot(key);
    let tombstone = -1;
    for (;;) {
      const state = this.states[slot]!;
      if (state === EMPTY) return tombstone >= 0 ? tombstone : slot;
      if (state === FULL && this.keys[slot] === key) return slot;
      if (state === DELETED && tombstone < 0) tombstone = slot;
      slot = (slot + 1) & mask;
    }
  }

  private find(key: number): number {
    const mask = this.keys.length - 1;
    let slot = this.homeSlot(key);
    for (;;) {
      const state = this.states[slot]!;
      if (state === EMPTY) return -1;
      if (state === FULL && this.keys[slot] === key) return slot;
      slot = (slot + 1) & mask;
    }
  }

  get(key: number): number | undefined {
    const slot = this.find(key);
    return slot < 0 ? undefined : this.values[slot];
  }

  has(key: number): boolean {
    return this.find(key) >= 0;
  }

  set(key: number, value: number): this {
    let slot = this.slotOf(key);
    if (this.states[slot] === FULL) {
      this.values[slot] = value;
      return this;
    }
    if ((this.used + 1) * 4 > this.keys.length * 3) {
      this.rebuild();
      slot = this.slotOf(key);
    }
    if (this.states[slot] === EMPTY) this.used++;
    this.states[slot] = FULL;
    this.keys[slot] = key;
    this.values[slot] = value;
    this.count++;
    return this;
  }

  delete(key: number): boolean {
    const slot = this.find(key);
    if (slot < 0) return false;
    this.states[slot] = DELETED;
    this.count--;
    return true;
  }

  /** Rehashes the live entries into a table with at least twice their number of slots. */
  private rebuild(): void {
    const { keys, values, states } = this;
    let capacity = 16;
    while (capacity < (this.count + 1) * 4) capacity *= 2;
    this.keys = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.states = new Uint8Array(capacity);
    this.count = 0;
    this.used = 0;
    for (let slot = 0; slot < states.length; slot++) if (states[slot] === FULL) this.set(keys[slot]!, values[slot]!);
  }

  *[Symbol.iterator](): IterableIterator<[number, number]> {
    for (let slot = 0; slot < this.states.length; slot++) if (this.states[slot] === FULL) yield [this.keys[slot]!, this.values[slot]!];
  }
}
