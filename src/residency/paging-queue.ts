/**
 * The async paging work queue (docs/spec/residency-library.md#rl-6, docs/spec/residency-library.md#rl-7-6): a ring of MaxLatency + 1
 * slots, each with room for every object in one shared array (slot s at s * objectCount), so
 * the steady state allocates nothing per submission. `head` and `tail` count the works ever dequeued and enqueued; the head advances at
 * dequeue, before the work is processed, so MaxLatency works wait and one is processed.
 */

export class PagingWorkQueue {
  head = 0;
  tail = 0;
  private readonly ringSize: number;
  private readonly objectCount: number;
  /** The works' objects: slot s holds its count of them from s * objectCount. */
  readonly objects: Int32Array;
  private readonly counts: Int32Array;
  private readonly generations: Float64Array;
  private readonly fences: Float64Array;

  constructor(
    readonly maxLatency: number,
    objectCount: number,
  ) {
    if (!(maxLatency >= 1))
      throw new RangeError('maxLatency must be >= 1 (0 hangs the first submission)');
    this.ringSize = maxLatency + 1;
    this.objectCount = objectCount;
    this.objects = new Int32Array(this.ringSize * objectCount);
    this.counts = new Int32Array(this.ringSize);
    this.generations = new Float64Array(this.ringSize);
    this.fences = new Float64Array(this.ringSize);
  }

  /** Works queued and not yet dequeued. */
  queued(): number {
    return this.tail - this.head;
  }

  /** EnqueueAsyncWork blocks while this holds. */
  full(): boolean {
    return this.tail - this.head >= this.maxLatency;
  }

  /** Copies `master[0, count)` into the next slot with its generation and paging fence value. */
  enqueue(master: Int32Array, count: number, generation: number, fenceValue: number): void {
    const slot = this.tail % this.ringSize;
    const base = slot * this.objectCount;
    for (let i = 0; i < count; i++) this.objects[base + i] = master[i]!;
    this.counts[slot] = count;
    this.generations[slot] = generation;
    this.fences[slot] = fenceValue;
    this.tail++;
  }

  /** Dequeues the oldest work: its slot, or -1 when none is queued. */
  dequeue(): number {
    if (this.head === this.tail) return -1;
    const slot = this.head % this.ringSize;
    this.head++;
    return slot;
  }

  /** Where the slot's objects start in `objects`. */
  startOf(slot: number): number {
    return slot * this.objectCount;
  }
  countAt(slot: number): number {
    return this.counts[slot]!;
  }
  generationAt(slot: number): number {
    return this.generations[slot]!;
  }
  fenceAt(slot: number): number {
    return this.fences[slot]!;
  }

  /** True when a queued (not yet dequeued) work holds the object. */
  holds(object: number): boolean {
    for (let w = this.head; w < this.tail; w++) {
      const slot = w % this.ringSize;
      const base = slot * this.objectCount;
      for (let i = 0; i < this.counts[slot]!; i++)
        if (this.objects[base + i] === object) return true;
    }
    return false;
  }
}
