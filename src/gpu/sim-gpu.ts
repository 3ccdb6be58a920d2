/**
 * The simulated GPU: the judge of the residency manager (DESIGN.md concept 5,
 * docs/spec/residency-library.md#rl-6, #rl-10-1 to #rl-10-3, #rl-13).
 *
 * One instance per side. It holds what a real device holds and nothing of anyone's bookkeeping:
 * - device residency per object as a reference count, changed only by MakeResident,
 *   EnqueueMakeResident and Evict calls (and by creating or destroying the object);
 * - local and non-local budgets that commands may change at any time, down to 0; the usage of
 *   each segment is derived from device residency, never from a manager's counters: an object
 *   lives in the local segment unless a command moved it to the non-local one (`moveToSegment`,
 *   what the OS does when it demotes an allocation to system memory), and a resident object
 *   counts towards the usage of the segment it lives in;
 * - queues whose items (paging-fence waits, command lists, fence signals) run only when a
 *   command calls `progress`, in order, a wait blocking its queue until the paging fence has
 *   reached the value; a D3D fence per queue whose completed value starts at 0;
 * - the paging fence, signalled by the CPU (async mode) or by the paging queue when it
 *   processes an EnqueueMakeResident (queued mode);
 * - a tick clock with a frequency.
 *
 * When a command list runs, the GPU touches every object the list references. Touching an
 * object that is not device-resident, or whose queued make-resident has not reached the paging
 * fence, is a violation reported with that object's history. So is an Evict of an object a
 * runnable list still references, a MakeResident of an object already resident (one device call
 * per status flip), an Evict of an object that is not resident, and a make-resident call tagged
 * as a budgeted batch that takes the usage above the budget.
 *
 * A CPU wait (`cpuWait`) lets the GPU run the waited queue (and the paging queue) until the
 * fence reaches the value: that is what blocking means in a simulation where the GPU moves only
 * when someone lets it. A wait that can never complete is a 'deadlock' violation.
 *
 * Failures are injected one call kind at a time (`failNext`), one shot each.
 *
 * The queues, fences and the paging fence live in `SimQueues` (sim-queues.ts); this class holds
 * the device side (objects, residency, segments, budgets, clock, device calls) and the judge's
 * records (call log, per-object history, violations). Its vocabulary is in sim-gpu-types.ts.
 */
import type { ResidencyDevice } from '../residency/residency-device.js';
import { HistoryKind, ObjectHistory, reasonCode } from './object-history.js';
import { SimQueues } from './sim-queues.js';
import type {
  DeviceCallKind,
  DeviceCallRecord,
  MakeResidentReason,
  MemoryInfo,
  SimGpuConfig,
  Violation,
  ViolationKind,
} from './sim-gpu-types.js';

export * from './sim-gpu-types.js';

export class SimGpu implements ResidencyDevice {
  readonly objectCount: number;
  readonly queueCount: number;
  readonly ticksPerSecond: number;
  readonly checked: boolean;
  private readonly sizesBytes: Float64Array;
  /** Device residency reference count per object. */
  private readonly refCount: Int32Array;
  /** Paging fence value at which a queued make-resident of the object completes (0: at once). */
  private readonly readyAtPagingValue: Float64Array;
  private localUsage = 0;
  private nonLocalUsage = 0;
  /** 1 when the object lives in the non-local segment. */
  private readonly inNonLocal: Uint8Array;
  localBudgetBytes: number;
  nonLocalBudgetBytes: number;
  private clockTicks = 0;
  private readonly queues: SimQueues;
  private readonly failArmed = new Set<DeviceCallKind>();
  private calls: DeviceCallRecord[] = [];
  /**
   * Called with each Evict's objects before the device applies it, so a harness can judge the
   * eviction against the caller's state at that very moment (checked mode only).
   */
  evictObserver: ((objects: readonly number[]) => void) | null = null;
  readonly violations: Violation[] = [];
  private readonly history: ObjectHistory | null;

