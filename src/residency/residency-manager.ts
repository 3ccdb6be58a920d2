/**
 * The residency manager as an engine would ship it (docs/spec/residency-library.md#rl-4 to #rl-8;
 * Unreal's settings from docs/spec/engine.md#rs). Agrees with models/residency-manager.ts
 * decision for decision; the model's header lists the choices the spec leaves open.
 *
 * Like d3dx12Residency.h, it is a small composition of parts, one concept each:
 * - `LruList` (lru-list.ts): the resident and evicted lists, stamps and trims
 *   (docs/spec/residency-library.md#rl-4);
 * - `SyncPointRing` (sync-points.ts): generations, queue fences and in-flight sync points
 *   (docs/spec/residency-library.md#rl-5 to #rl-6);
 * - `PagingWorkQueue` (paging-queue.ts): the async work ring of MaxLatency + 1 slots
 *   (docs/spec/residency-library.md#rl-7);
 * - `ResidencyBudgets` (budgets.ts) and `Pager` (paging.ts): budgets, grace and ProcessPagingWork
 *   (docs/spec/residency-library.md#rl-8);
 * - the residency-set pool (residency-manager-sets.ts), which also merges the master set.
 * The manager validates, splits and submits (docs/spec/residency-library.md#rl-7) and answers the
 * inspection calls.
 *
 * The device is a port (`ResidencyDevice`, residency-device.ts): by default the manager builds
 * a simulated GPU from its config; `options.device` hands it another one.
 *
 * Each part is built by a protected factory, so the bug catalog (mutants/) re-creates a pitfall
 * by handing the manager a part with one step overridden; nothing in src/ depends on that.
 */
import { ContractError } from '../contract.js';
import { SimGpu } from '../gpu/sim-gpu.js';
import { ResidencyBudgets } from './budgets.js';
import { EVICTED, LruList, RESIDENT, UNTRACKED } from './lru-list.js';
import { ManagerSetPool } from './residency-manager-sets.js';
import { ManagerEvents, type ResidencyDevice } from './residency-device.js';
import type { HResult } from './residency-set-types.js';
import { Pager } from './paging.js';
import { PagingWorkQueue } from './paging-queue.js';
import { SyncPointRing } from './sync-points.js';
import {
  ManagerErrors,
  type ObjectStatus,
  type ResidencyManager,
  type ResidencyManagerConfig,
} from './residency-manager-types.js';

export { EVICTED, RESIDENT, UNTRACKED } from './lru-list.js';

export interface ManagerOptions<D extends ResidencyDevice = SimGpu> {
  /** Fully checking simulated GPU and recorded events (default). The benchmark turns both off. */
  readonly checked?: boolean;
  /** The device to run on; absent, a simulated GPU built from the config. */
  readonly device?: D;
}

