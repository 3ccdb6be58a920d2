/**
 * The residency manager as an engine would ship it (residency-library.md §4-§8; Unreal's
 * settings from the seed ue5-dx12-residency-set). Agrees with models/residency-manager.ts
 * decision for decision; the model's header lists the choices the spec leaves open.
 *
 * - The LRU is intrusive over typed arrays: `prev`/`next` links with two sentinel nodes (the
 *   resident and the evicted list), so insert, reference, make-resident, evict and each trim
 *   step are O(1).
 * - Sync points live in a ring (generation plus one recorded fence value per queue), grown by
 *   doubling only when the GPU falls that far behind; dequeue and wait pop from its head.
 * - Async work items live in a ring of MaxLatency + 1 slots, each with a preallocated object
 *   array, so the steady state allocates nothing per submission.
 * - Generations, fence values and ticks are numbers: each command consumes at most a bounded
 *   number of them and the clock advances by bounded steps, so they stay far below 2^53.
 *   MAXUINT64 (never trim) is represented by +Infinity.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { ContractError } from '../contract.js';
import { SimGpu } from '../gpu/sim-gpu.js';
import { ManagerSetPool } from './residency-manager-sets.js';
import type { HResult } from './residency-set-types.js';
import {
  ManagerErrors,
  MAX_GRACE_SECONDS,
  MIN_GRACE_SECONDS,
  TRIM_THRESHOLD,
  type ObjectStatus,
  type ResidencyManager,
  type ResidencyManagerConfig,
} from './residency-manager-types.js';

export const UNTRACKED = 0;
export const RESIDENT = 1;
export const EVICTED = 2;

export interface ManagerOptions {
  /** Fully checking GPU and recorded events (default). The benchmark turns both off. */
  readonly checked?: boolean;
}

export class ResidencyManagerImpl implements ResidencyManager {
  readonly gpu: SimGpu;
  readonly sets: ManagerSetPool;
  protected readonly objectCount: number;
  protected readonly queueCount: number;
  protected readonly sizesBytes: Float64Array;
  protected readonly statusOf: Uint8Array;
  protected readonly prev: Int32Array;
  protected readonly next: Int32Array;
  /** Sentinel nodes of the two circular lists. */
  protected readonly residentHead: number;
  protected readonly evictedHead: number;
  protected readonly lastSync: Float64Array;
  protected readonly lastUsedTicks: Float64Array;
  protected numResident = 0;
  protected numEvicted = 0;
  protected residentSizeBytes = 0;
  protected generation = 0;
  // Queue fences, discovered lazily, in discovery order.
  protected readonly fenceValue: Float64Array;
  protected readonly knownQueues: Int32Array;
  protected readonly queueKnown: Uint8Array;
  protected knownCount = 0;
  // Sync-point ring.
  private spCapacity = 16;
  private spGeneration = new Float64Array(16);
  private spValues: Float64Array;
  private spHead = 0;
  private spCount = 0;
  protected pagingCounter: number;
  // Async work ring: MaxLatency + 1 slots; head/tail count works ever dequeued/enqueued.
  private readonly ringSize: number;
  private readonly workObjects: Int32Array[];
  private readonly workCount: Int32Array;
  private readonly workGeneration: Float64Array;
  private readonly workFence: Float64Array;
  protected workHead = 0;
  protected workTail = 0;
  // Scratch.
  protected readonly master: Int32Array;
  protected readonly toMake: Int32Array;
  protected readonly evictList: Int32Array;
  protected batchBytes = 0;
  private background = false;
  private events: string[] | null;
  private readonly minGraceTicks: number;
  private readonly maxGraceTicks: number;