  constructor(config: SimGpuConfig) {
    this.objectCount = config.objectSizesBytes.length;
    this.queueCount = config.queueCount;
    this.ticksPerSecond = config.ticksPerSecond;
    this.checked = config.checked ?? true;
    this.sizesBytes = Float64Array.from(config.objectSizesBytes);
    this.refCount = new Int32Array(this.objectCount);
    this.readyAtPagingValue = new Float64Array(this.objectCount);
    this.inNonLocal = new Uint8Array(this.objectCount);
    this.localBudgetBytes = config.localBudgetBytes;
    this.nonLocalBudgetBytes = config.nonLocalBudgetBytes;
    this.queues = new SimQueues(config.queueCount, this.checked, {
      checkResidency: (queue, submission, lists, what) =>
        this.checkResidency(queue, submission, lists, what),
      log: (record) => this.log(record),
      violate: (kind, object, message) => this.violate(kind, object, message),
    });
    this.history = this.checked ? new ObjectHistory(this.objectCount) : null;
  }

  // ---- clock and budgets -------------------------------------------------------------------

  /** The QPC tick count. Moves only by `advanceClock`; stays a safe integer (bounded steps). */
  get ticks(): number {
    return this.clockTicks;
  }
  advanceClock(ticks: number): void {
    if (!Number.isSafeInteger(ticks) || ticks < 0)
      throw new RangeError(`clock advance must be a natural number, got ${ticks}`);
    // Refused before it moves: a refused advance leaves the clock where it was.
    if (!Number.isSafeInteger(this.clockTicks + ticks))
      throw new RangeError('clock left the safe-integer range');
    this.clockTicks += ticks;
  }

  setBudgets(localBytes: number, nonLocalBytes: number): void {
    this.localBudgetBytes = localBytes;
    this.nonLocalBudgetBytes = nonLocalBytes;
  }

  /** QueryVideoMemoryInfo: the reported budget and the usage derived from device residency. */
  localMemory(): MemoryInfo {
    return { budgetBytes: this.localBudgetBytes, usageBytes: this.localUsage };
  }
  nonLocalMemory(): MemoryInfo {
    return { budgetBytes: this.nonLocalBudgetBytes, usageBytes: this.nonLocalUsage };
  }
  get localUsageBytes(): number {
    return this.localUsage;
  }
  get nonLocalUsageBytes(): number {
    return this.nonLocalUsage;
  }

  /**
   * The OS moves the object to the non-local segment (system memory) or back to the local one.
   * Its residency is unchanged; a resident object's bytes move from one segment's usage to the
   * other's. Returns true when the object changed segment.
   */
  moveToSegment(object: number, nonLocal: boolean): boolean {
    this.assertObject(object);
    const to = nonLocal ? 1 : 0;
    if (this.inNonLocal[object] === to) return false;
    const resident = this.refCount[object]! > 0;
    if (resident) this.addUsage(object, -1);
    this.inNonLocal[object] = to;
    if (resident) this.addUsage(object, 1);
    this.note(object, nonLocal ? HistoryKind.MovedToNonLocal : HistoryKind.MovedToLocal);
    return true;
  }

  /** True when the object lives in the non-local segment. */
  isNonLocal(object: number): boolean {
    return this.inNonLocal[object] === 1;
  }

  /** Adds (sign 1) or removes (sign -1) the object's bytes to the usage of its segment. */
  private addUsage(object: number, sign: 1 | -1): void {
    const bytes = sign * this.sizesBytes[object]!;
    if (this.inNonLocal[object] === 1) this.nonLocalUsage += bytes;
    else this.localUsage += bytes;
  }

  // ---- objects ----------------------------------------------------------------------------

  /** Creates the pageable object; created resident or not (CREATE_NOT_RESIDENT). */
  createObject(object: number, resident: boolean): void {
    this.assertObject(object);
    if (this.refCount[object] !== 0)
      throw new Error(`gpu: object ${object} created while it still exists resident`);
    if (resident) this.addResidency(object, 0);
    this.note(object, resident ? HistoryKind.CreatedResident : HistoryKind.CreatedEvicted);
  }

  /** Releases the object: its residency goes with it. */
  destroyObject(object: number): void {
    this.assertObject(object);
    if (this.refCount[object]! > 0) {
      this.addUsage(object, -1);
      this.refCount[object] = 0;
    }
    this.readyAtPagingValue[object] = 0;
    this.note(object, HistoryKind.Destroyed);
  }

  isResident(object: number): boolean {
    return this.refCount[object]! > 0;
  }
  residencyRefCount(object: number): number {
    return this.refCount[object]!;
  }

  /** True if any submitted list whose fence signal has not run references the object. */
  isReferencedByPendingWork(object: number): boolean {
    return this.queues.isReferencedByPendingWork(object);
  }

