/**
 * The manager's sync points (docs/spec/residency-library.md#rl-5 to #rl-6): the current generation,
 * one fence per queue discovered lazily, and the in-flight list of sync points, each a generation
 * with the fence value every known queue had last signalled when it was made.
 *
 * The list is a ring (generation plus one recorded fence value per queue), grown by doubling
 * only when the GPU falls that far behind; dequeue and wait pop from its head. Generations and
 * fence values are numbers: each command consumes a bounded number of them, so they stay far
 * below 2^53.
 */
import type { ManagerEvents, ResidencyDevice } from './residency-device.js';

/** Sync points the ring holds before it first grows. */
export const INITIAL_SYNC_POINTS = 16;

export class SyncPointRing {
  /** CurrentSyncPointGeneration: the generation the next submission uses. */
  generation = 0;
  /** The value each known queue's fence signals next. */
  readonly fenceValue: Float64Array;
  /** Known queues in discovery order. */
  readonly knownQueues: Int32Array;
  private readonly queueKnown: Uint8Array;
  knownCount = 0;
  private capacity = INITIAL_SYNC_POINTS;
  private generations = new Float64Array(INITIAL_SYNC_POINTS);
  private values: Float64Array;
  private head = 0;
  /** Sync points in flight. */
  count = 0;
  private readonly view: number[] = [];
  /**
   * Bumped by every change of the in-flight list (`push`, `pop` and `grow` are its only writers),
   * so `inFlight` hands out the view it last filled when nothing changed since.
   */
  private ringVersion = 0;
  private viewVersion = -1;

  constructor(
    protected readonly device: ResidencyDevice,
    protected readonly queueCount: number,
    protected readonly events: ManagerEvents,
  ) {
    this.fenceValue = new Float64Array(queueCount);
    this.knownQueues = new Int32Array(queueCount);
    this.queueKnown = new Uint8Array(queueCount);
    this.values = new Float64Array(INITIAL_SYNC_POINTS * queueCount);
  }

  /** The first value a queue's fence is signalled with (its D3D fence completes at 0). */
  initialFenceValue(): number {
    return 1;
  }

  knowQueue(queue: number): void {
    if (this.queueKnown[queue] === 1) return;
    this.queueKnown[queue] = 1;
    this.knownQueues[this.knownCount++] = queue;
    this.fenceValue[queue] = this.initialFenceValue();
  }

  /** SignalFence: the queue signals its next value, a sync point is enqueued, a generation consumed. */
  signal(queue: number): number {
    const value = this.record(queue);
    this.generation++;
    return value;
  }

  /** The queue signals its next value and the current generation's sync point is enqueued. */
  record(queue: number): number {
    this.knowQueue(queue);
    const value = this.fenceValue[queue]!;
    this.device.queueSignal(queue, value);
    this.fenceValue[queue] = value + 1;
    this.push();
    return value;
  }

  private push(): void {
    if (this.count === this.capacity) this.grow();
    const slot = (this.head + this.count) % this.capacity;
    this.generations[slot] = this.generation;
    const base = slot * this.queueCount;
    for (let q = 0; q < this.queueCount; q++) this.values[base + q] = 0;
    for (let i = 0; i < this.knownCount; i++) {
      const q = this.knownQueues[i]!;
      this.values[base + q] = this.fenceValue[q]! - 1;
    }
    this.count++;
    this.ringVersion++;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const generations = new Float64Array(capacity);
    const values = new Float64Array(capacity * this.queueCount);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % this.capacity;
      generations[i] = this.generations[from]!;
      values.set(
        this.values.subarray(from * this.queueCount, (from + 1) * this.queueCount),
        i * this.queueCount,
      );
    }
    this.capacity = capacity;
    this.generations = generations;
    this.values = values;
    this.head = 0;
    this.ringVersion++;
  }

  private completeAt(slot: number): boolean {
    const base = slot * this.queueCount;
    for (let q = 0; q < this.queueCount; q++) {
      if (this.device.fenceCompleted(q) < this.values[base + q]!) return false;
    }
    return true;
  }

  private pop(): void {
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    this.ringVersion++;
  }

  /** DequeueCompletedSyncPoints: pops completed points; returns the first uncompleted generation, or -1. */
  dequeueCompleted(): number {
    while (this.count > 0 && this.completeAt(this.head)) this.pop();
    return this.count > 0 ? this.generations[this.head]! : -1;
  }

  /** The CPU blocks until the queue's fence reaches the value. */
  cpuWaitFence(queue: number, value: number): void {
    this.device.cpuWait(queue, value);
  }

  /** WaitForSyncPoint: pops the points up to the generation, blocking on its fences; past the end it returns. */
  waitFor(generation: number): void {
    while (this.count > 0) {
      const headGeneration = this.generations[this.head]!;
      if (headGeneration > generation) return;
      if (headGeneration === generation) {
        this.events.emit('wait-sync-point');
        const base = this.head * this.queueCount;
        for (let i = 0; i < this.knownCount; i++) {
          const q = this.knownQueues[i]!;
          const value = this.values[base + q]!;
          if (this.device.fenceCompleted(q) < value) this.cpuWaitFence(q, value);
        }
        this.pop();
        return;
      }
      this.pop();
    }
  }

  /** The first point not complete on the device (completed ones may not be dequeued yet), or -1. */
  firstUncompleted(): number {
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) % this.capacity;
      if (!this.completeAt(slot)) return this.generations[slot]!;
    }
    return -1;
  }

  /** Generations in flight, head first (a view reused between calls). */
  inFlight(): readonly number[] {
    const out = this.view;
    if (this.viewVersion === this.ringVersion) return out;
    for (let i = 0; i < this.count; i++)
      out[i] = this.generations[(this.head + i) % this.capacity]!;
    if (out.length !== this.count) out.length = this.count;
    this.viewVersion = this.ringVersion;
    return out;
  }
}
