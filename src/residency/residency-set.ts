/**
 * Residency sets and their slot pool, as an engine would ship them.
 *
 * - Per-object slot flags are a bitset: `slotCount / 8` bytes per object (128 bytes for
 *   Unreal's 1024 slots, against 1 KB of bools), so dedupe is one word read and mask.
 * - A set's storage is an Int32Array grown by the spec's rule (initial, then x1.5 in float32).
 * - The slot pool hands out the lowest free slot from a bitset.
 * - The master-set merge reuses one scratch array across submissions.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { ContractError } from '../contract.js';
import { appendSetBits, SlotPool } from './slot-pool.js';
import {
  INVALID_SLOT,
  SetErrors,
  nextCapacity,
  type ExecuteResult,
  type HResult,
  type ResidencySetConfig,
  type ResidencySetPool,
} from './residency-set-types.js';

/** Entries of the master-set merge scratch before its first growth (a batch referencing more grows it). */
export const INITIAL_MASTER_SCRATCH = 64;

export class ResidencySet {
  slot = INVALID_SLOT;
  isOpen = false;
  outOfMemory = false;
  size = 0;
  storage: Int32Array | null = null;
  constructor(readonly id: number) {}
  get capacity(): number {
    return this.storage === null ? 0 : this.storage.length;
  }
}

export class ResidencySetPoolImpl implements ResidencySetPool {
  protected readonly slots: SlotPool;
  /** Flag bits: object `o`, slot `s` is bit `s & 31` of word `o * wordsPerObject + (s >>> 5)`. */
  protected readonly flags: Uint32Array;
  protected readonly wordsPerObject: number;
  protected readonly sets: (ResidencySet | undefined)[] = [];
  protected readonly sizesBytes: Float64Array;
  private masterScratch = new Int32Array(INITIAL_MASTER_SCRATCH);
  private growthFailureArmed = false;
  /** Bytes of the unique objects of the last `mergeUnique`. */
  protected mergedBytes = 0;

  constructor(protected readonly config: ResidencySetConfig) {
    this.slots = new SlotPool(config.slotCount);
    this.wordsPerObject = Math.ceil(config.slotCount / 32);
    this.flags = new Uint32Array(config.objectSizesBytes.length * this.wordsPerObject);
    this.sizesBytes = Float64Array.from(config.objectSizesBytes);
  }

  /** The slot pool, for inspection (its taken count and per-slot answers); callers must not acquire or release through it. */
  get slotPool(): SlotPool {
    return this.slots;
  }

  /** Bytes of flag memory each tracked object carries. */
  get flagBytesPerObject(): number {
    return this.wordsPerObject * 4;
  }

  protected set(id: number): ResidencySet {
    const set = this.sets[id];
    if (set === undefined) throw new Error(`residency set ${id} does not exist`);
    return set;
  }

  createSet(): number {
    const id = this.sets.length;
    this.sets.push(new ResidencySet(id));
    return id;
  }

  destroySet(id: number): void {
    if (this.set(id).isOpen) throw new ContractError(SetErrors.DESTROY_OPEN, `set ${id} is open`);
    this.sets[id] = undefined;
  }

  open(id: number): HResult {
    const set = this.set(id);
    if (set.isOpen) return 'E_INVALIDARG';
    const slot = this.slots.acquire();
    if (slot < 0) return 'E_OUTOFMEMORY';
    set.slot = slot;
    set.isOpen = true;
    set.outOfMemory = false;
    this.resetOnOpen(set);
    return 'S_OK';
  }

  /** Open empties the set logically; the storage is kept for reuse. */
  protected resetOnOpen(set: ResidencySet): void {
    set.size = 0;
  }

  insert(id: number, object: number): boolean {
    const set = this.set(id);
    if (!set.isOpen) throw new ContractError(SetErrors.INSERT_CLOSED, `set ${id} is not open`);
    if (set.outOfMemory) {
      // Stuck: a flagged object is still a duplicate (the flag test comes first); any other
      // object would make the original realloc from a null array.
      if (this.isFlagged(object, set.slot)) return false;
      throw new ContractError(SetErrors.INSERT_OUT_OF_MEMORY, `set ${id} is stuck out of memory`);
    }
    return this.insertAtSlot(set, set.slot, object);
  }

  /** Flag first, then store: the library's order, which leaves the flag set on a failed growth. */
  protected insertAtSlot(set: ResidencySet, slot: number, object: number): boolean {
    const index = object * this.wordsPerObject + (slot >>> 5);
    const bit = 1 << (slot & 31);
    const word = this.flags[index]!;
    if (this.isDuplicate(word, bit, object)) return false;
    this.flags[index] = word | bit;
    if (this.needsGrowth(set)) {
      if (!this.grow(set)) {
        set.outOfMemory = true;
        return false;
      }
    }
    set.storage![set.size++] = object;
    return true;
  }

  protected isFlagged(object: number, slot: number): boolean {
    return (this.flags[object * this.wordsPerObject + (slot >>> 5)]! & (1 << (slot & 31))) !== 0;
  }

  protected isDuplicate(word: number, bit: number, _object: number): boolean {
    return (word & bit) !== 0;
  }

  protected needsGrowth(set: ResidencySet): boolean {
    return set.size >= set.capacity;
  }

