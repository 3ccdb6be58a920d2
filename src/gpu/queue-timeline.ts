/**
 * A simulated GPU queue timeline: the judge of the ring-upload and deferred-free systems.
 *
 * One queue, one fence. The CPU side submits work that reads byte ranges and tags it with a
 * fence value; the fence's `completedValue` moves only when a command says the GPU made
 * progress (`advance`), and never past the last value the CPU signalled. Work whose value is
 * above `completedValue` is in flight: the GPU may still read its bytes. The invariants ask this
 * timeline, not the allocators' bookkeeping, which bytes are still in flight (DESIGN.md concept 5,
 * docs/spec/allocators.md#al-fence: "a byte range that a submitted, not yet completed
 * GPU workload references is never handed out again").
 *
 * Values: `nextValueToSignal` starts at 1 (FD3D12ManualFence's next fence), `completedValue` at 0.
 * `signal()` closes the current batch (end of frame): work submitted afterwards waits for the
 * next value. Everything stays far below 2^53.
 */

/** One piece of submitted GPU work: it reads [offsetBytes, offsetBytes + sizeBytes). */
export interface GpuRead {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  /** The fence value whose completion proves the read is done. */
  readonly fenceValue: number;
  /** Who handed the range to the CPU (a handout id), so a judge can tell owners apart. */
  readonly ownerId: number;
}

/** A bound on in-flight reads: a generated program never comes near it; a runaway loop does. */
export const MAX_IN_FLIGHT_READS = 1 << 20;

export class QueueTimeline {
  /** The value the next end of batch / end of frame will signal. */
  private nextValue = 1;
  /** The highest value the simulated GPU has completed. */
  private completed = 0;
  /** Reads in submission order; fence values are non-decreasing along it. */
  private reads: GpuRead[] = [];
  /** Index of the first read that may still be in flight (everything before it completed). */
  private firstInFlight = 0;

  get nextValueToSignal(): number {
    return this.nextValue;
  }

  get completedValue(): number {
    return this.completed;
  }

  /** The highest value that has been signalled (the GPU can complete up to it). */
  get lastSignalledValue(): number {
    return this.nextValue - 1;
  }

  /**
   * Records GPU work reading a range. A value at or below `completedValue` describes work the
   * GPU has already finished (only a buggy caller does that); it is recorded as completed.
   */
  submitRead(offsetBytes: number, sizeBytes: number, fenceValue: number, ownerId: number): void {
    if (fenceValue <= this.completed) return;
    if (this.reads.length - this.firstInFlight >= MAX_IN_FLIGHT_READS)
      throw new Error('queue timeline: too many in-flight reads');
    // Keep the list sorted by value (a buggy caller may submit a lower value than the last).
    let index = this.reads.length;
    while (index > this.firstInFlight && this.reads[index - 1]!.fenceValue > fenceValue) index--;
    this.reads.splice(index, 0, { offsetBytes, sizeBytes, fenceValue, ownerId });
  }

  /** End of batch / end of frame: the work submitted so far will signal `nextValueToSignal`. */
  signal(): number {
    return this.nextValue++;
  }

  /** The simulated GPU completes up to `steps` more signalled values. Returns the new value. */
  advance(steps: number): number {
    this.completed = Math.min(this.completed + Math.max(0, steps), this.nextValue - 1);
    while (
      this.firstInFlight < this.reads.length &&
      this.reads[this.firstInFlight]!.fenceValue <= this.completed
    ) {
      this.firstInFlight++;
    }
    // Compact now and then so the array does not grow with the run.
    if (this.firstInFlight > 64 && this.firstInFlight * 2 > this.reads.length) {
      this.reads = this.reads.slice(this.firstInFlight);
      this.firstInFlight = 0;
    }
    return this.completed;
  }

  /** True if the GPU may still read the value's work. */
  isInFlight(fenceValue: number): boolean {
    return fenceValue > this.completed;
  }

  /** Number of reads still in flight. */
  get inFlightCount(): number {
    return this.reads.length - this.firstInFlight;
  }

  /** The in-flight read at position `index` (0 = oldest). */
  inFlightAt(index: number): GpuRead {
    const read = this.reads[this.firstInFlight + index];
    if (read === undefined) throw new Error(`queue timeline: no in-flight read #${index}`);
    return read;
  }

  /** The first in-flight read (in fence order) that overlaps [offsetBytes, offsetBytes + sizeBytes), or null. */
  findInFlightOverlap(offsetBytes: number, sizeBytes: number): GpuRead | null {
    const endBytes = offsetBytes + sizeBytes;
    for (let index = this.firstInFlight; index < this.reads.length; index++) {
      const read = this.reads[index]!;
      if (read.offsetBytes < endBytes && offsetBytes < read.offsetBytes + read.sizeBytes)
        return read;
    }
    return null;
  }

  /**
   * The judge of a hand-out: nothing handed to the CPU may overlap bytes an unfinished GPU read
   * still uses. Call it right after `operation` handed out [offsetBytes, offsetBytes + sizeBytes);
   * a breach is appended to `violations` (the side's record, reported by its invariant).
   */
  judgeHandOut(
    operation: string,
    offsetBytes: number,
    sizeBytes: number,
    violations: string[],
  ): void {
    const read = this.findInFlightOverlap(offsetBytes, sizeBytes);
    if (read === null) return;
    violations.push(
      `${operation} handed out [${offsetBytes}, ${offsetBytes + sizeBytes}) while the GPU may still read ` +
        `[${read.offsetBytes}, ${read.offsetBytes + read.sizeBytes}) until fence value ${read.fenceValue} (completed ${this.completed})`,
    );
  }
}
