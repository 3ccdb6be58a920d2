/**
 * Reference model of the residency-set slot pool (docs/spec/residency-library.md#rl-2, #rl-3).
 *
 * Written for obviousness: sets hold plain arrays, membership is `includes`, and an object's
 * per-slot flags are not stored at all but derived from the open sets' contents, which is what
 * the flags mean. Slow on purpose; the implementation must agree with it step for step.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - Insert into a closed set is the contract error INSERT_CLOSED (the original indexes slot
 *   0xFFFFFFFF). In a set stuck after a failed growth, Insert of an object already flagged at
 *   its slot returns false, as in the original (the flag test comes first); Insert of any other
 *   object is INSERT_OUT_OF_MEMORY: the original would realloc from a null array and copy the
 *   stored entries out of it (undefined unless nothing was stored), and the set stays stuck.
 * - The master set of an execute is preallocated to exactly its size
 *   (docs/spec/residency-library.md#rl-7-3); the injected growth failure (`failNextGrowth`) applies
 *   to set growth only and stays armed through it.
 * - Destroying an open set is the contract error DESTROY_OPEN (the original leaks the slot).
 * - A failed growth keeps the set's old contents visible (the original leaks the old array);
 *   the set is stuck: open, out of memory, holding its slot, with the failed object flagged
 *   but not stored. Close returns E_OUTOFMEMORY and Open E_INVALIDARG for ever after.
 */
import {
  INVALID_SLOT,
  SetErrors,
  nextCapacity,
  type ExecuteResult,
  type HResult,
  type ResidencySetConfig,
  type ResidencySetPool,
} from '../src/residency/residency-set-types.js';
import { ContractError } from '../src/contract.js';

interface ModelSet {
  open: boolean;
  slot: number;
  contents: number[];
  capacity: number;
  outOfMemory: boolean;
  /** The object whose insert failed: flagged at the slot but not stored. */
  stuckObject: number | null;
}

export class ResidencySetModel implements ResidencySetPool {
  private readonly sets = new Map<number, ModelSet>();
  /** Taken slot numbers (open sets' slots, and a master set's during an execute). */
  private readonly slotsTaken = new Set<number>();
  private nextSetId = 0;
  private growthFailureArmed = false;

  constructor(private readonly config: ResidencySetConfig) {}

  private get(set: number): ModelSet {
    const found = this.sets.get(set);
    if (found === undefined) throw new Error(`model: unknown set ${set}`);
    return found;
  }

  /** Lowest free slot, or INVALID_SLOT. */
  private takeLowestFreeSlot(): number {
    let slot = 0;
    while (this.slotsTaken.has(slot)) slot++;
    if (slot >= this.config.slotCount) return INVALID_SLOT;
    this.slotsTaken.add(slot);
    return slot;
  }

  createSet(): number {
    const id = this.nextSetId++;
    this.sets.set(id, {
      open: false,
      slot: INVALID_SLOT,
      contents: [],
      capacity: 0,
      outOfMemory: false,
      stuckObject: null,
    });
    return id;
  }

  destroySet(set: number): void {
    if (this.get(set).open) throw new ContractError(SetErrors.DESTROY_OPEN, `set ${set} is open`);
    this.sets.delete(set);
  }

  open(set: number): HResult {
    const s = this.get(set);
    if (s.open) return 'E_INVALIDARG';
    const slot = this.takeLowestFreeSlot();
    if (slot === INVALID_SLOT) return 'E_OUTOFMEMORY';
    s.slot = slot;
    s.open = true;
    s.contents = [];
    s.outOfMemory = false;
    s.stuckObject = null;
    return 'S_OK';
  }

  insert(set: number, object: number): boolean {
    const s = this.get(set);
    if (!s.open) throw new ContractError(SetErrors.INSERT_CLOSED, `set ${set} is not open`);
    if (s.contents.includes(object) || s.stuckObject === object) return false;
    if (s.outOfMemory)
      throw new ContractError(SetErrors.INSERT_OUT_OF_MEMORY, `set ${set} is stuck out of memory`);
    if (s.contents.length >= s.capacity) {
      if (this.growthFailureArmed) {
        this.growthFailureArmed = false;
        s.outOfMemory = true;
        s.stuckObject = object;
        return false;
      }
      s.capacity = nextCapacity(s.capacity, this.config.initialCapacity);
    }
    s.contents.push(object);
    return true;
  }

  close(set: number): HResult {
    const s = this.get(set);
    if (!s.open) return 'E_INVALIDARG';
    if (s.outOfMemory) return 'E_OUTOFMEMORY';
    this.slotsTaken.delete(s.slot);
    s.slot = INVALID_SLOT;
    s.open = false;
    return 'S_OK';
  }

  execute(sets: readonly (number | null)[]): ExecuteResult {
    const failed = (hr: HResult): ExecuteResult => ({ hr, objects: [], totalSizeBytes: 0 });
    const tracked = sets.filter((set): set is number => set !== null).map((set) => this.get(set));
    if (tracked.some((s) => s.open)) return failed('E_INVALIDARG');
    const masterSlot = this.takeLowestFreeSlot();
    if (masterSlot === INVALID_SLOT) return failed('E_OUTOFMEMORY');
    const objects: number[] = [];
    let totalSizeBytes = 0;
    for (const s of tracked) {
      for (const object of s.contents) {
        if (!objects.includes(object)) {
          objects.push(object);
          totalSizeBytes += this.config.objectSizesBytes[object]!;
        }
      }
    }
    this.slotsTaken.delete(masterSlot);
    return { hr: 'S_OK', objects, totalSizeBytes };
  }

  failNextGrowth(): void {
    this.growthFailureArmed = true;
  }

  slotOf(set: number): number {
    return this.get(set).slot;
  }
  isOpen(set: number): boolean {
    return this.get(set).open;
  }
  isOutOfMemory(set: number): boolean {
    return this.get(set).outOfMemory;
  }
  contents(set: number): number[] {
    return [...this.get(set).contents];
  }
  size(set: number): number {
    return this.get(set).contents.length;
  }
  capacity(set: number): number {
    return this.get(set).capacity;
  }
  takenSlots(): number[] {
    return [...this.slotsTaken].sort((a, b) => a - b);
  }
  /**
   * flaggedSlots of every object at once, in one pass over the open sets (the invariant's form:
   * asking object by object rescans every set per object).
   */
  allFlaggedSlots(): number[][] {
    const flagged: number[][] = this.config.objectSizesBytes.map(() => []);
    for (const s of this.sets.values()) {
      if (!s.open) continue;
      for (const object of s.contents) flagged[object]!.push(s.slot);
      if (s.stuckObject !== null) flagged[s.stuckObject]!.push(s.slot);
    }
    for (const slots of flagged) if (slots.length > 1) slots.sort((a, b) => a - b);
    return flagged;
  }

  flaggedSlots(object: number): number[] {
    const slots: number[] = [];
    for (const s of this.sets.values()) {
      if (s.open && (s.contents.includes(object) || s.stuckObject === object)) slots.push(s.slot);
    }
    return slots.sort((a, b) => a - b);
  }
}
