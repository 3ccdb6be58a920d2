/**
 * Misuse of the simulated GPU and the queue timeline (issue 14): the handles and counts their
 * contracts answer for. The simulated GPU refuses an object outside [0, objectCount) and a queue
 * it does not have with a RangeError naming it, and a clock step that is not a natural number (or
 * that would leave the safe-integer range); the queue timeline never completes past the last
 * signalled value, ignores negative progress, records work at or below the completed value as
 * done, and keeps reads in fence order whatever order they come in.
 */
import { describe, expect, it } from 'vitest';
import { SimGpu } from '../src/gpu/sim-gpu.js';
import { MAX_IN_FLIGHT_READS, QueueTimeline } from '../src/gpu/queue-timeline.js';

const makeGpu = () =>
  new SimGpu({
    objectSizesBytes: [4, 6, 8],
    queueCount: 2,
    ticksPerSecond: 1000,
    localBudgetBytes: 100,
    nonLocalBudgetBytes: 0,
  });

describe('simulated GPU: misuse', () => {
  it('the clock moves only by natural numbers and stays a safe integer', () => {
    const gpu = makeGpu();
    gpu.advanceClock(0);
    gpu.advanceClock(5);
    expect(gpu.ticks).toBe(5);
    for (const ticks of [-1, 0.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => gpu.advanceClock(ticks), `advanceClock(${ticks})`).toThrow(
        new RangeError(`clock advance must be a natural number, got ${ticks}`),
      );
      expect(gpu.ticks).toBe(5);
    }
    gpu.advanceClock(Number.MAX_SAFE_INTEGER - 6);
    expect(gpu.ticks).toBe(Number.MAX_SAFE_INTEGER - 1);
    gpu.advanceClock(1);
    expect(gpu.ticks).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => gpu.advanceClock(1)).toThrow(new RangeError('clock left the safe-integer range'));
  });

  it('objects outside [0, objectCount) are refused by every call that takes one', () => {
    const gpu = makeGpu();
    for (const object of [-1, 3, 4, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = new RangeError(`gpu: no object ${object}`);
      expect(() => gpu.createObject(object, true), `createObject(${object})`).toThrow(error);
      expect(() => gpu.destroyObject(object), `destroyObject(${object})`).toThrow(error);
      expect(() => gpu.makeResident([object], 0, 1, 'batch'), `makeResident([${object}])`).toThrow(
        error,
      );
      expect(
        () => gpu.enqueueMakeResident([object], 0, 1, 1, 'batch'),
        `enqueueMakeResident([${object}])`,
      ).toThrow(error);
      expect(() => gpu.evict([object], 0, 1), `evict([${object}])`).toThrow(error);
    }
    expect(gpu.localUsageBytes).toBe(0);
    gpu.createObject(2, true);
    expect(gpu.isResident(2)).toBe(true);
    expect(gpu.localUsageBytes).toBe(8);
  });

  it('queues it does not have are refused by every call that takes one', () => {
    const gpu = makeGpu();
    for (const queue of [-1, 2, 0.5, Number.NaN]) {
      const error = new RangeError(`gpu: no queue ${queue}`);
      expect(() => gpu.queueWaitPaging(queue, 1), `queueWaitPaging(${queue})`).toThrow(error);
      expect(() => gpu.executeCommandLists(queue, [[0]]), `executeCommandLists(${queue})`).toThrow(
        error,
      );
      expect(() => gpu.queueSignal(queue, 1), `queueSignal(${queue})`).toThrow(error);
      expect(() => gpu.fenceCompleted(queue), `fenceCompleted(${queue})`).toThrow(error);
      expect(() => gpu.pendingItems(queue), `pendingItems(${queue})`).toThrow(error);
      expect(() => gpu.progress(queue, 1), `progress(${queue})`).toThrow(error);
      expect(() => gpu.cpuWait(queue, 1), `cpuWait(${queue})`).toThrow(error);
    }
    expect([gpu.pendingItems(0), gpu.pendingItems(1)]).toEqual([0, 0]);
  });

  it('a second create of a resident object is refused; destroy drops its residency once', () => {
    const gpu = makeGpu();
    gpu.createObject(1, true);
    expect(() => gpu.createObject(1, false)).toThrow(
      'gpu: object 1 created while it still exists resident',
    );
    gpu.destroyObject(1);
    expect(gpu.isResident(1)).toBe(false);
    expect(gpu.localUsageBytes).toBe(0);
    gpu.destroyObject(1);
    expect(gpu.localUsageBytes).toBe(0);
    gpu.createObject(1, false);
    expect(gpu.residencyRefCount(1)).toBe(0);
  });
});