  constructor(readonly config: ResidencyManagerConfig, options: ManagerOptions = {}) {
    const checked = options.checked ?? true;
    this.gpu = new SimGpu({
      objectSizesBytes: config.objectSizesBytes,
      queueCount: config.queueCount,
      ticksPerSecond: config.ticksPerSecond,
      localBudgetBytes: config.localBudgetBytes,
      nonLocalBudgetBytes: config.nonLocalBudgetBytes,
      checked,
    });
    this.sets = new ManagerSetPool({ slotCount: config.slotCount, initialCapacity: config.initialCapacity, objectSizesBytes: config.objectSizesBytes });
    this.events = checked ? [] : null;
    const n = config.objectSizesBytes.length;
    this.objectCount = n;
    this.queueCount = config.queueCount;
    this.sizesBytes = Float64Array.from(config.objectSizesBytes);
    this.statusOf = new Uint8Array(n);
    this.prev = new Int32Array(n + 2);
    this.next = new Int32Array(n + 2);
    this.residentHead = n;
    this.evictedHead = n + 1;
    for (const sentinel of [this.residentHead, this.evictedHead]) {
      this.prev[sentinel] = sentinel;
      this.next[sentinel] = sentinel;
    }
    this.lastSync = new Float64Array(n);
    this.lastUsedTicks = new Float64Array(n);
    this.fenceValue = new Float64Array(config.queueCount);
    this.knownQueues = new Int32Array(config.queueCount);
    this.queueKnown = new Uint8Array(config.queueCount);
    this.spValues = new Float64Array(16 * config.queueCount);
    this.pagingCounter = config.mode === 'async' ? 1 : 0;
    if (!(config.maxLatency >= 1)) throw new RangeError('maxLatency must be >= 1 (0 hangs the first submission)');
    this.ringSize = config.maxLatency + 1;
    this.workObjects = Array.from({ length: this.ringSize }, () => new Int32Array(n));
    this.workCount = new Int32Array(this.ringSize);
    this.workGeneration = new Float64Array(this.ringSize);
    this.workFence = new Float64Array(this.ringSize);
    this.master = new Int32Array(n);
    this.toMake = new Int32Array(n);
    this.evictList = new Int32Array(n);
    const freq = Math.fround(config.ticksPerSecond);
    this.minGraceTicks = Math.trunc(Math.fround(freq * MIN_GRACE_SECONDS));
    this.maxGraceTicks = Math.trunc(Math.fround(freq * MAX_GRACE_SECONDS));
  }

  protected emit(event: string): void {
    if (this.events !== null) this.events.push(event);
  }

  drainEvents(): string[] {
    if (this.events === null) return [];
    const events = this.events;
    this.events = [];
    return events;
  }

  // ---- intrusive LRU --------------------------------------------------------------------------

  protected unlink(object: number): void {
    const before = this.prev[object]!;
    const after = this.next[object]!;
    this.next[before] = after;
    this.prev[after] = before;
  }

  protected linkAfter(anchor: number, object: number): void {
    const after = this.next[anchor]!;
    this.prev[object] = anchor;
    this.next[object] = after;
    this.prev[after] = object;
    this.next[anchor] = object;
  }

  /** At the tail: just before the sentinel. */
  protected linkTail(sentinel: number, object: number): void {
    this.linkAfter(this.prev[sentinel]!, object);
  }

  /** LRU.Insert: at the head of the list matching the status. */
  protected insertNewTracked(object: number): void {
    if (this.statusOf[object] === RESIDENT) {
      this.linkAfter(this.residentHead, object);
      this.numResident++;
      this.residentSizeBytes += this.sizesBytes[object]!;
    } else {
      this.linkAfter(this.evictedHead, object);
      this.numEvicted++;
    }
  }

  protected lruMakeResident(object: number): void {
    this.unlink(object);
    this.statusOf[object] = RESIDENT;
    this.linkTail(this.residentHead, object);
    this.numEvicted--;
    this.numResident++;
    this.residentSizeBytes += this.sizesBytes[object]!;
  }

  protected lruEvict(object: number): void {
    this.unlink(object);
    this.statusOf[object] = EVICTED;
    this.linkTail(this.evictedHead, object);
    this.numResident--;
    this.numEvicted++;
    this.residentSizeBytes -= this.sizesBytes[object]!;
  }