  /** Realloc: the spec's capacity rule; returns false when the injected failure fires. */
  protected grow(set: ResidencySet): boolean {
    if (this.growthFailureArmed) {
      this.growthFailureArmed = false;
      return false;
    }
    const grown = new Int32Array(nextCapacity(set.capacity, this.config.initialCapacity));
    if (set.storage !== null) grown.set(set.storage.subarray(0, set.size));
    set.storage = grown;
    return true;
  }

  close(id: number): HResult {
    const set = this.set(id);
    if (!set.isOpen) return this.closeWhenClosed(set);
    if (set.outOfMemory) return 'E_OUTOFMEMORY';
    this.clearFlags(set);
    this.releaseSlot(set);
    return 'S_OK';
  }

  protected closeWhenClosed(_set: ResidencySet): HResult {
    return 'E_INVALIDARG';
  }

  /** Clears this set's flag on every stored object; must run while the slot is still known. */
  protected clearFlags(set: ResidencySet): void {
    const storage = set.storage;
    if (storage === null) return;
    const offset = set.slot >>> 5;
    const mask = ~(1 << (set.slot & 31));
    for (let i = 0; i < set.size; i++) {
      const index = storage[i]! * this.wordsPerObject + offset;
      this.flags[index] = this.flags[index]! & mask;
    }
  }

  protected releaseSlot(set: ResidencySet): void {
    this.slots.release(set.slot);
    set.slot = INVALID_SLOT;
    set.isOpen = false;
  }

  execute(ids: readonly (number | null)[]): ExecuteResult {
    let maxRefs = 0;
    for (const id of ids) {
      if (id === null) continue;
      const set = this.set(id);
      if (!this.validateClosed(set)) return { hr: 'E_INVALIDARG', objects: [], totalSizeBytes: 0 };
      maxRefs += set.size;
    }
    const masterSlot = this.acquireMasterSlot();
    if (masterSlot < 0) return { hr: 'E_OUTOFMEMORY', objects: [], totalSizeBytes: 0 };
    if (this.masterScratch.length < maxRefs)
      this.masterScratch = new Int32Array(Math.max(maxRefs, this.masterScratch.length * 2));
    const master = this.masterScratch;
    const count = this.mergeUnique(masterSlot, ids, 0, ids.length, master);
    this.releaseMasterSlot(masterSlot);
    return {
      hr: 'S_OK',
      objects: Array.from(master.subarray(0, count)),
      totalSizeBytes: this.mergedBytes,
    };
  }

  /**
   * The master-set merge with the master's flag slot (taken and returned by the caller): walks
   * the non-null sets of ids[from, to) in order and each set's objects in insertion order, keeps
   * the first sighting of each object (the master's flag is the dedupe test), writes the unique
   * objects into `out` and their total size into `mergedBytes`, then clears the master's flags
   * (closing the master). Returns the number of unique objects; allocates nothing. `out` must
   * have room for every unique object.
   */
  protected mergeUnique(
    masterSlot: number,
    ids: readonly (number | null)[],
    from: number,
    to: number,
    out: Int32Array,
  ): number {
    const offset = masterSlot >>> 5;
    const bit = 1 << (masterSlot & 31);
    const words = this.wordsPerObject;
    const flags = this.flags;
    let count = 0;
    let totalBytes = 0;
    for (let i = from; i < to; i++) {
      const id = ids[i];
      if (id === null || id === undefined) continue;
      const set = this.set(id);
      const storage = set.storage;
      for (let k = 0; k < set.size; k++) {
        const object = storage![k]!;
        const index = object * words + offset;
        const word = flags[index]!;
        if ((word & bit) !== 0) continue;
        flags[index] = word | bit;
        out[count++] = object;
        totalBytes += this.sizesBytes[object]!;
      }
    }
    for (let i = 0; i < count; i++) {
      const index = out[i]! * words + offset;
      flags[index] = flags[index]! & ~bit;
    }
    this.mergedBytes = totalBytes;
    return count;
  }

  protected validateClosed(set: ResidencySet): boolean {
    return !set.isOpen;
  }

  protected acquireMasterSlot(): number {
    return this.slots.acquire();
  }

  protected releaseMasterSlot(slot: number): void {
    this.slots.release(slot);
  }

  failNextGrowth(): void {
    this.growthFailureArmed = true;
  }

  slotOf(id: number): number {
    return this.set(id).slot;
  }
  isOpen(id: number): boolean {
    return this.set(id).isOpen;
  }
  isOutOfMemory(id: number): boolean {
    return this.set(id).outOfMemory;
  }
  contents(id: number): number[] {
    const set = this.set(id);
    const storage = set.storage;
    if (storage === null) return [];
    // A plain copy loop: a subarray view costs more than the few entries it would copy, and
    // pushing keeps the array packed for the code that reads it.
    const count = Math.min(set.size, set.capacity);
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(storage[i]!);
    return out;
  }
  capacity(id: number): number {
    return this.set(id).capacity;
  }
  /** Stored entries (exceeds capacity only in a broken variant; the invariants look). */
  size(id: number): number {
    return this.set(id).size;
  }
  takenSlots(): number[] {
    return this.slots.takenSlots();
  }
  flaggedSlots(object: number): number[] {
    const slots: number[] = [];
    const base = object * this.wordsPerObject;
    for (let w = 0; w < this.wordsPerObject; w++)
      appendSetBits(slots, this.flags[base + w]!, w * 32);
    return slots;
  }
}
