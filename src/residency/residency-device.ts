/**
 * The device port of the residency manager: what it asks of a GPU, and nothing of any judge.
 * `SimGpu` (src/gpu/sim-gpu.ts) answers it in the harness; a native D3D12 kit answers it with
 * ID3D12Device3, its queues and fences. Like `ResidencyPort` under the engine frame, the port is
 * handed to the manager, so the manager an engine ships runs on whichever device it is given.
 */

/** Why a manager makes a make-resident call: a budgeted batch, or the over-budget fallback (docs/spec/residency-library.md#rl-8-5-3). */
export type MakeResidentReason = 'batch' | 'fallback';

export interface ResidencyDevice {
  /** QueryVideoMemoryInfo, local and non-local segments: budgets and current usage in bytes. */
  readonly localBudgetBytes: number;
  readonly nonLocalBudgetBytes: number;
  readonly localUsageBytes: number;
  readonly nonLocalUsageBytes: number;
  /** The QPC tick count (its frequency is the manager config's ticksPerSecond). */
  readonly ticks: number;

  /** The pageable object comes to life (created resident or not) when tracking begins. */
  createObject(object: number, resident: boolean): void;
  /** The pageable object is released when tracking ends; its residency goes with it. */
  destroyObject(object: number): void;
  /** True if a submitted list that has not retired references the object (EndTracking's guard). */
  isReferencedByPendingWork(object: number): boolean;

  /** ID3D12Device::MakeResident of `objects[start, start + count)`; false on failure. */
  makeResident(
    objects: ArrayLike<number>,
    start: number,
    count: number,
    reason: MakeResidentReason,
  ): boolean;
  /** ID3D12Device3::EnqueueMakeResident, signalling the paging fence to `fenceValue`; false on failure. */
  enqueueMakeResident(
    objects: ArrayLike<number>,
    start: number,
    count: number,
    fenceValue: number,
    reason: MakeResidentReason,
  ): boolean;
  /** ID3D12Device::Evict of `objects[start, start + count)`; false on failure. */
  evict(objects: ArrayLike<number>, start: number, count: number): boolean;

  /** The queue GPU-waits until the paging fence reaches `value`. */
  queueWaitPaging(queue: number, value: number): void;
  /** ID3D12CommandQueue::ExecuteCommandLists; each list is the objects it references. */
  executeCommandLists(queue: number, lists: readonly (readonly number[])[]): unknown;
  /** ID3D12CommandQueue::Signal of the queue's fence. */
  queueSignal(queue: number, value: number): void;
  /** GetCompletedValue of the queue's fence. */
  fenceCompleted(queue: number): number;
  /** The CPU blocks until the queue's fence reaches `value`. */
  cpuWait(queue: number, value: number): unknown;
  /** ID3D12Fence::Signal of the paging fence from the CPU (the async paging worker). */
  cpuSignalPaging(value: number): void;
}

/** Probe-style events of the manager's parts, recorded only in checked mode. */
export class ManagerEvents {
  private events: string[] | null;

  constructor(recording: boolean) {
    this.events = recording ? [] : null;
  }

  emit(event: string): void {
    if (this.events !== null) this.events.push(event);
  }

  drain(): string[] {
    if (this.events === null) return [];
    const events = this.events;
    this.events = [];
    return events;
  }
}
