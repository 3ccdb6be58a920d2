/**
 * Reference model of the residency manager (docs/spec/residency-library.md#rl-4 to #rl-8, #rl-10;
 * Unreal's settings from docs/spec/engine.md#rs-2, #rs-5, #rs-6, #rs-8, #rs-9).
 *
 * Written for obviousness: the LRU lists are plain arrays (head = index 0, the stalest), every
 * move is indexOf + splice, sync points are an array of {generation, [queue, value][]}, and
 * tick arithmetic is BigInt with explicit 64-bit wrap-around where the library wraps (the
 * last-used stamps are kept as the clock's numbers, which stay safe integers, and converted
 * where an age is computed). Generations are numbers: each command consumes a bounded number
 * of them, so they stay far below 2^53, and the one place the library would wrap one (G-1 at
 * G = 0) is asserted unreachable below.
 * Slow on purpose; the implementation must agree with it decision for decision: the same device
 * calls with the same objects in the same order, the same CPU waits, the same events.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - Objects are created when tracking begins and destroyed when it ends (Unreal's lifetime:
 *   EndTrackingObject, then the resource is released, and its residency with it). With
 *   `startEvicted` they are created NOT_RESIDENT and tracked EVICTED (Unreal); otherwise they
 *   are created resident and tracked RESIDENT (the library's default).
 * - Tracking twice is ALREADY_TRACKED; ending tracking of an object in an open set or referenced
 *   by unfinished GPU work (or queued paging work) is END_TRACKING_IN_USE; executing a set that
 *   holds an untracked object is SET_HOLDS_UNTRACKED (checked after the open-set validation).
 * - Latent defect (a), G-1 underflow: the model keeps the library's guard (the fallback is taken
 *   when the resident head's last sync point is >= G), under which the G-1 rule only runs for
 *   G > 0, and asserts it. A wrapping G-1 at G = 0 would trim to 2^64-1 and evict the current
 *   work's objects; the mutant g-minus-one-underflow re-creates that.
 * - Latent defect (b), a failed batch counted as made: the model does not count it. The batch
 *   cursor goes back to the batch's start, the loop takes the pressure path (wait and trim, or
 *   the fallback) and retries, so every object marked RESIDENT gets its device call.
 * - MakeResidentForQueue with no signal of that queue after it (async mode): generation G's sync
 *   point records the queue's last signalled fence value, which can complete before the worker
 *   runs G's work; the worker then waits for G+1, and the inclusive pressure trim may evict G's
 *   own objects before they were made resident (docs/spec/residency-library.md#rl-10-2 broken; the
 *   judge reports the Evict of a non-resident object). The library does this; the model keeps it.
 *   The harness's mapTiles op signals the queue right after the call, so generated runs never leave
 *   that window open.
 * - A failed fallback MakeResident or a failed Evict (the library ignores both) is retried once;
 *   injected failures are one-shot per call kind, so the retry succeeds and bookkeeping stays
 *   equal to the device. Each failure is reported as an event.
 * - The pressure loop is bounded (every waiting round pops a sync point or ends in the
 *   fallback); exceeding the bound throws, which the harness reports as a finding.
 * - WaitForSyncPoint past the end of the list returns (the library reads the sentinel).
 * - A CPU wait lets the simulated GPU run until the fence is reached; waits are made only for
 *   fences not yet complete, so each logged wait is a real block.
 * - The pressure trim's Evict is issued even with 0 objects (2025+); the aged trim's only if it
 *   selected something.
 * - Unreal's budget cap (when configured): local budget = min(reported, limit), the limit being
 *   the debug budget if set, else the reported budget, and 0 while backgrounded; with a limit of
 *   0 the grace period is 0.
 * - Out of scope: the trim notifications of docs/spec/residency-library.md#rl-8 (newest library
 *   version only, ID3D12Device15); neither side registers the callback, so its periodic and
 *   to-budget trims are not modelled.
 */