  /** The resident head (stalest), or -1. */
  protected headObject(): number {
    const head = this.next[this.residentHead]!;
    return head === this.residentHead ? -1 : head;
  }

  /** True when the aged trim stops at this head object. */
  protected agedTrimStops(object: number, firstUncompletedGeneration: number, nowTicks: number, graceTicks: number): boolean {
    if (firstUncompletedGeneration >= 0 && this.lastSync[object]! >= firstUncompletedGeneration) return true;
    return nowTicks - this.lastUsedTicks[object]! <= graceTicks;
  }

  /** TrimAgedAllocations into evictList; returns the count. */
  protected trimAged(firstUncompletedGeneration: number, nowTicks: number, graceTicks: number): number {
    let count = 0;
    for (let head = this.headObject(); head >= 0; head = this.headObject()) {
      if (this.agedTrimStops(head, firstUncompletedGeneration, nowTicks, graceTicks)) break;
      this.evictList[count++] = head;
      this.lruEvict(head);
    }
    return count;
  }

  /** TrimToSyncPointInclusive into evictList; returns the count. */
  protected trimToSyncPointInclusive(usageBytes: number, budgetBytes: number, syncPoint: number): number {
    let count = 0;
    let usage = usageBytes;
    for (let head = this.headObject(); head >= 0; head = this.headObject()) {
      if (this.lastSync[head]! > syncPoint || usage < budgetBytes) break;
      this.evictList[count++] = head;
      this.lruEvict(head);
      usage -= this.sizesBytes[head]!;
    }
    return count;
  }

  // ---- tracking -------------------------------------------------------------------------------

  beginTracking(object: number): void {
    if (this.statusOf[object] !== UNTRACKED) throw new ContractError(ManagerErrors.ALREADY_TRACKED, `object ${object} is already tracked`);
    this.gpu.createObject(object, !this.config.startEvicted);
    this.statusOf[object] = this.config.startEvicted ? EVICTED : RESIDENT;
    this.lastSync[object] = 0;
    this.lastUsedTicks[object] = 0;
    this.insertNewTracked(object);
  }

  endTracking(object: number): void {
    if (this.statusOf[object] === UNTRACKED) throw new ContractError(ManagerErrors.NOT_TRACKED, `object ${object} is not tracked`);
    if (this.sets.flaggedSlots(object).length > 0 || this.inQueuedWork(object) || this.gpu.isReferencedByPendingWork(object)) {
      throw new ContractError(ManagerErrors.END_TRACKING_IN_USE, `object ${object} is in an open set or in flight`);
    }
    this.unlink(object);
    if (this.statusOf[object] === RESIDENT) {
      this.numResident--;
      this.residentSizeBytes -= this.sizesBytes[object]!;
    } else {
      this.numEvicted--;
    }
    this.statusOf[object] = UNTRACKED;
    this.gpu.destroyObject(object);
  }

  private inQueuedWork(object: number): boolean {
    for (let w = this.workHead; w < this.workTail; w++) {
      const slot = w % this.ringSize;
      const objects = this.workObjects[slot]!;
      for (let i = 0; i < this.workCount[slot]!; i++) if (objects[i] === object) return true;
    }
    return false;
  }

  // ---- budgets --------------------------------------------------------------------------------

  /** Unreal's LocalMemoryBudgetLimit, or -1 without the cap. */
  protected localLimitBytes(): number {
    if (!this.config.unrealBudgetCap) return -1;
    if (this.background) return 0;
    return this.config.debugBudgetBytes >= 0 ? this.config.debugBudgetBytes : this.gpu.localBudgetBytes;
  }

  protected localBudgetBytes(): number {
    const limit = this.localLimitBytes();
    return limit < 0 ? this.gpu.localBudgetBytes : Math.min(this.gpu.localBudgetBytes, limit);
  }

