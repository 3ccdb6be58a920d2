/**
 * The simulated GPU's queues and fences (src/gpu/sim-gpu.ts): command queues whose items
 * (paging-fence waits, command lists, fence signals) run only when a command calls `progress`,
 * in order, a wait blocking its queue until the paging fence has reached the value; a D3D fence
 * per queue whose completed value starts at 0; the paging fence, signalled by the CPU (async
 * mode) or by the paging queue when it processes an EnqueueMakeResident (queued mode).
 *
 * What a list references is judged by the device that owns the queues (`QueueJudge`): when the
 * list becomes runnable (no unsatisfied paging wait ahead of it) and when it runs.
 */
import type { DeviceCallRecord, ViolationKind } from './sim-gpu-types.js';

/** Bound of the items one `cpuWait` may run before it declares a deadlock. */
const CPU_WAIT_STEP_LIMIT = 1_000_000;

const enum ItemKind {
  Wait = 0,
  Execute = 1,
  Signal = 2,
}

/** A paging-fence wait (value: the paging fence value) or a fence signal (value: the queue's). */
interface FenceItem {
  kind: ItemKind.Wait | ItemKind.Signal;
  value: number;
  lists: null;
  vetted: boolean;
}

/** A command list submission (value: the submission number); one shape with FenceItem. */
interface ExecuteItem {
  kind: ItemKind.Execute;
  value: number;
  /** The lists, each the objects it references. */
  lists: readonly (readonly number[])[];
  /** Checked when it became runnable (no unsatisfied paging wait ahead of it). */
  vetted: boolean;
}

type QueueItem = FenceItem | ExecuteItem;

interface SimQueue {
  completedValue: number;
  items: QueueItem[];
  head: number;
  /** Lists that ran but whose following fence signal has not run yet: still in flight. */
  unretired: ExecuteItem[];
}

/** What the owning device judges and records for its queues (checked mode only). */
export interface QueueJudge {
  /** A submission's lists became runnable ('became runnable and references') or ran ('touched'). */
  checkResidency(
    queue: number,
    submission: number,
    lists: readonly (readonly number[])[],
    what: string,
  ): void;
  log(record: DeviceCallRecord): void;
  violate(kind: ViolationKind, object: number, message: string): void;
}

export class SimQueues {
  private readonly queues: SimQueue[] = [];
  pagingCompleted = 0;
  /** Paging fence values queued make-residents signal, in order; `pagingHead` is the next to run. */
  private readonly pagingFences: number[] = [];
  private pagingHead = 0;
  private submissions = 0;

  constructor(
    queueCount: number,
    private readonly checked: boolean,
    private readonly judge: QueueJudge,
  ) {
    for (let q = 0; q < queueCount; q++)
      this.queues.push({ completedValue: 0, items: [], head: 0, unretired: [] });
  }

  /** True if any submitted list whose fence signal has not run references the object. */
  isReferencedByPendingWork(object: number): boolean {
    for (let q = 0; q < this.queues.length; q++) {
      const queue = this.queues[q]!;
      const unretired = queue.unretired;
      for (let i = 0; i < unretired.length; i++)
        if (listsReference(unretired[i]!.lists, object)) return true;
      for (let i = queue.head; i < queue.items.length; i++) {
        const item = queue.items[i]!;
        if (item.kind === ItemKind.Execute && listsReference(item.lists, object)) return true;
      }
    }
    return false;
  }

  /**
   * A submitted list still in flight that references the object: one that ran but whose
   * following fence signal has not, or one not yet run and not behind a paging-fence wait still
   * unsatisfied (behind such a wait, paging for it is still to come).
   */
  runnableListReferencing(object: number): string | null {
    for (let q = 0; q < this.queues.length; q++) {
      const queue = this.queues[q]!;
      for (let u = 0; u < queue.unretired.length; u++) {
        const item = queue.unretired[u]!;
        if (listsReference(item.lists, object))
          return `submission #${item.value} on queue ${q} (ran, fence signal not yet reached)`;
      }
      for (let i = queue.head; i < queue.items.length; i++) {
        const item = queue.items[i]!;
        if (item.kind === ItemKind.Wait && item.value > this.pagingCompleted) break;
        if (item.kind === ItemKind.Execute && listsReference(item.lists, object))
          return `submission #${item.value} on queue ${q} (runnable)`;
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
        this.judge.checkResidency(q, item.value, item.lists, 'became runnable and references');
      }
    }
  }