  // ---- device calls -----------------------------------------------------------------------

  /** Arms a one-shot failure (E_OUTOFMEMORY) of the next call of this kind. */
  failNext(kind: DeviceCallKind): void {
    this.failArmed.add(kind);
  }

  private takeFailure(kind: DeviceCallKind): boolean {
    return this.failArmed.delete(kind);
  }

  /** ID3D12Device::MakeResident (blocking): resident at once. */
  makeResident(
    objects: ArrayLike<number>,
    start: number,
    count: number,
    reason: MakeResidentReason,
  ): boolean {
    if (this.takeFailure('makeResident')) {
      this.log(['makeResident', reason, slice(objects, start, count), 'E_OUTOFMEMORY']);
      return false;
    }
    if (this.checked) this.log(['makeResident', reason, slice(objects, start, count)]);
    this.applyMakeResident(objects, start, count, 0, reason);
    return true;
  }

  /** ID3D12Device3::EnqueueMakeResident: resident once the paging queue signals `fenceValue`. */
  enqueueMakeResident(
    objects: ArrayLike<number>,
    start: number,
    count: number,
    fenceValue: number,
    reason: MakeResidentReason,
  ): boolean {
    if (this.takeFailure('enqueueMakeResident')) {
      this.log([
        'enqueueMakeResident',
        reason,
        slice(objects, start, count),
        fenceValue,
        'E_OUTOFMEMORY',
      ]);
      return false;
    }
    if (this.checked)
      this.log(['enqueueMakeResident', reason, slice(objects, start, count), fenceValue]);
    this.applyMakeResident(objects, start, count, fenceValue, reason);
    this.queues.enqueuePaging(fenceValue);
    return true;
  }

  private applyMakeResident(
    objects: ArrayLike<number>,
    start: number,
    count: number,
    readyAt: number,
    reason: MakeResidentReason,
  ): void {
    const budgetBytes = this.localBudgetBytes + this.nonLocalBudgetBytes;
    for (let i = start; i < start + count; i++) {
      const object = objects[i]!;
      this.assertObject(object);
      if (this.checked && this.refCount[object]! > 0) {
        this.violate(
          'refcount',
          object,
          `MakeResident of object ${object}, already resident (refcount ${this.refCount[object]}): two device calls for one status flip`,
        );
      }
      this.addResidency(object, readyAt);
      if (this.checked) {
        if (readyAt === 0) this.note(object, HistoryKind.MadeResident, reasonCode(reason));
        else this.note(object, HistoryKind.EnqueuedResident, readyAt, reasonCode(reason));
      }
    }
    const usageBytes = this.localUsage + this.nonLocalUsage;
    if (this.checked && reason === 'batch' && count > 0 && usageBytes > budgetBytes) {
      this.violate(
        'over-budget',
        objects[start]!,
        `a budgeted make-resident batch of ${count} object(s) took the usage to ${usageBytes} bytes (local ${this.localUsage} + non-local ${this.nonLocalUsage}) over the budget of ${budgetBytes}`,
      );
    }
  }

  private addResidency(object: number, readyAt: number): void {
    if (this.refCount[object] === 0) this.addUsage(object, 1);
    this.refCount[object] = this.refCount[object]! + 1;
    this.readyAtPagingValue[object] = readyAt;
  }

  /** ID3D12Device::Evict. */
  evict(objects: ArrayLike<number>, start: number, count: number): boolean {
    if (this.takeFailure('evict')) {
      this.log(['evict', slice(objects, start, count), 'E_OUTOFMEMORY']);
      return false;
    }
    if (this.checked) {
      const evicted = slice(objects, start, count);
      this.log(['evict', evicted]);
      if (this.evictObserver !== null) this.evictObserver(evicted);
    }
    for (let i = start; i < start + count; i++) {
      const object = objects[i]!;
      this.assertObject(object);
      if (this.checked) {
        const runnable = this.queues.runnableListReferencing(object);
        if (runnable !== null)
          this.violate(
            'evict-in-flight',
            object,
            `Evict of object ${object} while ${runnable} references it`,
          );
        this.note(object, HistoryKind.Evicted);
      }
      if (this.refCount[object] === 0) {
        if (this.checked)
          this.violate('refcount', object, `Evict of object ${object}, which is not resident`);
        continue;
      }
      this.refCount[object] = this.refCount[object]! - 1;
      if (this.refCount[object] === 0) this.addUsage(object, -1);
    }
    return true;
  }