  /** The eviction grace period in ticks from the local segment; +Infinity is MAXUINT64. */
  protected graceTicks(): number {
    if (this.localLimitBytes() === 0) return 0;
    return this.graceFor(this.gpu.localUsageBytes, this.localBudgetBytes());
  }

  graceFor(usageBytes: number, budgetBytes: number): number {
    const ratio = usageBytes / budgetBytes;
    const pressure = ratio < 1.0 ? ratio : 1.0;
    if (!(pressure > TRIM_THRESHOLD)) return Infinity;
    const normalized = (pressure - TRIM_THRESHOLD) / (1.0 - TRIM_THRESHOLD);
    return Math.trunc((this.maxGraceTicks - this.minGraceTicks) * (1.0 - normalized)) + this.minGraceTicks;
  }

  // ---- sync points ----------------------------------------------------------------------------

  protected initialFenceValue(): number {
    return 1;
  }

  protected knowQueue(queue: number): void {
    if (this.queueKnown[queue] === 1) return;
    this.queueKnown[queue] = 1;
    this.knownQueues[this.knownCount++] = queue;
    this.fenceValue[queue] = this.initialFenceValue();
  }

  signalFence(queue: number): number {
    return this.signalQueueFence(queue);
  }

  protected signalQueueFence(queue: number): number {
    this.knowQueue(queue);
    const value = this.fenceValue[queue]!;
    this.gpu.queueSignal(queue, value);
    this.fenceValue[queue] = value + 1;
    this.pushSyncPoint();
    this.advanceGeneration();
    return value;
  }

  protected advanceGeneration(): void {
    this.generation++;
  }

  private pushSyncPoint(): void {
    if (this.spCount === this.spCapacity) this.growSyncPoints();
    const slot = (this.spHead + this.spCount) % this.spCapacity;
    this.spGeneration[slot] = this.generation;
    const base = slot * this.queueCount;
    for (let q = 0; q < this.queueCount; q++) this.spValues[base + q] = 0;
    for (let i = 0; i < this.knownCount; i++) {
      const q = this.knownQueues[i]!;
      this.spValues[base + q] = this.fenceValue[q]! - 1;
    }
    this.spCount++;
  }

  private growSyncPoints(): void {
    const capacity = this.spCapacity * 2;
    const generations = new Float64Array(capacity);
    const values = new Float64Array(capacity * this.queueCount);
    for (let i = 0; i < this.spCount; i++) {
      const from = (this.spHead + i) % this.spCapacity;
      generations[i] = this.spGeneration[from]!;
      values.set(this.spValues.subarray(from * this.queueCount, (from + 1) * this.queueCount), i * this.queueCount);
    }
    this.spCapacity = capacity;
    this.spGeneration = generations;
    this.spValues = values;
    this.spHead = 0;
  }

  private headComplete(): boolean {
    return this.completeAt(this.spHead);
  }

  private completeAt(slot: number): boolean {
    const base = slot * this.queueCount;
    for (let q = 0; q < this.queueCount; q++) {
      if (this.gpu.fenceCompleted(q) < this.spValues[base + q]!) return false;
    }
    return true;
  }

  private popSyncPoint(): void {
    this.spHead = (this.spHead + 1) % this.spCapacity;
    this.spCount--;
  }

  /** Pops completed points; returns the first uncompleted generation, or -1. */
  protected dequeueCompletedSyncPoints(): number {
    while (this.spCount > 0 && this.headComplete()) this.popSyncPoint();
    return this.spCount > 0 ? this.spGeneration[this.spHead]! : -1;
  }

  /** The CPU blocks until the queue's fence reaches the value. */
  protected cpuWaitFence(queue: number, value: number): void {
    this.gpu.cpuWait(queue, value);
  }