import { ContractError } from '../src/contract.js';
import type { SimGpu } from '../src/gpu/sim-gpu.js';
import { SimGpu as Gpu } from '../src/gpu/sim-gpu.js';
import { ResidencySetModel } from './residency-set.js';
import type { HResult } from '../src/residency/residency-set-types.js';
import {
  ManagerErrors,
  MAX_GRACE_SECONDS,
  MIN_GRACE_SECONDS,
  NEVER_TRIM_TICKS,
  TRIM_THRESHOLD,
  U64_MASK,
  type ObjectStatus,
  type ResidencyManager,
  type ResidencyManagerConfig,
} from '../src/residency/residency-manager-types.js';

interface SyncPoint {
  generation: number;
  /** (queue, fence value last signalled on it) for every queue known when it was made. */
  entries: [number, number][];
}

interface Work {
  objects: number[];
  generation: number;
  pagingFenceValue: number;
}

interface LocalBudget {
  budgetBytes: number;
  usageBytes: number;
  /** Unreal's LocalMemoryBudgetLimit, or null without the cap. */
  limitBytes: number | null;
}

export class ResidencyManagerModel implements ResidencyManager {
  readonly gpu: SimGpu;
  readonly sets: ResidencySetModel;
  private readonly statusOf: ObjectStatus[];
  private readonly resident: number[] = [];
  private readonly evicted: number[] = [];
  private numResident = 0;
  private numEvicted = 0;
  private residentSizeBytes = 0;
  private readonly lastSync: number[];
  /** LastUsedTimestamp: the clock's tick count (a safe integer) at the object's last use. */
  private readonly lastUsedTicks: number[];
  private generation = 0;
  private readonly knownQueues: number[] = [];
  private readonly fenceValue = new Map<number, number>();
  private readonly syncPoints: SyncPoint[] = [];
  private pagingCounter: number;
  private readonly works: Work[] = [];
  private background = false;
  private events: string[] = [];

  /** `checked: false` gives the GPU's unchecked mode (the benchmark's, same as the implementation's). */
  constructor(
    readonly config: ResidencyManagerConfig,
    options: { readonly checked?: boolean } = {},
  ) {
    if (!(config.maxLatency >= 1))
      throw new RangeError('maxLatency must be >= 1 (0 hangs the first submission)');
    this.gpu = new Gpu({
      checked: options.checked ?? true,
      objectSizesBytes: config.objectSizesBytes,
      queueCount: config.queueCount,
      ticksPerSecond: config.ticksPerSecond,
      localBudgetBytes: config.localBudgetBytes,
      nonLocalBudgetBytes: config.nonLocalBudgetBytes,
    });
    this.sets = new ResidencySetModel({
      slotCount: config.slotCount,
      initialCapacity: config.initialCapacity,
      objectSizesBytes: config.objectSizesBytes,
    });
    const count = config.objectSizesBytes.length;
    this.statusOf = new Array<ObjectStatus>(count).fill('untracked');
    this.lastSync = new Array<number>(count).fill(0);
    this.lastUsedTicks = new Array<number>(count).fill(0);
    // Without Device3 the paging counter is bumped from 0 to 1 at Initialize
    // (docs/spec/residency-library.md#rl-5).
    this.pagingCounter = config.mode === 'async' ? 1 : 0;
  }

  private size(object: number): number {
    return this.config.objectSizesBytes[object]!;
  }

  private emit(event: string): void {
    this.events.push(event);
  }

