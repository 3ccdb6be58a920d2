/**
 * First fit's live offsets: a hash table from each allocation's offset to its node, so free()
 * finds its block in O(1) expected time at any heap size. Open addressing with linear probing
 * over typed arrays (offsets as float64, -1 for an empty slot), at most half full; a removal
 * shifts the entries behind it back (no tombstones, so probes stay short). The slot is the top
 * bits of a multiplicative hash of the offset's two 32-bit halves.
 *
 * The same mechanism as NumberMap (typed-arrays.ts), kept apart on purpose: first fit built on
 * NumberMap (a subclass naming what it uses, even with NumberMap given this hash) ran its pair
 * loop 3-5 % slower on W1 (`bench/_first-fit-pairs.ts`, five rounds alternating): NumberMap's
 * set probes for an existing key, its values are float64, and the extra call layer falls outside
 * alloc's and free's inlining budget.
 */

/** The offset of an empty slot. */
export const EMPTY_SLOT = -1;
/** 8 slots: a float64 table of 64 bytes, which V8 keeps on its heap (a larger one costs an off-heap buffer). */
const INITIAL_LOG = 3;

export class LiveOffsets {
  /** offsets[i]: the offset held in slot i, or EMPTY_SLOT. */
  offsets = new Float64Array(1 << INITIAL_LOG).fill(EMPTY_SLOT);
  /** nodes[i]: the node of the offset in slot i. */
  nodes = new Int32Array(1 << INITIAL_LOG);
  /** Entries held. */
  count = 0;
  private mask = (1 << INITIAL_LOG) - 1;
  private shift = 32 - INITIAL_LOG;

  /** The home slot of `offset` (a non-negative safe integer). */
  slotOf(offset: number): number {
    return Math.imul((offset >>> 0) ^ ((offset / 4294967296) | 0), 0x9e3779b1) >>> this.shift;
  }

  /** Records `node` at `offset` (not held now). */
  put(offset: number, node: number): void {
    if (2 * (this.count + 1) > this.offsets.length) this.grow();
    const offsets = this.offsets;
    const mask = this.mask;
    let i = this.slotOf(offset);
    while (offsets[i] !== -1 /* EMPTY_SLOT */) i = (i + 1) & mask;
    offsets[i] = offset;
    this.nodes[i] = node;
    this.count++;
  }

  /** The node held at `offset`, or NIL (for any number: a negative one would match EMPTY_SLOT). */
  get(offset: number): number {
    if (!(offset >= 0)) return -1 /* NIL */;
    const offsets = this.offsets;
    const mask = this.mask;
    for (let i = this.slotOf(offset); ; i = (i + 1) & mask) {
      const held = offsets[i]!;
      if (held === offset) return this.nodes[i]!;
      if (held === -1 /* EMPTY_SLOT */) return -1 /* NIL */;
    }
  }

  /** Removes `offset` and returns its node, or NIL when it is not held (any number, like get). */
  take(offset: number): number {
    if (!(offset >= 0)) return -1 /* NIL */;
    const offsets = this.offsets;
    const nodes = this.nodes;
    const mask = this.mask;
    let hole = this.slotOf(offset);
    for (;;) {
      const held = offsets[hole]!;
      if (held === offset) break;
      if (held === -1 /* EMPTY_SLOT */) return -1 /* NIL */;
      hole = (hole + 1) & mask;
    }
    const node = nodes[hole]!;
    this.count--;
    // Entries after the hole whose home is not between the hole and them move back into it.
    for (let i = (hole + 1) & mask; ; i = (i + 1) & mask) {
      const held = offsets[i]!;
      if (held === -1 /* EMPTY_SLOT */) break;
      if (((i - this.slotOf(held)) & mask) >= ((i - hole) & mask)) {
        offsets[hole] = held;
        nodes[hole] = nodes[i]!;
        hole = i;
      }
    }
    offsets[hole] = -1 /* EMPTY_SLOT */;
    return node;
  }

  private grow(): void {
    const offsets = this.offsets;
    const nodes = this.nodes;
    const length = offsets.length * 2;
    this.offsets = new Float64Array(length).fill(EMPTY_SLOT);
    this.nodes = new Int32Array(length);
    this.mask = length - 1;
    this.shift--;
    this.count = 0;
    for (let i = 0; i < offsets.length; i++) {
      if (offsets[i] !== EMPTY_SLOT) this.put(offsets[i]!, nodes[i]!);
    }
  }
}