  protected waitForSyncPoint(generation: number): void {
    while (this.spCount > 0) {
      const headGeneration = this.spGeneration[this.spHead]!;
      if (headGeneration > generation) return;
      if (headGeneration === generation) {
        this.emit('wait-sync-point');
        const base = this.spHead * this.queueCount;
        for (let i = 0; i < this.knownCount; i++) {
          const q = this.knownQueues[i]!;
          const value = this.spValues[base + q]!;
          if (this.gpu.fenceCompleted(q) < value) this.cpuWaitFence(q, value);
        }
        this.popSyncPoint();
        return;
      }
      this.popSyncPoint();
    }
  }

  // ---- submission -----------------------------------------------------------------------------

  executeCommandLists(queue: number, lists: readonly (readonly number[])[], sets: readonly (number | null)[]): HResult {
    if (!this.validateSets(sets, 0, sets.length)) return 'E_INVALIDARG';
    return this.executeSubset(queue, lists, sets, 0, sets.length);
  }

  protected validateSets(sets: readonly (number | null)[], from: number, to: number): boolean {
    if (this.sets.anyOpen(sets, from, to)) return false;
    const untracked = this.sets.firstUntracked(sets, from, to, this.statusOf);
    if (untracked >= 0) {
      const set = this.sets.firstHolding(sets, from, to, untracked);
      throw new ContractError(ManagerErrors.SET_HOLDS_UNTRACKED, `set ${set} holds untracked object ${untracked}`);
    }
    return true;
  }

  protected shouldSplit(count: number, totalSizeBytes: number, budgetBytes: number): boolean {
    return count > 1 && totalSizeBytes > budgetBytes;
  }

  private executeSubset(queue: number, lists: readonly (readonly number[])[], sets: readonly (number | null)[], from: number, to: number): HResult {
    const masterCount = this.sets.mergeMaster(sets, from, to, this.master);
    if (masterCount < 0) return 'E_OUTOFMEMORY';
    const budgetBytes = this.localBudgetBytes() + this.gpu.nonLocalBudgetBytes;
    if (this.shouldSplit(to - from, this.sets.mergedSizeBytes, budgetBytes)) {
      this.emit('split');
      const half = from + Math.floor((to - from) / 2);
      const first = this.executeSubset(queue, lists, sets, from, half);
      const second = this.executeSubset(queue, lists, sets, half, to);
      return first === 'S_OK' && second === 'S_OK' ? 'S_OK' : 'E_FAIL';
    }
    this.knowQueue(queue);
    this.submitPaging(queue, masterCount);
    // Always a copy: the GPU keeps what it was given until the lists run, and the caller may
    // reuse its array after the call (the runtime copies the list pointers too).
    this.gpu.executeCommandLists(queue, lists.slice(from, to));
    this.signalQueueFence(queue);
    return 'S_OK';
  }

  makeResidentForQueue(queue: number, set: number): HResult {
    const sets = [set];
    if (!this.validateSets(sets, 0, 1)) return 'E_INVALIDARG';
    const masterCount = this.sets.mergeMaster(sets, 0, 1, this.master);
    if (masterCount < 0) return 'E_OUTOFMEMORY';
    this.knowQueue(queue);
    this.submitPaging(queue, masterCount);
    return 'S_OK';
  }

  protected pagingQueueFull(queued: number): boolean {
    return queued >= this.config.maxLatency;
  }

  protected queueWaitOnPaging(queue: number, value: number): void {
    this.gpu.queueWaitPaging(queue, value);
  }

  /** Paging work for the master in `this.master[0, count)`, then the queue's paging wait. */
  private submitPaging(queue: number, count: number): void {
    if (this.config.mode === 'inline') {
      this.processPagingWork(this.master, count, this.generation, 0);
      if (this.pagingCounter > 0) this.queueWaitOnPaging(queue, this.pagingCounter);
      return;
    }
    for (let round = 0; this.pagingQueueFull(this.workTail - this.workHead); round++) {
      if (round > this.config.maxLatency) throw new Error('paging worker made no room');
      this.emit('paging-queue-full');
      this.pagingWorkerStep();
    }
    const slot = this.workTail % this.ringSize;
    this.workObjects[slot]!.set(this.master.subarray(0, count));
    this.workCount[slot] = count;
    this.workGeneration[slot] = this.generation;
    this.workFence[slot] = this.pagingCounter;
    this.workTail++;
    this.queueWaitOnPaging(queue, this.pagingCounter);
    this.pagingCounter++;
  }

