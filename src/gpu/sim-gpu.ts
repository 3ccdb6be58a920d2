/**
 * The simulated GPU: the judge of the residency manager (DESIGN.md concept 5,
 * residency-library.md §6, §10.1-§10.3, §13).
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
 */

/** The device call kinds a manager makes; each can be armed to fail once. */
export type DeviceCallKind = 'makeResident' | 'enqueueMakeResident' | 'evict';
export const DEVICE_CALL_KINDS: readonly DeviceCallKind[] = ['makeResident', 'enqueueMakeResident', 'evict'];

/** Why a manager makes a make-resident call: a budgeted batch, or the documented over-budget fallback. */
export type MakeResidentReason = 'batch' | 'fallback';

export type ViolationKind =
  | 'touch-not-resident'
  | 'touch-before-paging'
  | 'deadlock'
  | 'evict-in-flight'
  | 'refcount'
  | 'over-budget';

export interface Violation {
  readonly kind: ViolationKind;
  readonly object: number;
  readonly message: string;
}

/** One logged device call or CPU wait, as plain data (the observations compare these). */
export type DeviceCallRecord = (string | number | number[])[];

export interface SimGpuConfig {
  readonly objectSizesBytes: readonly number[];
  readonly queueCount: number;
  readonly ticksPerSecond: number;
  readonly localBudgetBytes: number;
  readonly nonLocalBudgetBytes: number;
  /**
   * Full checking (history, call log, in-flight scans, touches). The benchmark turns it off to
   * measure the manager rather than the judge; the property suites always keep it on.
   */
  readonly checked?: boolean;
}

export interface MemoryInfo {
  readonly budgetBytes: number;
  readonly usageBytes: number;
}

const enum ItemKind {
  Wait = 0,
  Execute = 1,
  Signal = 2,
}

interface QueueItem {
  kind: ItemKind;
  /** Wait: paging fence value; Signal: queue fence value; Execute: submission number. */
  value: number;
  /** Execute: the lists, each the objects it references. */
  lists: readonly (readonly number[])[] | null;
  /** Execute: checked when it became runnable (no unsatisfied paging wait ahead of it). */
  vetted: boolean;
}

interface SimQueue {
  completedValue: number;
  items: QueueItem[];
  head: number;
  /** Lists that ran but whose following fence signal has not run yet: still in flight. */
  unretired: QueueItem[];
}

interface PagingItem {
  objects: number[];
  fenceValue: number;
}

/** Longest history kept per object (most recent entries); generated sequences stay far below it. */
const HISTORY_LIMIT = 1000;
/** Bound of the items one `cpuWait` may run before it declares a deadlock. */
const CPU_WAIT_STEP_LIMIT = 1_000_000;

