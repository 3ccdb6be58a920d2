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
export function inOrderNodes(
  root: number,
  nil: number,
  left: Int32Array,
  right: Int32Array,
  out: Int32Array,
  stack: Int32Array,
  bound: number,
): number {
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

/** The key of an empty slot (keys are non-negative). */
const EMPTY = -1;

/**
 * A map from non-negative safe integers to numbers in typed arrays (open addressing, linear
 * probing). It replaces Map on the allocators' hot paths: V8's Map rehashes at an unchanged
 * capacity when a table near its limit sees a delete then a set, so a steady state that frees
 * and reallocates the same offsets paid O(n) per operation. Here a delete shifts the entries
 * after it back into the hole (no tombstones, so churn never degrades the probes or forces a
 * rebuild), an empty slot holds the key -1 (a probe reads one array, not a state array too),
 * and the table doubles when it is half full: O(1) amortized.
 */
export class NumberMap {
  private keys = new Float64Array(16).fill(EMPTY);
  private values = new Float64Array(16);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The first slot `key` probes (a hash of both 32-bit halves of a safe integer). */
  private homeSlot(key: number): number {
    const h = Math.imul(
      key <= 0xffffffff
        ? key >>> 0
        : (key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x9e3779b1),
      0x85ebca6b,
    );
    return (h ^ (h >>> 13)) & (this.keys.length - 1);
  }

  /** The slot holding `key`, or -1 (also for a key no entry can have: negative, NaN). */
  private find(key: number): number {
    const keys = this.keys;
    const mask = keys.length - 1;
    let slot = this.homeSlot(key);
    for (;;) {
      const at = keys[slot]!;
      // EMPTY first: a lookup of -1 (the empty mark) must not match an empty slot.
      if (at === EMPTY) return -1;
      if (at === key) return slot;
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
    if (!(key >= 0)) throw new Error(`NumberMap: keys are non-negative, got ${key}`);
    let keys = this.keys;
    let mask = keys.length - 1;
    let slot = this.homeSlot(key);
    for (;;) {
      const at = keys[slot]!;
      if (at === key) {
        this.values[slot] = value;
        return this;
      }
      if (at === EMPTY) break;
      slot = (slot + 1) & mask;
    }
    if ((this.count + 1) * 2 > keys.length) {
      this.rebuild(keys.length * 2);
      keys = this.keys;
      mask = keys.length - 1;
      slot = this.homeSlot(key);
      while (keys[slot] !== EMPTY) slot = (slot + 1) & mask;
    }
    keys[slot] = key;
    this.values[slot] = value;
    this.count++;
    return this;
  }

  delete(key: number): boolean {
    let hole = this.find(key);
    if (hole < 0) return false;
    const keys = this.keys;
    const values = this.values;
    const mask = keys.length - 1;
    // Shift back every later entry of the run whose probe passes over the hole.
    for (let next = (hole + 1) & mask; ; next = (next + 1) & mask) {
      const at = keys[next]!;
      if (at === EMPTY) break;
      if (((next - this.homeSlot(at)) & mask) >= ((next - hole) & mask)) {
        keys[hole] = at;
        values[hole] = values[next]!;
        hole = next;
      }
    }
    keys[hole] = EMPTY;
    this.count--;
    return true;
  }

  /** Rehashes every entry into a table of `capacity` slots (a power of two). */
  private rebuild(capacity: number): void {
    const { keys, values } = this;
    this.keys = new Float64Array(capacity).fill(EMPTY);
    this.values = new Float64Array(capacity);
    this.count = 0;
    for (let slot = 0; slot < keys.length; slot++)
      if (keys[slot] !== EMPTY) this.set(keys[slot]!, values[slot]!);
  }

  *[Symbol.iterator](): IterableIterator<[number, number]> {
    for (let slot = 0; slot < this.keys.length; slot++)
      if (this.keys[slot] !== EMPTY) yield [this.keys[slot]!, this.values[slot]!];
  }
}