  pagingWorkerStep(): boolean {
    if (this.workHead === this.workTail) return false;
    const slot = this.workHead % this.ringSize;
    this.workHead++;
    this.processPagingWork(this.workObjects[slot]!, this.workCount[slot]!, this.workGeneration[slot]!, this.workFence[slot]!);
    this.gpu.cpuSignalPaging(this.workFence[slot]!);
    return true;
  }

  setBackground(on: boolean): void {
    this.background = on;
  }

  // ---- paging ---------------------------------------------------------------------------------

  protected deviceMakeResident(objects: Int32Array, start: number, count: number, reason: 'batch' | 'fallback'): boolean {
    if (this.config.mode === 'inline') {
      const ok = this.gpu.enqueueMakeResident(objects, start, count, this.pagingCounter + 1, reason);
      if (ok) this.pagingCounter++;
      return ok;
    }
    return this.gpu.makeResident(objects, start, count, reason);
  }

  protected deviceEvict(count: number): void {
    if (this.gpu.evict(this.evictList, 0, count)) return;
    this.emit('evict-failed');
    if (!this.gpu.evict(this.evictList, 0, count)) throw new Error('Evict failed twice');
  }

  /** Mark step for one master object; returns 1 if it joined the make-resident list. */
  protected markObject(object: number, generation: number, nowTicks: number, makeCount: number): number {
    let added = 0;
    if (this.statusOf[object] === EVICTED) {
      this.toMake[makeCount] = object;
      this.lruMakeResident(object);
      added = 1;
    } else {
      // ObjectReferenced: to the resident tail.
      this.unlink(object);
      this.linkTail(this.residentHead, object);
    }
    this.lastSync[object] = generation;
    this.lastUsedTicks[object] = nowTicks;
    return added;
  }

  /** §8 step 5.1: the usage of both segments, local + non-local, as the device reports them. */
  protected usageBytes(): number {
    return this.gpu.localUsageBytes + this.gpu.nonLocalUsageBytes;
  }

  protected availableBytes(budgetBytes: number, usageBytes: number): number {
    return budgetBytes - usageBytes;
  }