export class ResidencyManagerImpl<D extends ResidencyDevice = SimGpu>
  implements ResidencyManager<D>
{
  readonly gpu: D;
  readonly sets: ManagerSetPool;
  protected readonly checked: boolean;
  protected readonly events: ManagerEvents;
  protected readonly lru: LruList;
  protected readonly syncPoints: SyncPointRing;
  protected readonly works: PagingWorkQueue;
  protected readonly budgets: ResidencyBudgets;
  protected readonly pager: Pager;
  /** The master set's unique objects (docs/spec/residency-library.md#rl-7-4), reused by every submission. */
  protected readonly master: Int32Array;

  /** `D` comes from `options.device`; without one it is the simulated GPU the manager builds. */
  constructor(
    readonly config: ResidencyManagerConfig,
    options: ManagerOptions<D> = {},
  ) {
    this.checked = options.checked ?? true;
    this.gpu = options.device ?? (simulatedGpu(config, this.checked) as ResidencyDevice as D);
    this.sets = new ManagerSetPool({
      slotCount: config.slotCount,
      initialCapacity: config.initialCapacity,
      objectSizesBytes: config.objectSizesBytes,
    });
    this.events = new ManagerEvents(this.checked);
    this.lru = this.createLru();
    this.syncPoints = this.createSyncPoints();
    this.works = this.createPagingQueue();
    this.budgets = this.createBudgets();
    this.pager = this.createPager();
    this.master = new Int32Array(config.objectSizesBytes.length);
  }

  // ---- parts (each factory may read the parts built before it) ------------------------------

  protected createLru(): LruList {
    return new LruList(this.config.objectSizesBytes);
  }
  protected createSyncPoints(): SyncPointRing {
    return new SyncPointRing(this.gpu, this.config.queueCount, this.events);
  }
  protected createPagingQueue(): PagingWorkQueue {
    return new PagingWorkQueue(this.config.maxLatency, this.config.objectSizesBytes.length);
  }
  protected createBudgets(): ResidencyBudgets {
    return new ResidencyBudgets(this.gpu, this.config);
  }
  protected createPager(): Pager {
    const { gpu: device, lru, syncPoints, budgets, events } = this;
    return new Pager({
      device,
      lru,
      syncPoints,
      budgets,
      events,
      inline: this.config.mode === 'inline',
    });
  }

  drainEvents(): string[] {
    return this.events.drain();
  }

  // ---- tracking -------------------------------------------------------------------------------

  beginTracking(object: number): void {
    if (this.lru.statusOf[object] !== UNTRACKED)
      throw new ContractError(ManagerErrors.ALREADY_TRACKED, `object ${object} is already tracked`);
    this.gpu.createObject(object, !this.config.startEvicted);
    this.lru.track(object, this.config.startEvicted ? EVICTED : RESIDENT);
  }

  endTracking(object: number): void {
    if (this.lru.statusOf[object] === UNTRACKED)
      throw new ContractError(ManagerErrors.NOT_TRACKED, `object ${object} is not tracked`);
    if (
      this.sets.flaggedSlots(object).length > 0 ||
      this.works.holds(object) ||
      this.gpu.isReferencedByPendingWork(object)
    ) {
      throw new ContractError(
        ManagerErrors.END_TRACKING_IN_USE,
        `object ${object} is in an open set or in flight`,
      );
    }
    this.lru.untrack(object);
    this.gpu.destroyObject(object);
  }

  // ---- submission (docs/spec/residency-library.md#rl-7) -----------------------------------------

  signalFence(queue: number): number {
    return this.syncPoints.signal(queue);
  }

  executeCommandLists(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
  ): HResult {
    if (!this.validateSets(sets, 0, sets.length)) return 'E_INVALIDARG';
    return this.executeSubset(queue, lists, sets, 0, sets.length);
  }

  protected validateSets(sets: readonly (number | null)[], from: number, to: number): boolean {
    if (this.sets.anyOpen(sets, from, to)) return false;
    const untracked = this.sets.firstUntracked(sets, from, to, this.lru.statusOf);
    if (untracked >= 0) {
      const set = this.sets.firstHolding(sets, from, to, untracked);
      throw new ContractError(
        ManagerErrors.SET_HOLDS_UNTRACKED,
        `set ${set} holds untracked object ${untracked}`,
      );
    }
    return true;
  }

  protected shouldSplit(count: number, totalSizeBytes: number, budgetBytes: number): boolean {
    return count > 1 && totalSizeBytes > budgetBytes;
  }

  private executeSubset(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
    from: number,
    to: number,
  ): HResult {
    const masterCount = this.sets.mergeMaster(sets, from, to, this.master);
    if (masterCount < 0) return 'E_OUTOFMEMORY';
    if (this.shouldSplit(to - from, this.sets.mergedSizeBytes, this.budgets.totalBudgetBytes())) {
      this.events.emit('split');
      const half = from + Math.floor((to - from) / 2);
      const first = this.executeSubset(queue, lists, sets, from, half);
      const second = this.executeSubset(queue, lists, sets, half, to);
      return first === 'S_OK' && second === 'S_OK' ? 'S_OK' : 'E_FAIL';
    }
    this.syncPoints.knowQueue(queue);
    this.submitPaging(queue, masterCount);
    // Always a copy: the GPU keeps what it was given until the lists run, and the caller may
    // reuse its array after the call (the runtime copies the list pointers too).
    this.gpu.executeCommandLists(queue, lists.slice(from, to));
    this.syncPoints.signal(queue);
    return 'S_OK';
  }

  makeResidentForQueue(queue: number, set: number): HResult {
    const sets = [set];
    if (!this.validateSets(sets, 0, 1)) return 'E_INVALIDARG';
    const masterCount = this.sets.mergeMaster(sets, 0, 1, this.master);
    if (masterCount < 0) return 'E_OUTOFMEMORY';
    this.syncPoints.knowQueue(queue);
    this.submitPaging(queue, masterCount);
    return 'S_OK';
  }

  protected queueWaitOnPaging(queue: number, value: number): void {
    this.gpu.queueWaitPaging(queue, value);
  }

  /** Paging work for the master in `this.master[0, count)`, then the queue's paging wait. */
  private submitPaging(queue: number, count: number): void {
    const pager = this.pager;
    if (this.config.mode === 'inline') {
      pager.process(this.master, 0, count, this.syncPoints.generation);
      if (pager.pagingCounter > 0) this.queueWaitOnPaging(queue, pager.pagingCounter);
      return;
    }
    for (let round = 0; this.works.full(); round++) {
      if (round > this.config.maxLatency) throw new Error('paging worker made no room');
      this.events.emit('paging-queue-full');
      this.pagingWorkerStep();
    }
    this.works.enqueue(this.master, count, this.syncPoints.generation, pager.pagingCounter);
    this.queueWaitOnPaging(queue, pager.pagingCounter);
    pager.pagingCounter++;
  }

  pagingWorkerStep(): boolean {
    const works = this.works;
    const slot = works.dequeue();
    if (slot < 0) return false;
    this.pager.process(
      works.objects,
      works.startOf(slot),
      works.countAt(slot),
      works.generationAt(slot),
    );
    this.gpu.cpuSignalPaging(works.fenceAt(slot));
    return true;
  }

  setBackground(on: boolean): void {
    this.budgets.background = on;
  }

  graceFor(usageBytes: number, budgetBytes: number): number {
    return this.budgets.graceFor(usageBytes, budgetBytes);
  }

  // ---- inspection -----------------------------------------------------------------------------

  status(object: number): ObjectStatus {
    const status = this.lru.statusOf[object];
    return status === RESIDENT ? 'resident' : status === EVICTED ? 'evicted' : 'untracked';
  }
  residentList(): readonly number[] {
    return this.lru.residentList();
  }
  evictedList(): readonly number[] {
    return this.lru.evictedList();
  }
  counters(): { resident: number; evicted: number; residentSizeBytes: number } {
    const lru = this.lru;
    return {
      resident: lru.numResident,
      evicted: lru.numEvicted,
      residentSizeBytes: lru.residentSizeBytes,
    };
  }
  lastSyncPoint(object: number): number {
    return this.lru.lastSync[object]!;
  }
  lastUsedTimestamp(object: number): number {
    return this.lru.lastUsedTicks[object]!;
  }
  firstUncompletedGeneration(): number {
    return this.syncPoints.firstUncompleted();
  }
  syncPointGenerations(): readonly number[] {
    return this.syncPoints.inFlight();
  }
  currentGeneration(): number {
    return this.syncPoints.generation;
  }
  queuedWorks(): number {
    return this.works.queued();
  }
}

function simulatedGpu(config: ResidencyManagerConfig, checked: boolean): SimGpu {
  const { objectSizesBytes, queueCount, ticksPerSecond, localBudgetBytes, nonLocalBudgetBytes } =
    config;
  return new SimGpu({
    objectSizesBytes,
    queueCount,
    ticksPerSecond,
    localBudgetBytes,
    nonLocalBudgetBytes,
    checked,
  });
}
