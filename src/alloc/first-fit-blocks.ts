/**
 * First fit's node store: every block of the heap, free or allocated, as a node of one doubly
 * linked list in offset order. The blocks tile [0, capacity): a node's next block starts where it
 * ends, so a free() reaches both neighbours through two links and merges without any lookup.
 *
 * A node is one 32-byte record (half a cache line) in one buffer, read through two views: start
 * and size as float64 (any safe integer), the links and the free flag as int32. A walk of the
 * list touches one record per block. Node ids are recycled through a stack of spare ids, so the
 * buffer grows with the most blocks ever held at once, never with the number of operations.
 *
 * The constants below name the layout, but first fit's hot paths (alloc, free and what they
 * call; not construction, growth, inspection or the self-check) write them as literals tagged
 * with the name, `node * 4 /* F64_PER_NODE *\/ + 1 /* SIZE *\/`:
 * V8's optimizing compiler loads an imported (or module-level) const from its module cell on
 * every use instead of folding it; with the index arithmetic folded the pair loop takes 6-28 % less
 * time (docs/measurements.md, fifth round). properties/first-fit-literals.test.ts holds every
 * tag to the constant it names.
 */

/** "No node" in links and records. */
export const NIL = -1;
/** Nodes the store starts with room for (the buffer doubles when full). */
export const INITIAL_NODES = 16;
/** Bytes per node record, and its fields' indexes in the float64 and int32 views. */
export const NODE_BYTES = 32;
/** Node n's start is f64[n * F64_PER_NODE + START], its size f64[... + SIZE]. */
export const F64_PER_NODE = NODE_BYTES / 8;
export const START = 0;
export const SIZE = 1;
/** Node n's links and free flag are i32[n * I32_PER_NODE + PREV / NEXT / FREE]. */
export const I32_PER_NODE = NODE_BYTES / 4;
export const PREV = 4;
export const NEXT = 5;
export const FREE = 6;

export class BlockList {
  /**
   * The records as float64 (start at 4n, size at 4n + 1) and as int32 (prev, next, free at
   * 8n + 4, 5, 6): the accessors below read them; the search loops read them directly. Both are
   * replaced when the store grows.
   */
  f64: Float64Array;
  i32: Int32Array;
  /** Ids given back (spare[0..spareCount)), taken again before the high-water mark moves. */
  spare = new Int32Array(INITIAL_NODES);
  spareCount = 0;
  /** Ids below this have been handed out (each is listed or spare). */
  highWater = 0;
  /** The block at offset 0 (never merged away: merges keep the lower block's node). */
  head = NIL;

  constructor() {
    const buffer = new ArrayBuffer(INITIAL_NODES * NODE_BYTES);
    this.f64 = new Float64Array(buffer);
    this.i32 = new Int32Array(buffer);
  }

  /** Nodes the buffer holds now (ids at or above it were never handed out). */
  get room(): number {
    return this.spare.length;
  }

  start(node: number): number {
    return this.f64[node * 4 /* F64_PER_NODE */ + 0 /* START */]!;
  }
  size(node: number): number {
    return this.f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */]!;
  }
  /** The block before `node` in offset order, or NIL. */
  prev(node: number): number {
    return this.i32[node * 8 /* I32_PER_NODE */ + 4 /* PREV */]!;
  }
  /** The block after `node` in offset order, or NIL. */
  next(node: number): number {
    return this.i32[node * 8 /* I32_PER_NODE */ + 5 /* NEXT */]!;
  }
  isFree(node: number): boolean {
    return this.i32[node * 8 /* I32_PER_NODE */ + 6 /* FREE */] === 1;
  }

  setStart(node: number, start: number): void {
    this.f64[node * 4 /* F64_PER_NODE */ + 0 /* START */] = start;
  }
  setSize(node: number, sizeBytes: number): void {
    this.f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */] = sizeBytes;
  }
  setPrev(node: number, prev: number): void {
    this.i32[node * 8 /* I32_PER_NODE */ + 4 /* PREV */] = prev;
  }
  setNext(node: number, next: number): void {
    this.i32[node * 8 /* I32_PER_NODE */ + 5 /* NEXT */] = next;
  }
  setFree(node: number, free: boolean): void {
    this.i32[node * 8 /* I32_PER_NODE */ + 6 /* FREE */] = free ? 1 : 0;
  }

  /** A new unlinked node for [start, start + sizeBytes). */
  create(start: number, sizeBytes: number, free: boolean): number {
    let node: number;
    if (this.spareCount > 0) {
      node = this.spare[--this.spareCount]!;
    } else {
      if (this.highWater === this.spare.length) this.grow();
      node = this.highWater++;
    }
    this.setStart(node, start);
    this.setSize(node, sizeBytes);
    this.setFree(node, free);
    this.setPrev(node, -1 /* NIL */);
    this.setNext(node, -1 /* NIL */);
    return node;
  }

  /** Links the unlinked `node` right after `prior`. */
  insertAfter(prior: number, node: number): void {
    const following = this.next(prior);
    this.setPrev(node, prior);
    this.setNext(node, following);
    this.setNext(prior, node);
    if (following !== -1 /* NIL */) this.setPrev(following, node);
  }

  /** Unlinks `node` (not the head) and gives its id back. */
  remove(node: number): void {
    const before = this.prev(node);
    const following = this.next(node);
    this.setNext(before, following);
    if (following !== -1 /* NIL */) this.setPrev(following, before);
    this.spare[this.spareCount++] = node;
  }

  private grow(): void {
    const nodes = this.spare.length * 2;
    const f64 = new Float64Array(nodes * F64_PER_NODE);
    f64.set(this.f64);
    this.f64 = f64;
    this.i32 = new Int32Array(f64.buffer);
    const spare = new Int32Array(nodes);
    spare.set(this.spare);
    this.spare = spare;
  }
}