  /** Greedy prefix from `start` within `availableBytes`; returns the end, sets batchBytes. */
  protected fillBatch(start: number, total: number, availableBytes: number): number {
    let index = start;
    let bytes = 0;
    while (index < total && bytes + this.sizesBytes[this.toMake[index]!]! <= availableBytes) {
      bytes += this.sizesBytes[this.toMake[index]!]!;
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
  protected takeFallback(head: number, generation: number, firstUncompletedGeneration: number): boolean {
    return head < 0 || this.lastSync[head]! >= generation || firstUncompletedGeneration < 0;
  }

  /** The generation to wait for; the G-1 rule. */
  protected pressureWaitGeneration(firstUncompletedGeneration: number, generation: number): number {
    if (firstUncompletedGeneration !== generation) return firstUncompletedGeneration;
    if (generation === 0) throw new Error('G-1 at generation 0 (the fallback guard makes this unreachable)');
    this.emit('g-minus-one');
    return generation - 1;
  }

  protected waitBeforePressureTrim(generation: number): void {
    this.waitForSyncPoint(generation);
  }

  protected processPagingWork(objects: Int32Array, objectCount: number, generation: number, _pagingFence: number): void {
    let firstUncompleted = this.dequeueCompletedSyncPoints();
    const nowTicks = this.gpu.ticks;
    let total = 0;
    let sizeToMakeResident = 0;
    for (let i = 0; i < objectCount; i++) {
      const object = objects[i]!;
      if (this.markObject(object, generation, nowTicks, total) === 1) {
        sizeToMakeResident += this.sizesBytes[object]!;
        total++;
      }
    }
    const aged = this.trimAged(firstUncompleted, nowTicks, this.graceTicks());
    if (aged > 0) {
      this.emit('aged-trim');
      this.deviceEvict(aged);
    }
    if (total === 0) return;
    let made = 0;
    let index = 0;
    const roundLimit = 2 * (this.spCount + total) + 8;
    for (let round = 0; ; round++) {
      if (round > roundLimit) throw new Error(`paging loop exceeded ${roundLimit} rounds`);
      const usageBytes = this.usageBytes();
      const budgetBytes = this.localBudgetBytes() + this.gpu.nonLocalBudgetBytes;
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
          this.emit('make-resident-failed');
          index = this.afterFailedBatch(batchStart, end);
          made += index - batchStart;
        }
      }
      if (ok && made === total) break;
      const head = this.headObject();
      firstUncompleted = this.dequeueCompletedSyncPoints();
      if (this.takeFallback(head, generation, firstUncompleted)) {
        this.emit('forced-fallback');
        if (!this.deviceMakeResident(this.toMake, index, total - made, 'fallback')) {
          this.emit('make-resident-failed');
          if (!this.deviceMakeResident(this.toMake, index, total - made, 'fallback')) throw new Error('fallback MakeResident failed twice');
        }
        break;
      }
      const waitGeneration = this.pressureWaitGeneration(firstUncompleted, generation);
      this.waitBeforePressureTrim(waitGeneration);
      const trimmed = this.trimToSyncPointInclusive(usageBytes + sizeToMakeResident, budgetBytes, waitGeneration);
      if (trimmed > 0) this.emit('pressure-trim');
      this.deviceEvict(trimmed);
    }
  }

  // ---- inspection -----------------------------------------------------------------------------

  status(object: number): ObjectStatus {
    const status = this.statusOf[object];
    return status === RESIDENT ? 'resident' : status === EVICTED ? 'evicted' : 'untracked';
  }
  /** Walks a list into `out` (reused between calls: the inspection views are not copies). */
  private walk(sentinel: number, out: number[]): readonly number[] {
    let count = 0;
    for (let node = this.next[sentinel]!, guard = 0; node !== sentinel && guard <= this.objectCount; node = this.next[node]!, guard++) out[count++] = node;
    out.length = count;
    return out;
  }
  private readonly residentView: number[] = [];
  private readonly evictedView: number[] = [];
  private readonly syncPointView: number[] = [];
  residentList(): readonly number[] {
    return this.walk(this.residentHead, this.residentView);
  }
  evictedList(): readonly number[] {
    return this.walk(this.evictedHead, this.evictedView);
  }
  counters(): { resident: number; evicted: number; residentSizeBytes: number } {
    return { resident: this.numResident, evicted: this.numEvicted, residentSizeBytes: this.residentSizeBytes };
  }
  lastSyncPoint(object: number): number {
    return this.lastSync[object]!;
  }
  firstUncompletedGeneration(): number {
    for (let i = 0; i < this.spCount; i++) {
      const slot = (this.spHead + i) % this.spCapacity;
      if (!this.completeAt(slot)) return this.spGeneration[slot]!;
    }
    return -1;
  }
  lastUsedTimestamp(object: number): number {
    return this.lastUsedTicks[object]!;
  }
  syncPointGenerations(): readonly number[] {
    const out = this.syncPointView;
    for (let i = 0; i < this.spCount; i++) out[i] = this.spGeneration[(this.spHead + i) % this.spCapacity]!;
    out.length = this.spCount;
    return out;
  }
  currentGeneration(): number {
    return this.generation;
  }
  queuedWorks(): number {
    return this.workTail - this.workHead;
  }
}