export class SimGpu {
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
  private readonly queues: SimQueue[] = [];
  private pagingCompleted = 0;
  private readonly pagingItems: PagingItem[] = [];
  private pagingHead = 0;
  private submissions = 0;
  private readonly failArmed = new Set<DeviceCallKind>();
  private calls: DeviceCallRecord[] = [];
  /**
   * Called with each Evict's objects before the device applies it, so a harness can judge the
   * eviction against the caller's state at that very moment (checked mode only).
   */
  evictObserver: ((objects: readonly number[]) => void) | null = null;
  readonly violations: Violation[] = [];
  private readonly history: string[][];

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
    for (let q = 0; q < config.queueCount; q++) this.queues.push({ completedValue: 0, items: [], head: 0, unretired: [] });
    this.history = this.checked ? Array.from({ length: this.objectCount }, () => []) : [];
  }

  // ---- clock and budgets -------------------------------------------------------------------

  /** The QPC tick count. Moves only by `advanceClock`; stays a safe integer (bounded steps). */
  get ticks(): number {
    return this.clockTicks;
  }
  advanceClock(ticks: number): void {
    if (!Number.isSafeInteger(ticks) || ticks < 0) throw new RangeError(`clock advance must be a natural number, got ${ticks}`);
    // Refused before it moves: a refused advance leaves the clock where it was.
    if (!Number.isSafeInteger(this.clockTicks + ticks)) throw new RangeError('clock left the safe-integer range');
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
    this.note(object, nonLocal ? 'moved to the non-local segment' : 'moved to the local segment');
    return true;
  }

  /** True when the object lives in the non-local segment. */
  isNonLocal(object: number): boolean {
    return this.inNonLocal[object] === 1;
  }

  /** Adds (sign 1) or removes (sign -1) the object's bytes to the usage of its segment. */
  private addUsage(object: number, sign: 1 | -1): void {
    if (this.inNonLocal[object] === 1) this.nonLocalUsage += sign * this.sizesBytes[object]!;
    else this.localUsage += sign * this.sizesBytes[object]!;
  }

  // ---- objects ----------------------------------------------------------------------------

  /** Creates the pageable object; created resident or not (CREATE_NOT_RESIDENT). */
  createObject(object: number, resident: boolean): void {
    this.assertObject(object);
    if (this.refCount[object] !== 0) throw new Error(`gpu: object ${object} created while it still exists resident`);
    if (resident) this.addResidency(object, 0);
    this.note(object, resident ? 'created resident' : 'created evicted');
  }

  /** Releases the object: its residency goes with it. */
  destroyObject(object: number): void {
    this.assertObject(object);
    if (this.refCount[object]! > 0) {
      this.addUsage(object, -1);
      this.refCount[object] = 0;
    }
    this.readyAtPagingValue[object] = 0;
    this.note(object, 'destroyed');
  }

  isResident(object: number): boolean {
    return this.refCount[object]! > 0;
  }
  residencyRefCount(object: number): number {
    return this.refCount[object]!;
  }

  /** True if any submitted list whose fence signal has not run references the object. */
  isReferencedByPendingWork(object: number): boolean {
    for (const queue of this.queues) {
      for (const item of queue.unretired) if (listsReference(item.lists!, object)) return true;
      for (let i = queue.head; i < queue.items.length; i++) {
        const item = queue.items[i]!;
        if (item.kind === ItemKind.Execute && listsReference(item.lists!, object)) return true;
      }
    }
    return false;
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
  makeResident(objects: ArrayLike<number>, start: number, count: number, reason: MakeResidentReason): boolean {
    if (this.takeFailure('makeResident')) {
      this.log(['makeResident', reason, slice(objects, start, count), 'E_OUTOFMEMORY']);
      return false;
    }
    if (this.checked) this.log(['makeResident', reason, slice(objects, start, count)]);
    this.applyMakeResident(objects, start, count, 0, reason);
    return true;
  }

  /** ID3D12Device3::EnqueueMakeResident: resident once the paging queue signals `fenceValue`. */
  enqueueMakeResident(objects: ArrayLike<number>, start: number, count: number, fenceValue: number, reason: MakeResidentReason): boolean {
    if (this.takeFailure('enqueueMakeResident')) {
      this.log(['enqueueMakeResident', reason, slice(objects, start, count), fenceValue, 'E_OUTOFMEMORY']);
      return false;
    }
    if (this.checked) this.log(['enqueueMakeResident', reason, slice(objects, start, count), fenceValue]);
    this.applyMakeResident(objects, start, count, fenceValue, reason);
    this.pagingItems.push({ objects: this.checked ? slice(objects, start, count) : [], fenceValue });
    return true;
  }

  private applyMakeResident(objects: ArrayLike<number>, start: number, count: number, readyAt: number, reason: MakeResidentReason): void {
    const budgetBytes = this.localBudgetBytes + this.nonLocalBudgetBytes;
    for (let i = start; i < start + count; i++) {
      const object = objects[i]!;
      this.assertObject(object);
      if (this.checked && this.refCount[object]! > 0) {
        this.violate('refcount', object, `MakeResident of object ${object}, already resident (refcount ${this.refCount[object]}): two device calls for one status flip`);
      }
      this.addResidency(object, readyAt);
      if (this.checked) this.note(object, readyAt === 0 ? `made resident (${reason})` : `enqueued resident at paging ${readyAt} (${reason})`);
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
        const runnable = this.runnableListReferencing(object);
        if (runnable !== null) this.violate('evict-in-flight', object, `Evict of object ${object} while ${runnable} references it`);
        this.note(object, 'evicted');
      }
      if (this.refCount[object] === 0) {
        if (this.checked) this.violate('refcount', object, `Evict of object ${object}, which is not resident`);
        continue;
      }
      this.refCount[object] = this.refCount[object]! - 1;
      if (this.refCount[object] === 0) this.addUsage(object, -1);
    }
    return true;
  }

  /**
   * A submitted list still in flight that references the object: one that ran but whose
   * following fence signal has not, or one not yet run and not behind a paging-fence wait still
   * unsatisfied (behind such a wait, paging for it is still to come).
   */
  private runnableListReferencing(object: number): string | null {
    for (let q = 0; q < this.queues.length; q++) {
      const queue = this.queues[q]!;
      for (const item of queue.unretired) {
        if (listsReference(item.lists!, object)) return `submission #${item.value} on queue ${q} (ran, fence signal not yet reached)`;
      }
      for (let i = queue.head; i < queue.items.length; i++) {
        const item = queue.items[i]!;
        if (item.kind === ItemKind.Wait && item.value > this.pagingCompleted) break;
        if (item.kind === ItemKind.Execute && listsReference(item.lists!, object)) return `submission #${item.value} on queue ${q} (runnable)`;
      }
    }
    return null;
  }

  /**
   * Residency before execution, checked the moment a list becomes runnable (no unsatisfied
   * paging wait ahead of it on its queue): every object it references must be resident then,
   * not only when the list happens to run.
   */
  private vetRunnable(): void {
    for (let q = 0; q < this.queues.length; q++) {
      const queue = this.queues[q]!;
      for (let i = queue.head; i < queue.items.length; i++) {
        const item = queue.items[i]!;
        if (item.kind === ItemKind.Wait && item.value > this.pagingCompleted) break;
        if (item.kind !== ItemKind.Execute || item.vetted) continue;
        item.vetted = true;
        if (item.lists !== null) this.checkResidency(q, item.value, item.lists, 'became runnable and references');
      }
    }
  }

  // ---- queues and fences ------------------------------------------------------------------

  /** Queue-side wait for the paging fence to reach `value`. */
  queueWaitPaging(queue: number, value: number): void {
    this.queue(queue).items.push({ kind: ItemKind.Wait, value, lists: null, vetted: false });
    if (this.checked) this.log(['gpuWait', queue, value]);
  }

  /** ID3D12CommandQueue::ExecuteCommandLists; each list is the objects it references. */
  executeCommandLists(queue: number, lists: readonly (readonly number[])[]): number {
    const submission = ++this.submissions;
    // The lists are kept (a reference, not a copy) in both modes: isReferencedByPendingWork reads them.
    this.queue(queue).items.push({ kind: ItemKind.Execute, value: submission, lists, vetted: false });
    if (this.checked) {
      this.log(['execute', queue, lists.length]);
      this.vetRunnable();
    }
    return submission;
  }

  /** ID3D12CommandQueue::Signal of the queue's fence. */
  queueSignal(queue: number, value: number): void {
    this.queue(queue).items.push({ kind: ItemKind.Signal, value, lists: null, vetted: false });
    if (this.checked) this.log(['signal', queue, value]);
  }

  fenceCompleted(queue: number): number {
    return this.queue(queue).completedValue;
  }

  get pagingFenceCompleted(): number {
    return this.pagingCompleted;
  }

  /** ID3D12Fence::Signal from the CPU (the async worker's paging fence). */
  cpuSignalPaging(value: number): void {
    if (value > this.pagingCompleted) this.pagingCompleted = value;
    if (this.checked) {
      this.log(['cpuSignalPaging', value]);
      this.vetRunnable();
    }
  }

  /** Items still to run on the queue (the system reports it). */
  pendingItems(queue: number): number {
    const q = this.queue(queue);
    return q.items.length - q.head;
  }

  /** Runs up to `steps` items of the queue in order; a wait blocks. Returns the items run. */
  progress(queue: number, steps: number): number {
    let ran = 0;
    while (ran < steps && this.stepQueue(queue)) ran++;
    return ran;
  }

  /** Runs up to `steps` queued make-resident operations of the paging queue. */
  pagingProgress(steps: number): number {
    let ran = 0;
    while (ran < steps && this.stepPaging()) ran++;
    return ran;
  }

  private stepPaging(): boolean {
    if (this.pagingHead >= this.pagingItems.length) return false;
    const item = this.pagingItems[this.pagingHead++]!;
    if (item.fenceValue > this.pagingCompleted) this.pagingCompleted = item.fenceValue;
    if (this.checked) this.vetRunnable();
    // Compacted once most of the list is processed (the same rule as the queues, with a lower floor: paging lists stay short).
    if (this.pagingHead > 16 && this.pagingHead * 2 > this.pagingItems.length) {
      this.pagingItems.splice(0, this.pagingHead);
      this.pagingHead = 0;
    }
    return true;
  }

  private stepQueue(index: number): boolean {
    const queue = this.queue(index);
    if (queue.head >= queue.items.length) return false;
    const item = queue.items[queue.head]!;
    switch (item.kind) {
      case ItemKind.Wait:
        if (item.value > this.pagingCompleted) return false;
        break;
      case ItemKind.Signal:
        queue.completedValue = item.value;
        queue.unretired.length = 0;
        break;
      case ItemKind.Execute:
        if (this.checked) this.checkResidency(index, item.value, item.lists!, 'touched');
        queue.unretired.push(item);
        break;
    }
    queue.head++;
    if (queue.head > 64 && queue.head * 2 > queue.items.length) {
      queue.items.splice(0, queue.head);
      queue.head = 0;
    }
    return true;
  }

  private checkResidency(queue: number, submission: number, lists: readonly (readonly number[])[], what: string): void {
    for (const list of lists) {
      for (const object of list) {
        if (this.refCount[object] === 0) {
          this.violate('touch-not-resident', object, `submission #${submission} on queue ${queue} ${what} object ${object}, which is not resident on the device`);
        } else if (this.readyAtPagingValue[object]! > this.pagingCompleted) {
          this.violate(
            'touch-before-paging',
            object,
            `submission #${submission} on queue ${queue} ${what} object ${object} before the paging fence reached ${this.readyAtPagingValue[object]} (it is at ${this.pagingCompleted})`,
          );
        }
        if (what === 'touched') this.note(object, `touched by submission #${submission} on queue ${queue}`);
      }
    }
  }

  /**
   * A CPU wait for the queue's fence to reach `value`: the GPU runs that queue (and the paging
   * queue when the queue waits on paging) until it does. Returns false on a deadlock.
   */
  cpuWait(queue: number, value: number): boolean {
    if (this.checked) this.log(['cpuWait', queue, value]);
    for (let step = 0; step < CPU_WAIT_STEP_LIMIT; step++) {
      if (this.queue(queue).completedValue >= value) return true;
      if (this.stepQueue(queue)) continue;
      if (this.stepPaging()) continue;
      break;
    }
    // The last item the bound allows may be the one that reached the value.
    if (this.queue(queue).completedValue >= value) return true;
    this.violate('deadlock', -1, `a CPU wait for fence value ${value} on queue ${queue} can never complete (the fence is at ${this.queue(queue).completedValue})`);
    return false;
  }

  // ---- logs -------------------------------------------------------------------------------

  /** The device calls and waits since the last drain. */
  drainCalls(): DeviceCallRecord[] {
    const calls = this.calls;
    this.calls = [];
    return calls;
  }

  objectHistory(object: number): string[] {
    return this.checked && object >= 0 ? [...this.history[object]!] : [];
  }

  private log(record: DeviceCallRecord): void {
    if (this.checked) this.calls.push(record);
  }

  private note(object: number, event: string): void {
    if (!this.checked) return;
    const entries = this.history[object]!;
    entries.push(`t=${this.clockTicks}: ${event}`);
    if (entries.length > HISTORY_LIMIT) entries.shift();
  }

  private violate(kind: ViolationKind, object: number, message: string): void {
    const history = object >= 0 ? `\n    history of object ${object}:\n      ${this.objectHistory(object).join('\n      ')}` : '';
    this.violations.push({ kind, object, message: message + history });
  }

  private queue(index: number): SimQueue {
    const queue = this.queues[index];
    if (queue === undefined) throw new RangeError(`gpu: no queue ${index}`);
    return queue;
  }

  private assertObject(object: number): void {
    if (!(Number.isInteger(object) && object >= 0 && object < this.objectCount)) throw new RangeError(`gpu: no object ${object}`);
  }
}

function listsReference(lists: readonly (readonly number[])[], object: number): boolean {
  for (const list of lists) if (list.includes(object)) return true;
  return false;
}

function slice(objects: ArrayLike<number>, start: number, count: number): number[] {
  const out: number[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = objects[start + i]!;
  return out;
}