  // ---- queues and fences (sim-queues.ts) ------------------------------------------------

  /** Queue-side wait for the paging fence to reach `value`. */
  queueWaitPaging(queue: number, value: number): void {
    this.queues.queueWaitPaging(queue, value);
  }

  /** ID3D12CommandQueue::ExecuteCommandLists; each list is the objects it references. */
  executeCommandLists(queue: number, lists: readonly (readonly number[])[]): number {
    return this.queues.executeCommandLists(queue, lists);
  }

  /** ID3D12CommandQueue::Signal of the queue's fence. */
  queueSignal(queue: number, value: number): void {
    this.queues.queueSignal(queue, value);
  }

  fenceCompleted(queue: number): number {
    return this.queues.fenceCompleted(queue);
  }

  get pagingFenceCompleted(): number {
    return this.queues.pagingCompleted;
  }

  /** ID3D12Fence::Signal from the CPU (the async worker's paging fence). */
  cpuSignalPaging(value: number): void {
    this.queues.cpuSignalPaging(value);
  }

  /** Items still to run on the queue (the system reports it). */
  pendingItems(queue: number): number {
    return this.queues.pendingItems(queue);
  }

  /** Runs up to `steps` items of the queue in order; a wait blocks. Returns the items run. */
  progress(queue: number, steps: number): number {
    return this.queues.progress(queue, steps);
  }

  /** Runs up to `steps` queued make-resident operations of the paging queue. */
  pagingProgress(steps: number): number {
    return this.queues.pagingProgress(steps);
  }

  /**
   * A CPU wait for the queue's fence to reach `value`: the GPU runs that queue (and the paging
   * queue when the queue waits on paging) until it does. Returns false on a deadlock.
   */
  cpuWait(queue: number, value: number): boolean {
    return this.queues.cpuWait(queue, value);
  }

  /**
   * A CPU wait of a native manager's thread: like `cpuWait`, but a fence the GPU cannot reach now
   * is false, not a deadlock (another thread may still signal what it waits for).
   */
  advanceTo(queue: number, value: number): boolean {
    return this.queues.advanceTo(queue, value);
  }

  // ---- the judge's records ------------------------------------------------------------------

  private checkResidency(
    queue: number,
    submission: number,
    lists: readonly (readonly number[])[],
    what: string,
  ): void {
    // Index loops: the lists are plain arrays from one caller and views from another, and
    // for...of over both allocated an iterator result per element.
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l]!;
      for (let i = 0; i < list.length; i++) {
        const object = list[i]!;
        if (this.refCount[object] === 0) {
          this.violate(
            'touch-not-resident',
            object,
            `submission #${submission} on queue ${queue} ${what} object ${object}, which is not resident on the device`,
          );
        } else if (this.readyAtPagingValue[object]! > this.queues.pagingCompleted) {
          this.violate(
            'touch-before-paging',
            object,
            `submission #${submission} on queue ${queue} ${what} object ${object} before the paging fence reached ${this.readyAtPagingValue[object]} (it is at ${this.queues.pagingCompleted})`,
          );
        }
        if (what === 'touched') this.note(object, HistoryKind.Touched, submission, queue);
      }
    }
  }

  /** The device calls and waits since the last drain. */
  drainCalls(): DeviceCallRecord[] {
    const calls = this.calls;
    this.calls = [];
    return calls;
  }

  objectHistory(object: number): string[] {
    return this.history !== null && object >= 0 ? this.history.lines(object) : [];
  }

  private log(record: DeviceCallRecord): void {
    if (this.checked) this.calls.push(record);
  }

  private note(object: number, kind: HistoryKind, a = 0, b = 0): void {
    if (this.history !== null) this.history.record(object, this.clockTicks, kind, a, b);
  }

  private violate(kind: ViolationKind, object: number, message: string): void {
    const history =
      object >= 0
        ? `\n    history of object ${object}:\n      ${this.objectHistory(object).join('\n      ')}`
        : '';
    this.violations.push({ kind, object, message: message + history });
  }

  private assertObject(object: number): void {
    if (!(Number.isInteger(object) && object >= 0 && object < this.objectCount))
      throw new RangeError(`gpu: no object ${object}`);
  }
}

function slice(objects: ArrayLike<number>, start: number, count: number): number[] {
  const out: number[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = objects[start + i]!;
  return out;
}