  drainEvents(): string[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  // ---- LRU cache (docs/spec/residency-library.md#rl-4) ------------------------------------------

  private listOf(status: ObjectStatus): number[] {
    return status === 'resident' ? this.resident : this.evicted;
  }

  private unlink(object: number): void {
    const list = this.listOf(this.statusOf[object]!);
    const at = list.indexOf(object);
    if (at < 0)
      throw new Error(`model: object ${object} is not in its ${this.statusOf[object]} list`);
    list.splice(at, 1);
  }

  /** LRU.Insert: at the head of the list matching the status. */
  private lruInsert(object: number): void {
    this.listOf(this.statusOf[object]!).unshift(object);
    if (this.statusOf[object] === 'resident') {
      this.numResident++;
      this.residentSizeBytes += this.size(object);
    } else {
      this.numEvicted++;
    }
  }

  private lruRemove(object: number): void {
    this.unlink(object);
    if (this.statusOf[object] === 'resident') {
      this.numResident--;
      this.residentSizeBytes -= this.size(object);
    } else {
      this.numEvicted--;
    }
  }

  private lruMakeResident(object: number): void {
    if (this.statusOf[object] !== 'evicted')
      throw new Error(`model: MakeResident bookkeeping of a ${this.statusOf[object]} object`);
    this.unlink(object);
    this.statusOf[object] = 'resident';
    this.resident.push(object);
    this.numEvicted--;
    this.numResident++;
    this.residentSizeBytes += this.size(object);
  }

  private lruEvict(object: number): void {
    if (this.statusOf[object] !== 'resident')
      throw new Error(`model: Evict bookkeeping of a ${this.statusOf[object]} object`);
    this.unlink(object);
    this.statusOf[object] = 'evicted';
    this.evicted.push(object);
    this.numResident--;
    this.numEvicted++;
    this.residentSizeBytes -= this.size(object);
  }

  private objectReferenced(object: number): void {
    this.unlink(object);
    this.resident.push(object);
  }

  private trimAged(
    firstUncompleted: SyncPoint | null,
    nowTicks: bigint,
    graceTicks: bigint,
  ): number[] {
    const chosen: number[] = [];
    while (this.resident.length > 0) {
      const head = this.resident[0]!;
      if (firstUncompleted !== null && this.lastSync[head]! >= firstUncompleted.generation) break;
      const ageTicks = (nowTicks - BigInt(this.lastUsedTicks[head]!)) & U64_MASK;
      if (ageTicks <= graceTicks) break;
      chosen.push(head);
      this.lruEvict(head);
    }
    return chosen;
  }

  private trimToSyncPointInclusive(
    usageBytes: number,
    budgetBytes: number,
    syncPoint: number,
  ): number[] {
    const chosen: number[] = [];
    let usage = usageBytes;
    while (this.resident.length > 0) {
      const head = this.resident[0]!;
      if (this.lastSync[head]! > syncPoint || usage < budgetBytes) break;
      chosen.push(head);
      this.lruEvict(head);
      usage -= this.size(head);
    }
    return chosen;
  }

  // ---- tracking (docs/spec/residency-library.md#rl-5) -------------------------------------------

  beginTracking(object: number): void {
    if (this.statusOf[object] !== 'untracked')
      throw new ContractError(ManagerErrors.ALREADY_TRACKED, `object ${object} is already tracked`);
    this.gpu.createObject(object, !this.config.startEvicted);
    this.statusOf[object] = this.config.startEvicted ? 'evicted' : 'resident';
    this.lastSync[object] = 0;
    this.lastUsedTicks[object] = 0;
    this.lruInsert(object);
  }

  endTracking(object: number): void {
    if (this.statusOf[object] === 'untracked')
      throw new ContractError(ManagerErrors.NOT_TRACKED, `object ${object} is not tracked`);
    const inQueuedWork = this.works.some((work) => work.objects.includes(object));
    if (
      this.sets.flaggedSlots(object).length > 0 ||
      inQueuedWork ||
      this.gpu.isReferencedByPendingWork(object)
    ) {
      throw new ContractError(
        ManagerErrors.END_TRACKING_IN_USE,
        `object ${object} is in an open set or in flight`,
      );
    }
    this.lruRemove(object);
    this.statusOf[object] = 'untracked';
    this.gpu.destroyObject(object);
  }

  // ---- budgets and grace (docs/spec/residency-library.md#rl-5, #rl-8-4; Unreal's cap) -----------

  private localMemory(): LocalBudget {
    const reported = this.gpu.localMemory();
    if (!this.config.unrealBudgetCap)
      return {
        budgetBytes: reported.budgetBytes,
        usageBytes: reported.usageBytes,
        limitBytes: null,
      };
    const limitBytes = this.background
      ? 0
      : this.config.debugBudgetBytes >= 0
        ? this.config.debugBudgetBytes
        : reported.budgetBytes;
    return {
      budgetBytes: Math.min(reported.budgetBytes, limitBytes),
      usageBytes: reported.usageBytes,
      limitBytes,
    };
  }

  private graceTicks(local: LocalBudget): bigint {
    if (local.limitBytes === 0) return 0n;
    const freq = Math.fround(this.config.ticksPerSecond);
    const minTicks = BigInt(Math.trunc(Math.fround(freq * MIN_GRACE_SECONDS)));
    const maxTicks = BigInt(Math.trunc(Math.fround(freq * MAX_GRACE_SECONDS)));
    const ratio = local.usageBytes / local.budgetBytes;
    const pressure = ratio < 1.0 ? ratio : 1.0; // NaN and +Infinity become 1.0
    if (!(pressure > TRIM_THRESHOLD)) return NEVER_TRIM_TICKS;
    const normalized = (pressure - TRIM_THRESHOLD) / (1.0 - TRIM_THRESHOLD);
    return BigInt(Math.trunc(Number(maxTicks - minTicks) * (1.0 - normalized))) + minTicks;
  }

  /** Exposed for the spec-example tests. */
  gracePeriodTicks(localUsageBytes: number, localBudgetBytes: number): bigint {
    return this.graceTicks({
      usageBytes: localUsageBytes,
      budgetBytes: localBudgetBytes,
      limitBytes: null,
    });
  }

  // ---- sync points (docs/spec/residency-library.md#rl-6) ----------------------------------------

  private knowQueue(queue: number): void {
    if (!this.fenceValue.has(queue)) {
      this.knownQueues.push(queue);
      this.fenceValue.set(queue, 1); // the counter starts at 1; the D3D fence completes at 0
    }
  }

  signalFence(queue: number): number {
    this.knowQueue(queue);
    const value = this.fenceValue.get(queue)!;
    this.gpu.queueSignal(queue, value);
    this.fenceValue.set(queue, value + 1);
    this.syncPoints.push({
      generation: this.generation,
      entries: this.knownQueues.map((q) => [q, this.fenceValue.get(q)! - 1]),
    });
    this.generation++;
    return value;
  }

  private isComplete(point: SyncPoint): boolean {
    for (const [queue, value] of point.entries)
      if (this.gpu.fenceCompleted(queue) < value) return false;
    return true;
  }

  private dequeueCompletedSyncPoints(): SyncPoint | null {
    while (this.syncPoints.length > 0 && this.isComplete(this.syncPoints[0]!))
      this.syncPoints.shift();
    return this.syncPoints[0] ?? null;
  }

  private waitForSyncPoint(generation: number): void {
    while (this.syncPoints.length > 0) {
      const head = this.syncPoints[0]!;
      if (head.generation > generation) return;
      if (head.generation === generation) {
        this.emit('wait-sync-point');
        for (const [queue, value] of head.entries) {
          if (this.gpu.fenceCompleted(queue) < value) this.gpu.cpuWait(queue, value);
        }
      }
      this.syncPoints.shift();
      if (head.generation === generation) return;
    }
  }

  // ---- submission (docs/spec/residency-library.md#rl-7) -----------------------------------------

  executeCommandLists(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
  ): HResult {
    if (!this.validateSets(sets)) return 'E_INVALIDARG';
    return this.executeSubset(queue, lists, sets, 0, sets.length);
  }

  /** Open sets are E_INVALIDARG; a set holding an untracked object is a contract error. */
  private validateSets(sets: readonly (number | null)[]): boolean {
    for (const set of sets) if (set !== null && this.sets.isOpen(set)) return false;
    for (const set of sets) {
      if (set === null) continue;
      for (const object of this.sets.contents(set)) {
        if (this.statusOf[object] === 'untracked')
          throw new ContractError(
            ManagerErrors.SET_HOLDS_UNTRACKED,
            `set ${set} holds untracked object ${object}`,
          );
      }
    }
    return true;
  }

  private executeSubset(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
    from: number,
    to: number,
  ): HResult {
    const count = to - from;
    const merged = this.sets.execute(sets.slice(from, to));
    if (merged.hr !== 'S_OK') return merged.hr;
    const budgetBytes = this.localMemory().budgetBytes + this.gpu.nonLocalMemory().budgetBytes;
    if (count > 1 && merged.totalSizeBytes > budgetBytes) {
      this.emit('split');
      const half = Math.floor(count / 2);
      const first = this.executeSubset(queue, lists, sets, from, from + half);
      const second = this.executeSubset(queue, lists, sets, from + half, to);
      return first === 'S_OK' && second === 'S_OK' ? 'S_OK' : 'E_FAIL';
    }
    this.knowQueue(queue);
    this.submitPaging(queue, merged.objects);
    this.gpu.executeCommandLists(queue, lists.slice(from, to));
    this.signalFence(queue);
    return 'S_OK';
  }

  makeResidentForQueue(queue: number, set: number): HResult {
    if (!this.validateSets([set])) return 'E_INVALIDARG';
    const merged = this.sets.execute([set]);
    if (merged.hr !== 'S_OK') return merged.hr;
    this.knowQueue(queue);
    this.submitPaging(queue, merged.objects);
    return 'S_OK';
  }

  /** Paging work for generation G, then the queue's GPU wait on the paging fence. */
  private submitPaging(queue: number, objects: number[]): void {
    const generation = this.generation;
    if (this.config.mode === 'inline') {
      this.processPagingWork({ objects, generation, pagingFenceValue: 0 });
      if (this.pagingCounter > 0) this.gpu.queueWaitPaging(queue, this.pagingCounter);
    } else {
      const pagingFenceValue = this.pagingCounter;
      while (this.works.length >= this.config.maxLatency) {
        this.emit('paging-queue-full');
        this.pagingWorkerStep();
      }
      this.works.push({ objects, generation, pagingFenceValue });
      this.gpu.queueWaitPaging(queue, pagingFenceValue);
      this.pagingCounter++;
    }
  }

  pagingWorkerStep(): boolean {
    const work = this.works.shift();
    if (work === undefined) return false;
    this.processPagingWork(work);
    this.gpu.cpuSignalPaging(work.pagingFenceValue);
    return true;
  }

  setBackground(on: boolean): void {
    this.background = on;
  }

  // ---- paging (docs/spec/residency-library.md#rl-8) ---------------------------------------------

  private deviceMakeResident(objects: number[], reason: 'batch' | 'fallback'): boolean {
    if (this.config.mode === 'inline') {
      const ok = this.gpu.enqueueMakeResident(
        objects,
        0,
        objects.length,
        this.pagingCounter + 1,
        reason,
      );
      if (ok) this.pagingCounter++;
      return ok;
    }
    return this.gpu.makeResident(objects, 0, objects.length, reason);
  }

  private deviceEvict(objects: number[]): void {
    if (this.gpu.evict(objects, 0, objects.length)) return;
    this.emit('evict-failed');
    if (!this.gpu.evict(objects, 0, objects.length)) throw new Error('model: Evict failed twice');
  }

  private processPagingWork(work: Work): void {
    let firstUncompleted = this.dequeueCompletedSyncPoints();
    const now = this.gpu.ticks;
    const nowTicks = BigInt(now);
    const toMake: number[] = [];
    let sizeToMakeResident = 0;
    // Mark.
    for (const object of work.objects) {
      if (this.statusOf[object] === 'evicted') {
        toMake.push(object);
        this.lruMakeResident(object);
        sizeToMakeResident += this.size(object);
      }
      this.lastSync[object] = work.generation;
      this.lastUsedTicks[object] = now;
      this.objectReferenced(object);
    }
    // Aged trim.
    const grace = this.graceTicks(this.localMemory());
    const aged = this.trimAged(firstUncompleted, nowTicks, grace);
    if (aged.length > 0) {
      this.emit('aged-trim');
      this.deviceEvict(aged);
    }
    if (toMake.length === 0) return;
    // Batched make-resident with waits and trims under pressure.
    let made = 0;
    let index = 0;
    const roundLimit = 2 * (this.syncPoints.length + toMake.length) + 8;
    for (let round = 0; ; round++) {
      if (round > roundLimit) throw new Error(`model: paging loop exceeded ${roundLimit} rounds`);
      const local = this.localMemory();
      const nonLocal = this.gpu.nonLocalMemory();
      const usageBytes = local.usageBytes + nonLocal.usageBytes;
      const budgetBytes = local.budgetBytes + nonLocal.budgetBytes;
      const availableBytes = budgetBytes - usageBytes;
      const batchStart = index;
      let ok = true;
      if (availableBytes > 0) {
        let batchBytes = 0;
        while (index < toMake.length && batchBytes + this.size(toMake[index]!) <= availableBytes) {
          batchBytes += this.size(toMake[index]!);
          index++;
        }
        ok = this.deviceMakeResident(toMake.slice(batchStart, index), 'batch');
        if (ok) {
          made += index - batchStart;
          sizeToMakeResident -= batchBytes;
        } else {
          this.emit('make-resident-failed');
          index = batchStart;
        }
      }
      if (ok && made === toMake.length) break;
      const head = this.resident[0];
      firstUncompleted = this.dequeueCompletedSyncPoints();
      if (
        head === undefined ||
        this.lastSync[head]! >= work.generation ||
        firstUncompleted === null
      ) {
        this.emit('forced-fallback');
        const rest = toMake.slice(index);
        if (!this.deviceMakeResident(rest, 'fallback')) {
          this.emit('make-resident-failed');
          if (!this.deviceMakeResident(rest, 'fallback'))
            throw new Error('model: fallback MakeResident failed twice');
        }
        break;
      }
      let waitGeneration = firstUncompleted.generation;
      if (waitGeneration === work.generation) {
        if (work.generation === 0)
          throw new Error('model: G-1 at generation 0 (the guard above makes this unreachable)');
        this.emit('g-minus-one');
        waitGeneration = work.generation - 1;
      }
      this.waitForSyncPoint(waitGeneration);
      const trimmed = this.trimToSyncPointInclusive(
        usageBytes + sizeToMakeResident,
        budgetBytes,
        waitGeneration,
      );
      if (trimmed.length > 0) this.emit('pressure-trim');
      this.deviceEvict(trimmed);
    }
  }

  // ---- inspection ---------------------------------------------------------------------------

  status(object: number): ObjectStatus {
    return this.statusOf[object]!;
  }
  residentList(): readonly number[] {
    return this.resident;
  }
  evictedList(): readonly number[] {
    return this.evicted;
  }
  counters(): { resident: number; evicted: number; residentSizeBytes: number } {
    return {
      resident: this.numResident,
      evicted: this.numEvicted,
      residentSizeBytes: this.residentSizeBytes,
    };
  }
  lastSyncPoint(object: number): number {
    return this.lastSync[object]!;
  }
  firstUncompletedGeneration(): number {
    for (const point of this.syncPoints) if (!this.isComplete(point)) return point.generation;
    return -1;
  }
  lastUsedTimestamp(object: number): number {
    return this.lastUsedTicks[object]!;
  }
  syncPointGenerations(): readonly number[] {
    return this.syncPoints.map((point) => point.generation);
  }
  currentGeneration(): number {
    return this.generation;
  }
  queuedWorks(): number {
    return this.works.length;
  }
}
