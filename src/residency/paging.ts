/**
 * ProcessPagingWork (docs/spec/residency-library.md#rl-8): mark the work's objects, trim aged
 * allocations, then make the evicted ones resident in budgeted batches, waiting for sync points and
 * trimming under pressure, or overcommitting through the documented fallback.
 *
 * Holds the paging fence counter: in inline mode (Device3) each batch is an EnqueueMakeResident
 * that signals counter + 1; in async mode the worker's blocking MakeResident is followed by a
 * CPU signal of the work's fence value (src/residency/residency-manager.ts).
 */
import type { LruList } from './lru-list.js';
import type { ResidencyBudgets } from './budgets.js';
import type { ManagerEvents, MakeResidentReason, ResidencyDevice } from './residency-device.js';
import type { SyncPointRing } from './sync-points.js';

/** The parts a pager works on. */
export interface PagerParts {
  readonly device: ResidencyDevice;
  readonly lru: LruList;
  readonly syncPoints: SyncPointRing;
  readonly budgets: ResidencyBudgets;
  readonly events: ManagerEvents;
  /** Device3 present: batches are queued on the paging fence (counter from 0), else blocking (from 1). */
  readonly inline: boolean;
}

export class Pager {
  pagingCounter: number;
  protected readonly device: ResidencyDevice;
  protected readonly lru: LruList;
  protected readonly syncPoints: SyncPointRing;
  protected readonly budgets: ResidencyBudgets;
  protected readonly events: ManagerEvents;
  protected readonly inline: boolean;
  /** The make-resident list of the work being processed. */
  protected readonly toMake: Int32Array;
  /** Bytes of the last batch `fillBatch` chose. */
  protected batchBytes = 0;

  constructor(parts: PagerParts) {
    this.device = parts.device;
    this.lru = parts.lru;
    this.syncPoints = parts.syncPoints;
    this.budgets = parts.budgets;
    this.events = parts.events;
    this.inline = parts.inline;
    this.pagingCounter = parts.inline ? 0 : 1;
    this.toMake = new Int32Array(parts.lru.objectCount);
  }

  protected deviceMakeResident(
    objects: Int32Array,
    start: number,
    count: number,
    reason: MakeResidentReason,
  ): boolean {
    if (this.inline) {
      const ok = this.device.enqueueMakeResident(
        objects,
        start,
        count,
        this.pagingCounter + 1,
        reason,
      );
      if (ok) this.pagingCounter++;
      return ok;
    }
    return this.device.makeResident(objects, start, count, reason);
  }

  /** Evicts the trim's `count` objects; a failure (which the library ignores) is retried once. */
  protected deviceEvict(count: number): void {
    if (this.device.evict(this.lru.evictList, 0, count)) return;
    this.events.emit('evict-failed');
    if (!this.device.evict(this.lru.evictList, 0, count)) throw new Error('Evict failed twice');
  }

  /** docs/spec/residency-library.md#rl-8-5-1: the usage of both segments, local + non-local, as the device reports them. */
  protected usageBytes(): number {
    return this.device.localUsageBytes + this.device.nonLocalUsageBytes;
  }

  protected availableBytes(budgetBytes: number, usageBytes: number): number {
    return budgetBytes - usageBytes;
  }

  /** Greedy prefix from `start` within `availableBytes`; returns the end, sets batchBytes. */
  protected fillBatch(start: number, total: number, availableBytes: number): number {
    const sizes = this.lru.sizesBytes;
    let index = start;
    let bytes = 0;
    while (index < total) {
      const size = sizes[this.toMake[index]!]!;
      // Negated `<=`, not `>`: a NaN stops the batch, as the loop condition always did.
      if (!(bytes + size <= availableBytes)) break;
      bytes += size;
      index++;
    }
    this.batchBytes = bytes;
    return index;
  }

  /** After a failed batch: where the cursor goes back to (its objects are not counted as made). */
  protected afterFailedBatch(batchStart: number, _batchEnd: number): number {
    return batchStart;
  }

  /** True when the force-resident fallback is taken. */
  protected takeFallback(
    head: number,
    generation: number,
    firstUncompletedGeneration: number,
  ): boolean {
    return head < 0 || this.lru.lastSync[head]! >= generation || firstUncompletedGeneration < 0;
  }

  /** The generation to wait for; the G-1 rule. */
  protected pressureWaitGeneration(firstUncompletedGeneration: number, generation: number): number {
    if (firstUncompletedGeneration !== generation) return firstUncompletedGeneration;
    if (generation === 0)
      throw new Error('G-1 at generation 0 (the fallback guard makes this unreachable)');
    this.events.emit('g-minus-one');
    return generation - 1;
  }

  /** Processes one work: `objects[start, start + objectCount)` used by the submission of `generation`. */
  process(objects: Int32Array, start: number, objectCount: number, generation: number): void {
    const lru = this.lru;
    let firstUncompleted = this.syncPoints.dequeueCompleted();
    const nowTicks = this.device.ticks;
    let total = 0;
    let sizeToMakeResident = 0;
    for (let i = start; i < start + objectCount; i++) {
      const object = objects[i]!;
      if (lru.mark(object, generation, nowTicks)) {
        this.toMake[total++] = object;
        sizeToMakeResident += lru.sizesBytes[object]!;
      }
    }
    const aged = lru.trimAged(firstUncompleted, nowTicks, this.budgets.graceTicks());
    if (aged > 0) {
      this.events.emit('aged-trim');
      this.deviceEvict(aged);
    }
    if (total === 0) return;
    let made = 0;
    let index = 0;
    const roundLimit = 2 * (this.syncPoints.count + total) + 8;
    for (let round = 0; ; round++) {
      if (round > roundLimit) throw new Error(`paging loop exceeded ${roundLimit} rounds`);
      const usageBytes = this.usageBytes();
      const budgetBytes = this.budgets.totalBudgetBytes();
      const availableBytes = this.availableBytes(budgetBytes, usageBytes);
      const batchStart = index;
      let ok = true;
      if (availableBytes > 0) {
        const end = this.fillBatch(batchStart, total, availableBytes);
        ok = this.deviceMakeResident(this.toMake, batchStart, end - batchStart, 'batch');
        if (ok) {
          index = end;
          made += end - batchStart;
          sizeToMakeResident -= this.batchBytes;
        } else {
          this.events.emit('make-resident-failed');
          index = this.afterFailedBatch(batchStart, end);
          made += index - batchStart;
        }
      }
      if (ok && made === total) break;
      const head = lru.headObject();
      firstUncompleted = this.syncPoints.dequeueCompleted();
      if (this.takeFallback(head, generation, firstUncompleted)) {
        this.events.emit('forced-fallback');
        if (!this.deviceMakeResident(this.toMake, index, total - made, 'fallback')) {
          this.events.emit('make-resident-failed');
          if (!this.deviceMakeResident(this.toMake, index, total - made, 'fallback'))
            throw new Error('fallback MakeResident failed twice');
        }
        break;
      }
      const waitGeneration = this.pressureWaitGeneration(firstUncompleted, generation);
      this.syncPoints.waitFor(waitGeneration);
      const trimmed = lru.trimToSyncPointInclusive(
        usageBytes + sizeToMakeResident,
        budgetBytes,
        waitGeneration,
      );
      if (trimmed > 0) this.events.emit('pressure-trim');
      this.deviceEvict(trimmed);
    }
  }
}
