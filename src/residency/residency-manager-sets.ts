/**
 * The residency manager's set pool: the shipped residency-set pool plus an allocation-free
 * master-set merge for ExecuteCommandLists (docs/spec/residency-library.md#rl-7-2 to #rl-7-4).
 *
 * `mergeMaster` takes a master slot and runs the pool's `mergeUnique` (the same merge as the
 * residency-set Execute): walks the sets in array order and their objects in insertion order,
 * keeps the first sighting of each object (the master's flag at its slot is the dedupe test),
 * writes the unique objects into a caller-owned scratch array, sums their sizes once, then
 * clears the master's flags and returns its slot: one pass, no allocation.
 */
import { ResidencySetPoolImpl } from './residency-set.js';
import type { ResidencySetConfig } from './residency-set-types.js';

export class ManagerSetPool extends ResidencySetPoolImpl {
  constructor(config: ResidencySetConfig) {
    super(config);
  }

  /** True if any non-null set in [from, to) is open (Execute's validation). */
  anyOpen(ids: readonly (number | null)[], from: number, to: number): boolean {
    for (let i = from; i < to; i++) {
      const id = ids[i];
      if (id !== null && id !== undefined && this.set(id).isOpen) return true;
    }
    return false;
  }

  /** The first stored object of the non-null sets in [from, to) whose status is 0 (untracked), or -1. */
  firstUntracked(
    ids: readonly (number | null)[],
    from: number,
    to: number,
    status: Uint8Array,
  ): number {
    for (let i = from; i < to; i++) {
      const id = ids[i];
      if (id === null || id === undefined) continue;
      const set = this.set(id);
      const storage = set.storage;
      for (let k = 0; k < set.size; k++) {
        const object = storage![k]!;
        if (status[object] === 0) return object;
      }
    }
    return -1;
  }

  /** The first non-null set of ids[from, to) that holds `object`, or -1 (names the set in an error). */
  firstHolding(ids: readonly (number | null)[], from: number, to: number, object: number): number {
    for (let i = from; i < to; i++) {
      const id = ids[i];
      if (id === null || id === undefined) continue;
      const set = this.set(id);
      for (let k = 0; k < set.size; k++) if (set.storage![k] === object) return id;
    }
    return -1;
  }

  /**
   * The master-set merge of ids[from, to) into `out` (the pool's shared `mergeUnique`, with a
   * master slot taken for it and returned). Returns the number of unique objects, or -1 when no
   * slot is free for the master set (E_OUTOFMEMORY).
   */
  mergeMaster(ids: readonly (number | null)[], from: number, to: number, out: Int32Array): number {
    const slot = this.acquireMasterSlot();
    if (slot < 0) return -1;
    const count = this.mergeUnique(slot, ids, from, to, out);
    this.releaseMasterSlot(slot);
    return count;
  }

  /** Bytes of the unique objects of the last successful merge. */
  get mergedSizeBytes(): number {
    return this.mergedBytes;
  }
}