describe('queue timeline: progress, order and bounds', () => {
  it('never completes past the last signalled value; negative progress is none', () => {
    const timeline = new QueueTimeline();
    expect(timeline.advance(5)).toBe(0); // nothing signalled yet
    expect(timeline.signal()).toBe(1);
    expect(timeline.signal()).toBe(2);
    expect(timeline.lastSignalledValue).toBe(2);
    expect(timeline.advance(-3)).toBe(0);
    expect(timeline.advance(1)).toBe(1);
    expect(timeline.advance(10)).toBe(2);
    expect(timeline.completedValue).toBe(2);
    expect(timeline.nextValueToSignal).toBe(3);
  });

  it('work at or below the completed value is done at once; later work is in flight until its value completes', () => {
    const timeline = new QueueTimeline();
    timeline.signal();
    timeline.advance(1);
    timeline.submitRead(0, 16, 1, 7); // value 1 already completed
    timeline.submitRead(0, 16, 0, 7);
    expect(timeline.inFlightCount).toBe(0);
    expect(timeline.isInFlight(1)).toBe(false);
    expect(timeline.isInFlight(2)).toBe(true);
    timeline.submitRead(32, 16, 2, 8);
    expect(timeline.inFlightCount).toBe(1);
    timeline.signal();
    expect(timeline.advance(1)).toBe(2);
    expect(timeline.inFlightCount).toBe(0);
  });

  it('keeps reads in fence order when a caller submits a lower value after a higher one', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(0, 8, 3, 1);
    timeline.submitRead(8, 8, 2, 2);
    timeline.submitRead(16, 8, 3, 3);
    timeline.submitRead(24, 8, 1, 4);
    expect([0, 1, 2, 3].map((i) => timeline.inFlightAt(i).ownerId)).toEqual([4, 2, 1, 3]);
    timeline.signal();
    timeline.signal();
    timeline.advance(2);
    expect(timeline.inFlightCount).toBe(2);
    expect([0, 1].map((i) => timeline.inFlightAt(i).ownerId)).toEqual([1, 3]);
  });

  it('inFlightAt outside [0, inFlightCount) throws', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(0, 8, 1, 1);
    for (const index of [-1, 1, 2, 0.5])
      expect(() => timeline.inFlightAt(index), `inFlightAt(${index})`).toThrow(
        `queue timeline: no in-flight read #${index}`,
      );
    expect(timeline.inFlightAt(0).ownerId).toBe(1);
  });

  it('overlap: half-open ranges, the first in fence order, completed reads forgotten', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(100, 50, 1, 1); // [100, 150)
    timeline.submitRead(200, 10, 2, 2); // [200, 210)
    expect(timeline.findInFlightOverlap(150, 50)).toBeNull(); // [150, 200) touches neither
    expect(timeline.findInFlightOverlap(90, 10)).toBeNull();
    expect(timeline.findInFlightOverlap(149, 1)?.ownerId).toBe(1);
    expect(timeline.findInFlightOverlap(90, 11)?.ownerId).toBe(1);
    expect(timeline.findInFlightOverlap(120, 100)?.ownerId).toBe(1);
    expect(timeline.findInFlightOverlap(150, 100)?.ownerId).toBe(2);
    const violations: string[] = [];
    timeline.judgeHandOut('alloc', 140, 20, violations);
    expect(violations).toEqual([
      'alloc handed out [140, 160) while the GPU may still read [100, 150) until fence value 1 (completed 0)',
    ]);
    timeline.signal();
    timeline.advance(1);
    timeline.judgeHandOut('alloc', 140, 20, violations);
    expect(violations).toHaveLength(1);
    expect(timeline.findInFlightOverlap(205, 1)?.ownerId).toBe(2);
  });

  it('compacts completed reads without losing the ones in flight', () => {
    const timeline = new QueueTimeline();
    for (let value = 1; value <= 200; value++) timeline.submitRead(value * 8, 8, value, value);
    for (let value = 1; value <= 200; value++) timeline.signal();
    timeline.advance(150);
    expect(timeline.inFlightCount).toBe(50);
    expect(timeline.inFlightAt(0).ownerId).toBe(151);
    expect(timeline.inFlightAt(49).ownerId).toBe(200);
    timeline.submitRead(0, 8, 160, 999);
    expect(timeline.inFlightAt(10).ownerId).toBe(999);
    expect(timeline.inFlightAt(9).ownerId).toBe(160);
    timeline.advance(50);
    expect(timeline.inFlightCount).toBe(0);
  });

  it(`refuses more than MAX_IN_FLIGHT_READS (${MAX_IN_FLIGHT_READS}) reads in flight, counting only those not completed`, () => {
    const timeline = new QueueTimeline();
    for (let i = 0; i < 10; i++) timeline.submitRead(i, 1, 1, i);
    timeline.signal();
    timeline.advance(1); // those ten completed: they do not count
    for (let i = 0; i < MAX_IN_FLIGHT_READS; i++) timeline.submitRead(i, 1, 2, i);
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
    expect(() => timeline.submitRead(0, 1, 2, 0)).toThrow(
      'queue timeline: too many in-flight reads',
    );
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
    timeline.submitRead(0, 1, 1, 0); // work at the completed value is done: accepted even at the bound
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
  });
});