  /** Queue-side wait for the paging fence to reach `value`. */
  queueWaitPaging(queue: number, value: number): void {
    this.queue(queue).items.push({ kind: ItemKind.Wait, value, lists: null, vetted: false });
    if (this.checked) this.judge.log(['gpuWait', queue, value]);
  }

  /** ID3D12CommandQueue::ExecuteCommandLists; each list is the objects it references. */
  executeCommandLists(queue: number, lists: readonly (readonly number[])[]): number {
    const submission = ++this.submissions;
    // The lists are kept (a reference, not a copy) in both modes: isReferencedByPendingWork reads them.
    this.queue(queue).items.push({
      kind: ItemKind.Execute,
      value: submission,
      lists,
      vetted: false,
    });
    if (this.checked) {
      this.judge.log(['execute', queue, lists.length]);
      this.vetRunnable();
    }
    return submission;
  }

  /** ID3D12CommandQueue::Signal of the queue's fence. */
  queueSignal(queue: number, value: number): void {
    this.queue(queue).items.push({ kind: ItemKind.Signal, value, lists: null, vetted: false });
    if (this.checked) this.judge.log(['signal', queue, value]);
  }

  fenceCompleted(queue: number): number {
    return this.queue(queue).completedValue;
  }

  /** ID3D12Fence::Signal from the CPU (the async worker's paging fence). */
  cpuSignalPaging(value: number): void {
    if (value > this.pagingCompleted) this.pagingCompleted = value;
    if (this.checked) {
      this.judge.log(['cpuSignalPaging', value]);
      this.vetRunnable();
    }
  }

  /** A queued make-resident that signals the paging fence to `fenceValue` when the paging queue runs it. */
  enqueuePaging(fenceValue: number): void {
    this.pagingFences.push(fenceValue);
  }

  /** Items still to run on the queue. */
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
    if (this.pagingHead >= this.pagingFences.length) return false;
    const fenceValue = this.pagingFences[this.pagingHead++]!;
    if (fenceValue > this.pagingCompleted) this.pagingCompleted = fenceValue;
    if (this.checked) this.vetRunnable();
    // Compacted once most of the list is processed (the same rule as the queues, with a lower floor: paging lists stay short).
    if (this.pagingHead > 16 && this.pagingHead * 2 > this.pagingFences.length) {
      this.pagingFences.splice(0, this.pagingHead);
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
        if (this.checked) this.judge.checkResidency(index, item.value, item.lists, 'touched');
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

  /**
   * A CPU wait for the queue's fence to reach `value`: the GPU runs that queue (and the paging
   * queue when the queue waits on paging) until it does. Returns false on a deadlock.
   */
  cpuWait(queue: number, value: number): boolean {
    if (this.checked) this.judge.log(['cpuWait', queue, value]);
    for (let step = 0; step < CPU_WAIT_STEP_LIMIT; step++) {
      if (this.queue(queue).completedValue >= value) return true;
      if (this.stepQueue(queue)) continue;
      if (this.stepPaging()) continue;
      break;
    }
    // The last item the bound allows may be the one that reached the value.
    if (this.queue(queue).completedValue >= value) return true;
    this.judge.violate(
      'deadlock',
      -1,
      `a CPU wait for fence value ${value} on queue ${queue} can never complete (the fence is at ${this.queue(queue).completedValue})`,
    );
    return false;
  }

  /**
   * A CPU wait that may not be the last word (a native manager's thread, while other threads may
   * still unblock it): the GPU runs as `cpuWait` lets it, but a fence it cannot reach now is no
   * violation, only false. The wait is logged when it completes.
   */
  advanceTo(queue: number, value: number): boolean {
    for (let step = 0; step < CPU_WAIT_STEP_LIMIT; step++) {
      if (this.queue(queue).completedValue >= value) break;
      if (this.stepQueue(queue)) continue;
      if (this.stepPaging()) continue;
      break;
    }
    if (this.queue(queue).completedValue < value) return false;
    if (this.checked) this.judge.log(['cpuWait', queue, value]);
    return true;
  }

  private queue(index: number): SimQueue {
    const queue = this.queues[index];
    if (queue === undefined) throw new RangeError(`gpu: no queue ${index}`);
    return queue;
  }
}

function listsReference(lists: readonly (readonly number[])[], object: number): boolean {
  for (let i = 0; i < lists.length; i++) if (lists[i]!.includes(object)) return true;
  return false;
}
