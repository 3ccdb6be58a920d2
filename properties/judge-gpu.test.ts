/**
 * The judges provoked on purpose (issue 14). The simulated GPU judges the residency manager and
 * the queue timeline judges the ring-upload and deferred-free systems; the property suites trip
 * their violation paths only when an implementation is wrong, so these tests drive both judges
 * directly through their public API and provoke every violation kind and every argument guard:
 * the kind, the object or queue it names and its message (with the object history the simulated
 * GPU appends) are checked exactly, and the correct use right next to each one reports nothing.
 * Boundaries are held on both sides: a batch exactly at the budget is fine and one byte over is
 * not, a paging wait exactly at the fence value is satisfied, the history keeps exactly its
 * limit, the in-flight bound holds exactly MAX_IN_FLIGHT_READS reads.
 *
 * The non-local segment (docs/spec/residency-library.md#rl-13: usage derived from device residency;
 * an object lives in the local segment until the OS moves it) is checked through the usage and
 * budget queries of both segments.
 */
import { describe, expect, it } from 'vitest';
import {
  DEVICE_CALL_KINDS,
  SimGpu,
  type SimGpuConfig,
  type Violation,
} from '../src/gpu/sim-gpu.js';
import { MAX_IN_FLIGHT_READS, QueueTimeline, type GpuRead } from '../src/gpu/queue-timeline.js';

const SIZES = [10, 20, 40, 80];

function makeGpu(overrides: Partial<SimGpuConfig> = {}): SimGpu {
  return new SimGpu({
    objectSizesBytes: SIZES,
    queueCount: 2,
    ticksPerSecond: 1000,
    localBudgetBytes: 1000,
    nonLocalBudgetBytes: 500,
    ...overrides,
  });
}

/** The block the simulated GPU appends to a violation about an object: its history, oldest first. */
function historyBlock(object: number, lines: readonly string[]): string {
  return `\n    history of object ${object}:\n      ${lines.join('\n      ')}`;
}

/** Local and non-local usage, as the device reports them. */
function usage(gpu: SimGpu): [number, number] {
  expect(gpu.localMemory().usageBytes).toBe(gpu.localUsageBytes);
  expect(gpu.nonLocalMemory().usageBytes).toBe(gpu.nonLocalUsageBytes);
  return [gpu.localUsageBytes, gpu.nonLocalUsageBytes];
}

/** The violations reported since `from` (the list only grows). */
function since(gpu: SimGpu, from: number): Violation[] {
  return gpu.violations.slice(from);
}

describe('simulated GPU: state and queries', () => {
  it('starts empty: budgets as configured, no usage, fences at 0, no calls, checked by default', () => {
    const gpu = makeGpu();
    expect([gpu.objectCount, gpu.queueCount, gpu.ticksPerSecond, gpu.checked]).toEqual([
      4,
      2,
      1000,
      true,
    ]);
    expect(makeGpu({ checked: false }).checked).toBe(false);
    expect(makeGpu({ checked: true }).checked).toBe(true);
    expect(gpu.localMemory()).toEqual({ budgetBytes: 1000, usageBytes: 0 });
    expect(gpu.nonLocalMemory()).toEqual({ budgetBytes: 500, usageBytes: 0 });
    expect([gpu.localBudgetBytes, gpu.nonLocalBudgetBytes]).toEqual([1000, 500]);
    expect([gpu.ticks, gpu.pagingFenceCompleted]).toEqual([0, 0]);
    for (const queue of [0, 1])
      expect([gpu.fenceCompleted(queue), gpu.pendingItems(queue)]).toEqual([0, 0]);
    for (let object = 0; object < SIZES.length; object++) {
      expect([
        gpu.isResident(object),
        gpu.residencyRefCount(object),
        gpu.isNonLocal(object),
        gpu.isReferencedByPendingWork(object),
      ]).toEqual([false, 0, false, false]);
      expect(gpu.objectHistory(object)).toEqual([]);
    }
    expect(gpu.drainCalls()).toEqual([]);
    expect(gpu.violations).toEqual([]);
    expect(gpu.evictObserver).toBeNull();
    expect(DEVICE_CALL_KINDS).toEqual(['makeResident', 'enqueueMakeResident', 'evict']);
  });

  it('budgets change at any time, down to 0, and the queries report them beside the usage', () => {
    const gpu = makeGpu();
    gpu.createObject(1, true);
    gpu.setBudgets(7, 3);
    expect(gpu.localMemory()).toEqual({ budgetBytes: 7, usageBytes: 20 });
    expect(gpu.nonLocalMemory()).toEqual({ budgetBytes: 3, usageBytes: 0 });
    expect([gpu.localBudgetBytes, gpu.nonLocalBudgetBytes]).toEqual([7, 3]);
    gpu.setBudgets(0, 0);
    expect(gpu.localMemory()).toEqual({ budgetBytes: 0, usageBytes: 20 });
    expect(gpu.nonLocalMemory()).toEqual({ budgetBytes: 0, usageBytes: 0 });
  });

  it('the first and last object and queue are accepted; the guards refuse the rest, moveToSegment included', () => {
    const gpu = makeGpu();
    for (const object of [0, 3]) {
      gpu.createObject(object, false);
      expect(gpu.moveToSegment(object, true)).toBe(true);
      expect(gpu.makeResident([object], 0, 1, 'batch')).toBe(true);
      expect(gpu.evict([object], 0, 1)).toBe(true);
      expect(gpu.enqueueMakeResident([object], 0, 1, 1, 'batch')).toBe(true);
      gpu.destroyObject(object);
    }
    for (const object of [-1, 4, 0.5, Number.NaN]) {
      expect(() => gpu.moveToSegment(object, true), `moveToSegment(${object})`).toThrow(
        new RangeError(`gpu: no object ${object}`),
      );
    }
    // Only the objects in [start, start + count) are the call's: the others are not looked at.
    expect(gpu.makeResident([99, 1, -5], 1, 1, 'batch')).toBe(true);
    expect(gpu.evict([-5, 1, 99], 1, 1)).toBe(true);
    expect(gpu.enqueueMakeResident([99, 2], 1, 1, 2, 'batch')).toBe(true);
    expect(gpu.violations).toEqual([]);
    for (const queue of [0, 1]) {
      gpu.queueWaitPaging(queue, 0);
      gpu.executeCommandLists(queue, []);
      gpu.queueSignal(queue, 1);
      expect(gpu.pendingItems(queue)).toBe(3);
      expect(gpu.cpuWait(queue, 1)).toBe(true);
      expect(gpu.progress(queue, 1)).toBe(0);
      expect(gpu.fenceCompleted(queue)).toBe(1);
    }
    expect(() => gpu.queueSignal(2, 1)).toThrow(new RangeError('gpu: no queue 2'));
    expect(gpu.violations).toEqual([]);
  });

  it('the clock moves by natural numbers only, and a step that would leave the safe integers is refused without moving it', () => {
    const gpu = makeGpu();
    gpu.advanceClock(0);
    expect(gpu.ticks).toBe(0);
    for (const ticks of [-1, 0.5, Number.NaN, 2 ** 53]) {
      expect(() => gpu.advanceClock(ticks), `advanceClock(${ticks})`).toThrow(
        new RangeError(`clock advance must be a natural number, got ${ticks}`),
      );
    }
    expect(gpu.ticks).toBe(0);
    gpu.advanceClock(Number.MAX_SAFE_INTEGER - 1);
    gpu.advanceClock(1);
    expect(gpu.ticks).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => gpu.advanceClock(1)).toThrow(new RangeError('clock left the safe-integer range'));
    expect(gpu.ticks).toBe(Number.MAX_SAFE_INTEGER);
    gpu.createObject(0, true);
    expect(gpu.objectHistory(0)).toEqual([`t=${Number.MAX_SAFE_INTEGER}: created resident`]);
  });

  it('a created object exists resident or not; a second create of a resident one is refused, of an evicted one is not', () => {
    const gpu = makeGpu();
    gpu.createObject(0, false);
    gpu.createObject(0, false); // an evicted object holds nothing on the device
    expect(gpu.residencyRefCount(0)).toBe(0);
    gpu.createObject(0, true);
    expect(gpu.residencyRefCount(0)).toBe(1);
    expect(() => gpu.createObject(0, true)).toThrow(
      new Error('gpu: object 0 created while it still exists resident'),
    );
    expect(() => gpu.createObject(0, false)).toThrow(
      new Error('gpu: object 0 created while it still exists resident'),
    );
    expect(gpu.residencyRefCount(0)).toBe(1);
    expect(usage(gpu)).toEqual([10, 0]);
    expect(gpu.objectHistory(0)).toEqual([
      't=0: created evicted',
      't=0: created evicted',
      't=0: created resident',
    ]);
    // A resident create is ready at once, whatever paging an earlier life of the object waited for.
    gpu.evict([0], 0, 1);
    gpu.enqueueMakeResident([0], 0, 1, 9, 'batch');
    gpu.evict([0], 0, 1);
    gpu.createObject(0, true);
    gpu.executeCommandLists(0, [[0]]);
    gpu.progress(0, 1);
    expect(gpu.violations).toEqual([]);
  });
});

describe('simulated GPU: the two segments', () => {
  it("an object lives in the local segment until moved; a resident object's bytes follow it, a non-resident one's do not count", () => {
    const gpu = makeGpu();
    gpu.advanceClock(3);
    gpu.createObject(0, true);
    gpu.createObject(1, false);
    expect(usage(gpu)).toEqual([10, 0]);
    expect(gpu.moveToSegment(1, true)).toBe(true);
    expect(gpu.isNonLocal(1)).toBe(true);
    expect(gpu.isNonLocal(0)).toBe(false);
    expect(usage(gpu)).toEqual([10, 0]);
    expect(gpu.moveToSegment(1, true)).toBe(false); // already there: nothing happens, nothing noted
    gpu.advanceClock(2);
    expect(gpu.makeResident([1], 0, 1, 'batch')).toBe(true);
    expect(gpu.localMemory()).toEqual({ budgetBytes: 1000, usageBytes: 10 });
    expect(gpu.nonLocalMemory()).toEqual({ budgetBytes: 500, usageBytes: 20 });
    expect(gpu.moveToSegment(0, true)).toBe(true);
    expect(usage(gpu)).toEqual([0, 30]);
    expect(gpu.moveToSegment(0, false)).toBe(true);
    expect(gpu.isNonLocal(0)).toBe(false);
    expect(usage(gpu)).toEqual([10, 20]);
    expect(gpu.moveToSegment(0, false)).toBe(false);
    gpu.evict([1], 0, 1);
    expect(usage(gpu)).toEqual([10, 0]);
    expect(gpu.isNonLocal(1)).toBe(true); // eviction does not move it back
    gpu.destroyObject(0);
    expect(usage(gpu)).toEqual([0, 0]);
    gpu.createObject(1, true); // created resident in the segment it lives in
    expect(usage(gpu)).toEqual([0, 20]);
    gpu.enqueueMakeResident([2], 0, 1, 1, 'batch');
    expect(usage(gpu)).toEqual([40, 20]);
    expect(gpu.objectHistory(0)).toEqual([
      't=3: created resident',
      't=5: moved to the non-local segment',
      't=5: moved to the local segment',
      't=5: destroyed',
    ]);
    expect(gpu.objectHistory(1)).toEqual([
      't=3: created evicted',
      't=3: moved to the non-local segment',
      't=5: made resident (batch)',
      't=5: evicted',
      't=5: created resident',
    ]);
    expect(gpu.violations).toEqual([]);
  });

  it('a reference count above one counts the bytes once, in the segment the object lives in', () => {
    const gpu = makeGpu();
    gpu.createObject(2, true);
    gpu.makeResident([2], 0, 1, 'fallback');
    expect(gpu.residencyRefCount(2)).toBe(2);
    expect(usage(gpu)).toEqual([40, 0]);
    expect(gpu.moveToSegment(2, true)).toBe(true);
    expect(usage(gpu)).toEqual([0, 40]);
    gpu.evict([2], 0, 1);
    expect([gpu.residencyRefCount(2), gpu.isResident(2)]).toEqual([1, true]);
    expect(usage(gpu)).toEqual([0, 40]);
    expect(gpu.moveToSegment(2, false)).toBe(true);
    expect(usage(gpu)).toEqual([40, 0]);
    gpu.enqueueMakeResident([2], 0, 1, 1, 'fallback');
    expect(gpu.residencyRefCount(2)).toBe(2);
    gpu.destroyObject(2); // its residency goes with it, all of it, once
    expect([gpu.residencyRefCount(2), gpu.isResident(2)]).toEqual([0, false]);
    expect(usage(gpu)).toEqual([0, 0]);
    gpu.destroyObject(2);
    expect(usage(gpu)).toEqual([0, 0]);
    gpu.createObject(2, false);
    expect(gpu.residencyRefCount(2)).toBe(0);
    expect(gpu.violations.map((v) => [v.kind, v.object])).toEqual([
      ['refcount', 2],
      ['refcount', 2],
    ]);
  });
});

describe('simulated GPU: over-budget', () => {
  const config = {
    objectSizesBytes: [10, 20, 30, 1, 5],
    localBudgetBytes: 40,
    nonLocalBudgetBytes: 20,
  };

  it('a budgeted batch exactly at local + non-local budget is fine; one byte over names the batch, the usage split and the budget', () => {
    const gpu = makeGpu(config);
    gpu.moveToSegment(1, true);
    expect(gpu.makeResident([0, 1, 2], 0, 3, 'batch')).toBe(true);
    expect(usage(gpu)).toEqual([40, 20]); // 60 = 40 + 20
    expect(gpu.violations).toEqual([]);
    gpu.advanceClock(7);
    expect(gpu.makeResident([4, 3, 4], 1, 1, 'batch')).toBe(true); // object 3 alone: 61
    expect(gpu.isResident(4)).toBe(false);
    expect(gpu.violations).toEqual([
      {
        kind: 'over-budget',
        object: 3,
        message:
          'a budgeted make-resident batch of 1 object(s) took the usage to 61 bytes (local 41 + non-local 20) over the budget of 60' +
          historyBlock(3, ['t=7: made resident (batch)']),
      },
    ]);
  });

  it('the documented fallback and an empty batch are not judged against the budget', () => {
    const gpu = makeGpu(config);
    gpu.makeResident([0, 1, 2, 3], 0, 4, 'fallback'); // 61 > 60
    expect(usage(gpu)).toEqual([61, 0]);
    gpu.enqueueMakeResident([4], 0, 1, 1, 'fallback');
    expect(usage(gpu)).toEqual([66, 0]);
    gpu.makeResident([4], 0, 0, 'batch');
    gpu.enqueueMakeResident([4], 0, 0, 2, 'batch');
    expect(gpu.violations).toEqual([]);
    // Over the budget already, a real batch is judged (the usage it leaves is above the budget).
    gpu.evict([3], 0, 1);
    gpu.makeResident([3], 0, 1, 'batch');
    expect(since(gpu, 0).map((v) => [v.kind, v.object])).toEqual([['over-budget', 3]]);
  });

  it('a queued batch is judged the same way, at the moment it is enqueued', () => {
    const gpu = makeGpu(config);
    gpu.moveToSegment(2, true);
    gpu.makeResident([0, 1, 2], 0, 3, 'batch'); // 30 local + 30 non-local
    gpu.setBudgets(45, 20); // 65
    gpu.advanceClock(1);
    gpu.enqueueMakeResident([3, 4], 0, 2, 1, 'batch'); // 66
    expect(gpu.violations).toEqual([
      {
        kind: 'over-budget',
        object: 3,
        message:
          'a budgeted make-resident batch of 2 object(s) took the usage to 66 bytes (local 36 + non-local 30) over the budget of 65' +
          historyBlock(3, ['t=1: enqueued resident at paging 1 (batch)']),
      },
    ]);
    gpu.evict([3, 4], 0, 2);
    gpu.setBudgets(46, 20); // 66: exactly at it
    gpu.enqueueMakeResident([3, 4], 0, 2, 2, 'batch');
    expect(gpu.violations).toHaveLength(1);
  });

  it('an unchecked GPU judges no budget', () => {
    const gpu = makeGpu({ ...config, localBudgetBytes: 0, nonLocalBudgetBytes: 0, checked: false });
    gpu.makeResident([0, 1], 0, 2, 'batch');
    gpu.enqueueMakeResident([2], 0, 1, 1, 'batch');
    expect(usage(gpu)).toEqual([60, 0]);
    expect(gpu.violations).toEqual([]);
  });
});

describe('simulated GPU: refcount', () => {
  it('a MakeResident of a resident object is a second device call for one flip; the first flip is fine', () => {
    const gpu = makeGpu();
    gpu.advanceClock(4);
    gpu.createObject(0, true);
    gpu.createObject(1, false);
    gpu.makeResident([1], 0, 1, 'batch');
    expect(gpu.violations).toEqual([]);
    gpu.advanceClock(1);
    gpu.makeResident([0], 0, 1, 'fallback');
    // The history is the one before this call: the call is noted after the violation.
    expect(gpu.violations).toEqual([
      {
        kind: 'refcount',
        object: 0,
        message:
          'MakeResident of object 0, already resident (refcount 1): two device calls for one status flip' +
          historyBlock(0, ['t=4: created resident']),
      },
    ]);
    expect(gpu.residencyRefCount(0)).toBe(2);
    expect(gpu.objectHistory(0)).toEqual([
      't=4: created resident',
      't=5: made resident (fallback)',
    ]);
    gpu.enqueueMakeResident([0], 0, 1, 3, 'batch');
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'refcount',
        object: 0,
        message:
          'MakeResident of object 0, already resident (refcount 2): two device calls for one status flip' +
          historyBlock(0, ['t=4: created resident', 't=5: made resident (fallback)']),
      },
    ]);
    expect(gpu.residencyRefCount(0)).toBe(3);
    expect(usage(gpu)).toEqual([30, 0]);
  });

  it('an Evict of an object that is not resident changes nothing; an Evict of a resident one is fine', () => {
    const gpu = makeGpu();
    gpu.createObject(1, true);
    gpu.advanceClock(2);
    expect(gpu.evict([2], 0, 1)).toBe(true);
    // Noted before it is judged: the history ends with the evict itself.
    expect(gpu.violations).toEqual([
      {
        kind: 'refcount',
        object: 2,
        message: 'Evict of object 2, which is not resident' + historyBlock(2, ['t=2: evicted']),
      },
    ]);
    expect(gpu.residencyRefCount(2)).toBe(0);
    expect(usage(gpu)).toEqual([20, 0]);
    gpu.evict([1], 0, 1);
    expect(gpu.violations).toHaveLength(1);
    expect([gpu.residencyRefCount(1), gpu.isResident(1)]).toEqual([0, false]);
    expect(usage(gpu)).toEqual([0, 0]);
    gpu.evict([1], 0, 1);
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'refcount',
        object: 1,
        message:
          'Evict of object 1, which is not resident' +
          historyBlock(1, ['t=0: created resident', 't=2: evicted', 't=2: evicted']),
      },
    ]);
    expect(gpu.residencyRefCount(1)).toBe(0);
    expect(usage(gpu)).toEqual([0, 0]);
    // In one call, the objects are judged one by one.
    gpu.createObject(3, true);
    gpu.evict([3, 0, 3], 0, 3);
    expect(since(gpu, 2).map((v) => [v.kind, v.object, v.message.split('\n')[0]])).toEqual([
      ['refcount', 0, 'Evict of object 0, which is not resident'],
      ['refcount', 3, 'Evict of object 3, which is not resident'],
    ]);
    expect(usage(gpu)).toEqual([0, 0]);
  });
});

describe('simulated GPU: touches', () => {
  it('a list that references an evicted object is judged when it becomes runnable and again when it runs', () => {
    const gpu = makeGpu();
    gpu.createObject(0, true);
    gpu.createObject(1, false);
    gpu.advanceClock(2);
    expect(gpu.executeCommandLists(1, [[0], [1]])).toBe(1);
    expect(gpu.violations).toEqual([
      {
        kind: 'touch-not-resident',
        object: 1,
        message:
          'submission #1 on queue 1 became runnable and references object 1, which is not resident on the device' +
          historyBlock(1, ['t=0: created evicted']),
      },
    ]);
    expect(gpu.executeCommandLists(1, [[0]])).toBe(2); // #1 is vetted once, not again
    expect(gpu.violations).toHaveLength(1);
    gpu.advanceClock(1);
    expect(gpu.progress(1, 1)).toBe(1);
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'touch-not-resident',
        object: 1,
        message:
          'submission #1 on queue 1 touched object 1, which is not resident on the device' +
          historyBlock(1, ['t=0: created evicted']),
      },
    ]);
    expect(gpu.objectHistory(1)).toEqual([
      't=0: created evicted',
      't=3: touched by submission #1 on queue 1',
    ]);
    expect(gpu.progress(1, 1)).toBe(1);
    expect(gpu.violations).toHaveLength(2);
    expect(gpu.objectHistory(0)).toEqual([
      't=0: created resident',
      't=3: touched by submission #1 on queue 1',
      't=3: touched by submission #2 on queue 1',
    ]);
  });

  it('residency is judged the moment a list becomes runnable, not only when it runs', () => {
    const gpu = makeGpu();
    gpu.createObject(2, false);
    expect(gpu.executeCommandLists(0, [[2]])).toBe(1);
    expect(gpu.violations.map((v) => [v.kind, v.object])).toEqual([['touch-not-resident', 2]]);
    gpu.makeResident([2], 0, 1, 'batch'); // too late for the runnable list, in time for the touch
    gpu.progress(0, 1);
    expect(gpu.violations).toHaveLength(1);
  });

  it('a list behind an unsatisfied paging wait is judged when the wait is satisfied, exactly at its value', () => {
    const gpu = makeGpu();
    gpu.createObject(3, false);
    gpu.queueWaitPaging(0, 2);
    gpu.executeCommandLists(0, [[3]]);
    gpu.queueSignal(0, 1);
    expect(gpu.executeCommandLists(0, [[3]])).toBe(2); // past the signal, still behind the wait
    gpu.cpuSignalPaging(1);
    expect(gpu.violations).toEqual([]);
    expect(gpu.progress(0, 4)).toBe(0); // the wait blocks
    gpu.cpuSignalPaging(2);
    expect(gpu.violations.map((v) => v.message.split('\n')[0])).toEqual([
      'submission #1 on queue 0 became runnable and references object 3, which is not resident on the device',
      'submission #2 on queue 0 became runnable and references object 3, which is not resident on the device',
    ]);
    expect(gpu.progress(0, 4)).toBe(4);
    expect(gpu.fenceCompleted(0)).toBe(1);
  });

  it('touching an object before its queued make-resident reached the paging fence; exactly at it is fine', () => {
    const gpu = makeGpu();
    gpu.createObject(2, false);
    gpu.advanceClock(6);
    gpu.enqueueMakeResident([2], 0, 1, 3, 'batch');
    expect(gpu.isResident(2)).toBe(true);
    gpu.executeCommandLists(0, [[2]]); // no paging wait: runnable at once
    const history = ['t=0: created evicted', 't=6: enqueued resident at paging 3 (batch)'];
    expect(gpu.violations).toEqual([
      {
        kind: 'touch-before-paging',
        object: 2,
        message:
          'submission #1 on queue 0 became runnable and references object 2 before the paging fence reached 3 (it is at 0)' +
          historyBlock(2, history),
      },
    ]);
    gpu.cpuSignalPaging(2);
    gpu.progress(0, 1);
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'touch-before-paging',
        object: 2,
        message:
          'submission #1 on queue 0 touched object 2 before the paging fence reached 3 (it is at 2)' +
          historyBlock(2, history),
      },
    ]);
    gpu.cpuSignalPaging(3);
    gpu.executeCommandLists(0, [[2]]);
    gpu.progress(0, 1);
    expect(gpu.violations).toHaveLength(2);
  });

  it('the paging queue reaching a wait makes the lists behind it runnable: judged then, by pagingProgress and by a CPU wait', () => {
    const gpu = makeGpu();
    gpu.createObject(1, false);
    gpu.enqueueMakeResident([], 0, 0, 1, 'batch');
    gpu.enqueueMakeResident([], 0, 0, 2, 'batch');
    gpu.queueWaitPaging(0, 1);
    gpu.executeCommandLists(0, [[1]]);
    gpu.queueWaitPaging(1, 2);
    gpu.executeCommandLists(1, [[1]]);
    gpu.queueSignal(1, 1);
    expect(gpu.violations).toEqual([]);
    expect(gpu.pagingProgress(1)).toBe(1);
    expect(gpu.violations.map((v) => v.message.split('\n')[0])).toEqual([
      'submission #1 on queue 0 became runnable and references object 1, which is not resident on the device',
    ]);
    expect(gpu.cpuWait(1, 1)).toBe(true); // runs the paging queue to 2: #2 becomes runnable, then runs
    expect(since(gpu, 1).map((v) => v.message.split('\n')[0])).toEqual([
      'submission #2 on queue 1 became runnable and references object 1, which is not resident on the device',
      'submission #2 on queue 1 touched object 1, which is not resident on the device',
    ]);
  });

  it('the correct queued use: the queue waits for the paging fence the make-resident signals', () => {
    const gpu = makeGpu();
    gpu.createObject(2, false);
    gpu.enqueueMakeResident([2], 0, 1, 3, 'batch');
    gpu.queueWaitPaging(1, 3);
    gpu.executeCommandLists(1, [[2]]);
    gpu.queueSignal(1, 1);
    gpu.cpuSignalPaging(2);
    expect(gpu.progress(1, 5)).toBe(0);
    expect(gpu.pendingItems(1)).toBe(3);
    expect(gpu.pagingProgress(5)).toBe(1); // the paging queue signals 3
    expect(gpu.pagingFenceCompleted).toBe(3);
    expect(gpu.progress(1, 5)).toBe(3);
    expect(gpu.fenceCompleted(1)).toBe(1);
    expect(gpu.violations).toEqual([]);
    expect(gpu.objectHistory(2)).toEqual([
      't=0: created evicted',
      't=0: enqueued resident at paging 3 (batch)',
      't=0: touched by submission #1 on queue 1',
    ]);
  });
});

describe('simulated GPU: evict-in-flight', () => {
  it('an Evict of an object a runnable list or a list that ran but is not fenced references; none once the fence signal ran', () => {
    const gpu = makeGpu();
    for (const object of [0, 1, 2, 3]) gpu.createObject(object, true);
    gpu.executeCommandLists(0, [[1], [0]]);
    gpu.evict([3], 0, 1); // referenced by nothing
    expect(gpu.violations).toEqual([]);
    gpu.evict([0], 0, 1);
    expect(gpu.violations).toEqual([
      {
        kind: 'evict-in-flight',
        object: 0,
        message:
          'Evict of object 0 while submission #1 on queue 0 (runnable) references it' +
          historyBlock(0, ['t=0: created resident']),
      },
    ]);
    expect(gpu.isResident(0)).toBe(false); // the device still applies it
    gpu.makeResident([0], 0, 1, 'batch');
    gpu.progress(0, 1);
    expect(gpu.isReferencedByPendingWork(0)).toBe(true);
    gpu.evict([2], 0, 1); // the list that ran does not reference it
    expect(gpu.violations).toHaveLength(1);
    gpu.evict([0], 0, 1);
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'evict-in-flight',
        object: 0,
        message:
          'Evict of object 0 while submission #1 on queue 0 (ran, fence signal not yet reached) references it' +
          historyBlock(0, [
            't=0: created resident',
            't=0: evicted',
            't=0: made resident (batch)',
            't=0: touched by submission #1 on queue 0',
          ]),
      },
    ]);
    gpu.makeResident([0], 0, 1, 'batch');
    gpu.queueSignal(0, 1);
    gpu.progress(0, 1);
    expect(gpu.isReferencedByPendingWork(0)).toBe(false);
    gpu.evict([0, 1], 0, 2);
    expect(gpu.violations).toHaveLength(2);
  });

  it('a list behind an unsatisfied paging wait is not in flight yet; it is from the moment the fence reaches the value', () => {
    const gpu = makeGpu();
    gpu.createObject(1, true);
    gpu.createObject(3, true);
    gpu.queueWaitPaging(1, 2);
    expect(gpu.executeCommandLists(1, [[3]])).toBe(1);
    expect(gpu.isReferencedByPendingWork(3)).toBe(true);
    gpu.cpuSignalPaging(1);
    gpu.evict([3], 0, 1); // paging for that list is still to come
    expect(gpu.violations).toEqual([]);
    gpu.makeResident([3], 0, 1, 'batch');
    gpu.cpuSignalPaging(2);
    gpu.evict([3], 0, 1);
    expect(gpu.violations.map((v) => [v.kind, v.object, v.message.split('\n')[0]])).toEqual([
      [
        'evict-in-flight',
        3,
        'Evict of object 3 while submission #1 on queue 1 (runnable) references it',
      ],
    ]);
    // Past a fence signal on the queue, later lists are runnable too.
    gpu.queueSignal(0, 1);
    expect(gpu.executeCommandLists(0, [[1]])).toBe(2);
    gpu.evict([1], 0, 1);
    expect(since(gpu, 1).map((v) => [v.kind, v.object, v.message.split('\n')[0]])).toEqual([
      [
        'evict-in-flight',
        1,
        'Evict of object 1 while submission #2 on queue 0 (runnable) references it',
      ],
    ]);
  });

  it('the evict observer sees the objects of the call before the device applies it, and only a call that goes through', () => {
    const gpu = makeGpu();
    for (const object of [0, 1, 3]) gpu.createObject(object, true);
    const seen: [number[], number[]][] = [];
    gpu.evictObserver = (objects) =>
      seen.push([[...objects], objects.map((object) => gpu.residencyRefCount(object))]);
    gpu.failNext('evict');
    expect(gpu.evict([3, 0, 1, 3], 1, 2)).toBe(false);
    expect(seen).toEqual([]);
    expect(gpu.evict([3, 0, 1, 3], 1, 2)).toBe(true);
    expect(seen).toEqual([
      [
        [0, 1],
        [1, 1],
      ],
    ]);
    expect([0, 1, 3].map((object) => gpu.residencyRefCount(object))).toEqual([0, 0, 1]);
    gpu.evictObserver = null;
    gpu.evict([3], 0, 1);
    expect(seen).toHaveLength(1);
    expect(gpu.violations).toEqual([]);
  });

  it('pending work: lists queued, behind a wait or ran and not fenced reference their objects; a fenced one does not', () => {
    const gpu = makeGpu();
    gpu.createObject(0, true);
    gpu.createObject(2, true);
    gpu.queueWaitPaging(1, 1);
    gpu.executeCommandLists(1, [[0], [2]]);
    gpu.queueSignal(1, 1);
    expect([0, 1, 2, 3].map((object) => gpu.isReferencedByPendingWork(object))).toEqual([
      true,
      false,
      true,
      false,
    ]);
    gpu.cpuSignalPaging(1);
    expect(gpu.progress(1, 2)).toBe(2);
    expect(gpu.pendingItems(1)).toBe(1);
    expect([0, 1, 2, 3].map((object) => gpu.isReferencedByPendingWork(object))).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(gpu.progress(1, 1)).toBe(1);
    expect([0, 1, 2, 3].map((object) => gpu.isReferencedByPendingWork(object))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(gpu.violations).toEqual([]);
  });
});

describe('simulated GPU: CPU waits and deadlock', () => {
  it('a wait nothing can satisfy is a deadlock naming the queue, the value and the fence, with no object history', () => {
    const gpu = makeGpu();
    expect(gpu.cpuWait(0, 1)).toBe(false);
    expect(gpu.violations).toEqual([
      {
        kind: 'deadlock',
        object: -1,
        message: 'a CPU wait for fence value 1 on queue 0 can never complete (the fence is at 0)',
      },
    ]);
    gpu.queueSignal(1, 1);
    gpu.queueWaitPaging(1, 5);
    gpu.queueSignal(1, 2);
    expect(gpu.cpuWait(1, 2)).toBe(false); // the signal of 1 runs, the paging wait never ends
    expect(since(gpu, 1)).toEqual([
      {
        kind: 'deadlock',
        object: -1,
        message: 'a CPU wait for fence value 2 on queue 1 can never complete (the fence is at 1)',
      },
    ]);
    expect(gpu.pendingItems(1)).toBe(2);
    // The paging queue signals 5: the same wait completes.
    gpu.enqueueMakeResident([], 0, 0, 5, 'batch');
    expect(gpu.cpuWait(1, 2)).toBe(true);
    expect([gpu.pagingFenceCompleted, gpu.fenceCompleted(1), gpu.pendingItems(1)]).toEqual([
      5, 2, 0,
    ]);
    expect(gpu.violations).toHaveLength(2);
  });

  it('a wait runs its queue only as far as the value, never another queue; a value already reached runs nothing', () => {
    const gpu = makeGpu();
    gpu.queueSignal(0, 1);
    gpu.queueSignal(1, 1);
    gpu.queueSignal(1, 2);
    gpu.queueSignal(1, 3);
    expect(gpu.cpuWait(1, 2)).toBe(true);
    expect([gpu.fenceCompleted(1), gpu.pendingItems(1)]).toEqual([2, 1]);
    expect([gpu.fenceCompleted(0), gpu.pendingItems(0)]).toEqual([0, 1]);
    expect(gpu.cpuWait(1, 2)).toBe(true);
    expect(gpu.cpuWait(1, 0)).toBe(true);
    expect(gpu.pendingItems(1)).toBe(1);
    expect(gpu.cpuWait(1, 3)).toBe(true);
    expect(gpu.pendingItems(1)).toBe(0);
    expect(gpu.violations).toEqual([]);
  });

  it('a wait runs at most 1_000_000 items (CPU_WAIT_STEP_LIMIT): one its last item satisfies completes, one that needs one more is a deadlock', () => {
    const limit = 1_000_000;
    const gpu = makeGpu({ checked: false });
    for (let value = 1; value <= limit + 1; value++) {
      gpu.queueSignal(0, value);
      gpu.queueSignal(1, value);
    }
    expect(gpu.cpuWait(0, limit)).toBe(true);
    expect([gpu.fenceCompleted(0), gpu.pendingItems(0)]).toEqual([limit, 1]);
    expect(gpu.cpuWait(1, limit + 1)).toBe(false);
    expect([gpu.fenceCompleted(1), gpu.pendingItems(1)]).toEqual([limit, 1]);
    expect(gpu.violations).toEqual([
      {
        kind: 'deadlock',
        object: -1,
        message: `a CPU wait for fence value ${limit + 1} on queue 1 can never complete (the fence is at ${limit})`,
      },
    ]);
  });

  it('a wait blocked on paging runs the paging queue only as far as needed', () => {
    const gpu = makeGpu();
    gpu.enqueueMakeResident([], 0, 0, 1, 'batch');
    gpu.enqueueMakeResident([], 0, 0, 2, 'batch');
    gpu.enqueueMakeResident([], 0, 0, 3, 'batch');
    gpu.queueWaitPaging(0, 2);
    gpu.queueSignal(0, 1);
    expect(gpu.cpuWait(0, 1)).toBe(true);
    expect(gpu.pagingFenceCompleted).toBe(2);
    expect(gpu.pagingProgress(5)).toBe(1);
    expect(gpu.pagingFenceCompleted).toBe(3);
  });
});

describe('simulated GPU: queues, paging and progress', () => {
  it('progress runs at most the steps asked, in order; a signal sets the fence', () => {
    const gpu = makeGpu();
    for (const value of [1, 2, 3]) gpu.queueSignal(0, value);
    expect(gpu.pendingItems(0)).toBe(3);
    expect(gpu.progress(0, 0)).toBe(0);
    expect(gpu.progress(0, 2)).toBe(2);
    expect([gpu.fenceCompleted(0), gpu.pendingItems(0)]).toEqual([2, 1]);
    expect(gpu.progress(0, 5)).toBe(1);
    expect(gpu.progress(0, 5)).toBe(0);
    expect(gpu.fenceCompleted(0)).toBe(3);
    expect(gpu.pendingItems(1)).toBe(0);
  });

  it('the paging fence only moves up, from the paging queue and from the CPU; a wait for 0 is satisfied at once', () => {
    const gpu = makeGpu();
    gpu.queueWaitPaging(1, 0);
    expect(gpu.progress(1, 1)).toBe(1);
    gpu.enqueueMakeResident([], 0, 0, 5, 'batch');
    gpu.enqueueMakeResident([], 0, 0, 3, 'batch');
    expect(gpu.pagingProgress(0)).toBe(0);
    expect(gpu.pagingProgress(1)).toBe(1);
    expect(gpu.pagingFenceCompleted).toBe(5);
    expect(gpu.pagingProgress(3)).toBe(1);
    expect(gpu.pagingFenceCompleted).toBe(5);
    expect(gpu.pagingProgress(3)).toBe(0);
    gpu.cpuSignalPaging(4);
    expect(gpu.pagingFenceCompleted).toBe(5);
    gpu.cpuSignalPaging(6);
    expect(gpu.pagingFenceCompleted).toBe(6);
  });

  it('submission numbers count across queues', () => {
    const gpu = makeGpu();
    expect([
      gpu.executeCommandLists(0, []),
      gpu.executeCommandLists(1, [[]]),
      gpu.executeCommandLists(0, []),
    ]).toEqual([1, 2, 3]);
  });

  it('long queues and a long paging list keep their order and their judging across compaction', () => {
    const gpu = makeGpu();
    gpu.createObject(0, true);
    for (let value = 1; value <= 130; value++) gpu.queueSignal(0, value);
    expect(gpu.executeCommandLists(0, [[0]])).toBe(1);
    gpu.queueSignal(0, 131);
    expect(gpu.progress(0, 100)).toBe(100);
    expect([gpu.fenceCompleted(0), gpu.pendingItems(0)]).toEqual([100, 32]);
    expect(gpu.isReferencedByPendingWork(0)).toBe(true);
    expect(gpu.progress(0, 100)).toBe(32);
    expect([gpu.fenceCompleted(0), gpu.pendingItems(0)]).toEqual([131, 0]);
    expect(gpu.isReferencedByPendingWork(0)).toBe(false);
    for (let value = 1; value <= 40; value++) gpu.enqueueMakeResident([], 0, 0, value, 'batch');
    expect(gpu.pagingProgress(30)).toBe(30);
    expect(gpu.pagingFenceCompleted).toBe(30);
    expect(gpu.pagingProgress(100)).toBe(10);
    expect(gpu.pagingFenceCompleted).toBe(40);
    expect(gpu.violations).toEqual([]);
  });
});

describe('simulated GPU: injected failures and the call log', () => {
  it('each call kind fails once when armed, changes nothing and is logged with E_OUTOFMEMORY; the log drains', () => {
    const gpu = makeGpu();
    gpu.createObject(0, false);
    gpu.createObject(1, true);
    gpu.failNext('makeResident');
    gpu.failNext('makeResident'); // armed, not counted: still one failure
    expect(gpu.makeResident([0], 0, 1, 'batch')).toBe(false);
    expect([gpu.isResident(0), ...usage(gpu)]).toEqual([false, 20, 0]);
    expect(gpu.makeResident([0], 0, 1, 'batch')).toBe(true);
    gpu.failNext('enqueueMakeResident');
    gpu.failNext('evict');
    expect(gpu.evict([1, 0], 1, 1)).toBe(false);
    expect(gpu.isResident(0)).toBe(true);
    expect(gpu.enqueueMakeResident([2, 3], 0, 2, 4, 'fallback')).toBe(false);
    expect([gpu.isResident(2), gpu.isResident(3), gpu.pagingProgress(1)]).toEqual([
      false,
      false,
      0,
    ]);
    expect(gpu.enqueueMakeResident([2, 3], 0, 2, 4, 'fallback')).toBe(true);
    expect(gpu.evict([0], 0, 1)).toBe(true);
    gpu.queueWaitPaging(1, 4);
    gpu.executeCommandLists(1, [[2], [3, 2]]);
    gpu.queueSignal(1, 1);
    gpu.cpuSignalPaging(4);
    expect(gpu.cpuWait(1, 1)).toBe(true);
    expect(gpu.drainCalls()).toStrictEqual([
      ['makeResident', 'batch', [0], 'E_OUTOFMEMORY'],
      ['makeResident', 'batch', [0]],
      ['evict', [0], 'E_OUTOFMEMORY'],
      ['enqueueMakeResident', 'fallback', [2, 3], 4, 'E_OUTOFMEMORY'],
      ['enqueueMakeResident', 'fallback', [2, 3], 4],
      ['evict', [0]],
      ['gpuWait', 1, 4],
      ['execute', 1, 2],
      ['signal', 1, 1],
      ['cpuSignalPaging', 4],
      ['cpuWait', 1, 1],
    ]);
    expect(gpu.drainCalls()).toEqual([]);
    expect(gpu.violations).toEqual([]);
  });

  it('an unchecked GPU keeps residency and usage but logs, notes and judges nothing except a deadlock', () => {
    const gpu = makeGpu({ checked: false, localBudgetBytes: 0, nonLocalBudgetBytes: 0 });
    let observed = 0;
    gpu.evictObserver = () => observed++;
    gpu.createObject(0, true);
    gpu.makeResident([0], 0, 1, 'batch'); // a second flip and over the budget: not judged
    gpu.makeResident([1], 0, 1, 'batch');
    expect([gpu.residencyRefCount(0), ...usage(gpu)]).toEqual([2, 30, 0]);
    expect(gpu.evict([2], 0, 1)).toBe(true);
    expect(gpu.residencyRefCount(2)).toBe(0);
    expect(gpu.executeCommandLists(0, [[3]])).toBe(1);
    gpu.queueSignal(0, 1);
    expect(gpu.evict([1], 0, 1)).toBe(true); // a list is pending, and unchecked nothing judges the evict
    expect(gpu.residencyRefCount(1)).toBe(0);
    // The pending work is still answered (the manager's EndTracking asks it in either mode).
    expect([gpu.isReferencedByPendingWork(3), gpu.isReferencedByPendingWork(1)]).toEqual([
      true,
      false,
    ]);
    gpu.makeResident([1], 0, 1, 'batch');
    expect(gpu.progress(0, 1)).toBe(1); // the list runs: nothing is touched or judged
    expect([gpu.isReferencedByPendingWork(3), gpu.isReferencedByPendingWork(1)]).toEqual([
      true,
      false,
    ]);
    expect(gpu.progress(0, 1)).toBe(1); // its fence signal retires it
    expect(gpu.isReferencedByPendingWork(3)).toBe(false);
    gpu.enqueueMakeResident([3], 0, 1, 1, 'batch');
    expect(gpu.pagingProgress(1)).toBe(1);
    gpu.failNext('evict');
    expect(gpu.evict([0], 0, 1)).toBe(false);
    expect(gpu.evict([0], 0, 1)).toBe(true);
    expect(gpu.residencyRefCount(0)).toBe(1);
    expect(gpu.moveToSegment(0, true)).toBe(true);
    expect(usage(gpu)).toEqual([100, 10]);
    expect(gpu.violations).toEqual([]);
    expect(observed).toBe(0);
    expect(gpu.drainCalls()).toEqual([]);
    expect(gpu.objectHistory(0)).toEqual([]);
    expect(gpu.cpuWait(1, 1)).toBe(false);
    expect(gpu.violations).toEqual([
      {
        kind: 'deadlock',
        object: -1,
        message: 'a CPU wait for fence value 1 on queue 1 can never complete (the fence is at 0)',
      },
    ]);
  });
});

describe('simulated GPU: the unchecked mode judges nothing a checked one would', () => {
  it('no eviction under a runnable list, no list made runnable by the CPU or the paging queue, no list that runs, over objects not resident', () => {
    const judged = (checked: boolean) => {
      const gpu = makeGpu({ checked });
      gpu.makeResident([1], 0, 1, 'batch'); // object 1 resident; 0, 2 and 3 are not
      gpu.queueWaitPaging(0, 1); // queue 0: runnable once the CPU signals paging value 1
      gpu.executeCommandLists(0, [[2]]);
      gpu.queueWaitPaging(1, 2); // queue 1: runnable once the paging queue reaches 2
      gpu.executeCommandLists(1, [[0]]);
      gpu.executeCommandLists(0, [[1]]); // behind queue 0's wait
      gpu.queueSignal(1, 1);
      gpu.cpuSignalPaging(1); // queue 0's lists become runnable: [2] is not resident
      gpu.evict([1], 0, 1); // object 1 while a runnable list references it
      gpu.enqueueMakeResident([3], 0, 1, 2, 'batch');
      gpu.pagingProgress(1); // queue 1's list becomes runnable: [0] is not resident
      gpu.progress(0, 4);
      gpu.progress(1, 4);
      return gpu.violations.map((violation) => `${violation.kind} ${violation.object}`);
    };
    expect(judged(true)).toEqual([
      'touch-not-resident 2',
      'evict-in-flight 1',
      'touch-not-resident 0',
      'touch-not-resident 2',
      'touch-not-resident 1',
      'touch-not-resident 0',
    ]);
    expect(judged(false)).toEqual([]);
  });
});

describe('simulated GPU: object history', () => {
  it('keeps exactly the last 1000 entries, each stamped with the clock; a message carries them all', () => {
    const gpu = makeGpu();
    for (let i = 0; i < 1000; i++) {
      gpu.advanceClock(1);
      gpu.moveToSegment(0, i % 2 === 0);
    }
    let history = gpu.objectHistory(0);
    expect(history).toHaveLength(1000);
    expect(history[0]).toBe('t=1: moved to the non-local segment');
    expect(history[999]).toBe('t=1000: moved to the local segment');
    gpu.advanceClock(1);
    gpu.moveToSegment(0, true);
    history = gpu.objectHistory(0);
    expect(history).toHaveLength(1000);
    expect(history[0]).toBe('t=2: moved to the local segment');
    expect(history[999]).toBe('t=1001: moved to the non-local segment');
    history.push('not the GPU’s');
    expect(gpu.objectHistory(0)).toHaveLength(1000); // a copy
    gpu.evict([0], 0, 1); // noted (the oldest entry goes), then judged: the message holds the 1000 kept
    const after = gpu.objectHistory(0);
    expect(after).toHaveLength(1000);
    expect(after[0]).toBe('t=3: moved to the non-local segment');
    expect(after[999]).toBe('t=1001: evicted');
    expect(gpu.violations).toEqual([
      {
        kind: 'refcount',
        object: 0,
        message: 'Evict of object 0, which is not resident' + historyBlock(0, after),
      },
    ]);
  });

  it('object 0 has a history like any other; no object (-1) has none', () => {
    const gpu = makeGpu();
    gpu.createObject(0, true);
    expect(gpu.objectHistory(0)).toEqual(['t=0: created resident']);
    expect(gpu.objectHistory(-1)).toEqual([]);
    expect(gpu.objectHistory(1)).toEqual([]);
  });
});

describe('queue timeline: the judge of hand-outs', () => {
  const read = (
    offsetBytes: number,
    sizeBytes: number,
    fenceValue: number,
    ownerId: number,
  ): GpuRead => ({ offsetBytes, sizeBytes, fenceValue, ownerId });

  it('starts with nothing signalled, nothing completed and nothing in flight', () => {
    const timeline = new QueueTimeline();
    expect([
      timeline.nextValueToSignal,
      timeline.completedValue,
      timeline.lastSignalledValue,
      timeline.inFlightCount,
    ]).toEqual([1, 0, 0, 0]);
    expect([timeline.isInFlight(0), timeline.isInFlight(1)]).toEqual([false, true]);
    expect(timeline.findInFlightOverlap(0, 2 ** 40)).toBeNull();
    expect(() => timeline.inFlightAt(0)).toThrow(new Error('queue timeline: no in-flight read #0'));
    expect(timeline.advance(3)).toBe(0);
  });

  it('a read at the completed value is done already; one value above it is in flight; inFlightAt ends at the last in flight', () => {
    const timeline = new QueueTimeline();
    expect([timeline.signal(), timeline.signal(), timeline.signal()]).toEqual([1, 2, 3]);
    expect(timeline.advance(1)).toBe(1);
    timeline.submitRead(0, 8, 1, 7);
    expect(timeline.inFlightCount).toBe(0);
    timeline.submitRead(0, 8, 2, 8);
    timeline.submitRead(8, 8, 3, 9);
    expect(timeline.inFlightCount).toBe(2);
    expect(timeline.inFlightAt(0)).toEqual(read(0, 8, 2, 8));
    expect(timeline.inFlightAt(1)).toEqual(read(8, 8, 3, 9));
    expect(() => timeline.inFlightAt(2)).toThrow('queue timeline: no in-flight read #2');
    expect(timeline.advance(1)).toBe(2);
    expect([timeline.isInFlight(2), timeline.isInFlight(3)]).toEqual([false, true]);
    expect(timeline.inFlightCount).toBe(1);
    expect(timeline.inFlightAt(0)).toEqual(read(8, 8, 3, 9));
    expect(() => timeline.inFlightAt(1)).toThrow('queue timeline: no in-flight read #1');
    expect(timeline.advance(0)).toBe(2);
    expect(timeline.advance(-2)).toBe(2);
    expect(timeline.advance(5)).toBe(3);
    expect(timeline.inFlightCount).toBe(0);
  });

  it('reads stay in fence order: equal values in submission order, a lower value before higher ones', () => {
    const timeline = new QueueTimeline();
    timeline.signal();
    timeline.submitRead(0, 1, 1, 1);
    timeline.advance(1);
    timeline.submitRead(0, 1, 3, 2);
    timeline.submitRead(0, 1, 3, 3);
    timeline.submitRead(0, 1, 2, 4);
    timeline.submitRead(0, 1, 3, 5);
    expect([0, 1, 2, 3].map((index) => timeline.inFlightAt(index).ownerId)).toEqual([4, 2, 3, 5]);
    const fresh = new QueueTimeline();
    fresh.submitRead(0, 1, 2, 1);
    fresh.submitRead(0, 1, 1, 2); // goes first, to the very front of the list
    expect([0, 1].map((index) => fresh.inFlightAt(index).ownerId)).toEqual([2, 1]);
  });

  it('overlap: half-open ranges, the first in fence order', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(0, 10, 1, 1); // [0, 10)
    timeline.submitRead(5, 10, 1, 2); // [5, 15)
    timeline.submitRead(20, 10, 2, 1); // [20, 30)
    expect(timeline.findInFlightOverlap(0, 30)).toEqual(read(0, 10, 1, 1));
    expect(timeline.findInFlightOverlap(10, 5)).toEqual(read(5, 10, 1, 2)); // [10, 15): only the second
    expect(timeline.findInFlightOverlap(20, 5)).toEqual(read(20, 10, 2, 1));
    expect(timeline.findInFlightOverlap(29, 100)).toEqual(read(20, 10, 2, 1));
    expect(timeline.findInFlightOverlap(15, 5)).toBeNull(); // [15, 20) touches both ends
    expect(timeline.findInFlightOverlap(14, 1)).toEqual(read(5, 10, 1, 2));
    expect(timeline.findInFlightOverlap(19, 2)).toEqual(read(20, 10, 2, 1));
    expect(timeline.findInFlightOverlap(29, 1)).toEqual(read(20, 10, 2, 1));
    expect(timeline.findInFlightOverlap(30, 100)).toBeNull();
    timeline.signal();
    timeline.advance(1);
    expect(timeline.findInFlightOverlap(0, 20)).toBeNull();
    expect(timeline.findInFlightOverlap(0, 30)).toEqual(read(20, 10, 2, 1));
  });

  it('judgeHandOut: a hand-out of bytes the GPU may still read is a violation naming both ranges and the fence; next to them none', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(100, 50, 1, 1); // [100, 150)
    timeline.submitRead(200, 10, 2, 2); // [200, 210)
    const violations = ['an earlier one'];
    timeline.judgeHandOut('alloc', 150, 50, violations);
    timeline.judgeHandOut('alloc', 90, 10, violations);
    timeline.judgeHandOut('alloc', 210, 5, violations);
    expect(violations).toEqual(['an earlier one']);
    timeline.judgeHandOut('poolAcquire', 199, 2, violations);
    expect(violations).toEqual([
      'an earlier one',
      'poolAcquire handed out [199, 201) while the GPU may still read [200, 210) until fence value 2 (completed 0)',
    ]);
    timeline.signal();
    timeline.advance(1);
    timeline.judgeHandOut('alloc', 100, 50, violations); // that read completed
    expect(violations).toHaveLength(2);
    timeline.judgeHandOut('allocate', 100, 101, violations);
    expect(violations[2]).toBe(
      'allocate handed out [100, 201) while the GPU may still read [200, 210) until fence value 2 (completed 1)',
    );
    expect(violations).toHaveLength(3);
  });

  it('long runs: completed reads are dropped without losing the ones in flight', () => {
    const timeline = new QueueTimeline();
    for (let value = 1; value <= 100; value++) {
      timeline.submitRead(value * 8, 8, value, value);
      timeline.signal();
    }
    expect(timeline.advance(80)).toBe(80);
    expect(timeline.inFlightCount).toBe(20);
    expect(timeline.inFlightAt(0)).toEqual(read(648, 8, 81, 81));
    expect(timeline.findInFlightOverlap(0, 8 * 81)).toBeNull();
    expect(timeline.findInFlightOverlap(0, 8 * 81 + 1)).toEqual(read(648, 8, 81, 81));
    timeline.submitRead(0, 8, 90, 999);
    expect(timeline.inFlightAt(9)).toEqual(read(720, 8, 90, 90));
    expect(timeline.inFlightAt(10)).toEqual(read(0, 8, 90, 999));
    expect(timeline.advance(100)).toBe(100);
    expect(timeline.inFlightCount).toBe(0);
  });

  it(`holds exactly MAX_IN_FLIGHT_READS (${MAX_IN_FLIGHT_READS}) reads in flight; one more is refused until some complete`, () => {
    const timeline = new QueueTimeline();
    timeline.signal();
    timeline.signal();
    for (let i = 0; i < 5; i++) timeline.submitRead(i, 1, 1, i);
    timeline.advance(1); // five completed reads, still in the list: they do not count
    for (let i = 0; i < MAX_IN_FLIGHT_READS - 1; i++) timeline.submitRead(i, 1, 2, i);
    timeline.submitRead(0, 1, 3, -2); // the last one that fits
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
    expect(timeline.inFlightAt(MAX_IN_FLIGHT_READS - 1).ownerId).toBe(-2);
    expect(() => timeline.submitRead(0, 1, 3, -3)).toThrow(
      new Error('queue timeline: too many in-flight reads'),
    );
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
    timeline.submitRead(0, 1, 1, -4); // work at the completed value is done: not refused, not recorded
    expect(timeline.inFlightCount).toBe(MAX_IN_FLIGHT_READS);
    expect(timeline.advance(1)).toBe(2);
    expect(timeline.inFlightCount).toBe(1);
    timeline.submitRead(0, 1, 3, -5);
    expect(timeline.inFlightCount).toBe(2);
  });
});

describe('simulated GPU: object history text', () => {
  it('names queued and fallback make-residents and the submissions that touched the object, oldest first', () => {
    const gpu = makeGpu();
    gpu.createObject(2, false);
    gpu.advanceClock(4);
    expect(gpu.enqueueMakeResident([2], 0, 1, 3, 'fallback')).toBe(true);
    gpu.queueWaitPaging(1, 3);
    gpu.executeCommandLists(1, [[2]]);
    gpu.pagingProgress(1);
    gpu.advanceClock(2);
    expect(gpu.progress(1, 2)).toBe(2);
    expect(gpu.evict([2], 0, 1)).toBe(true);
    expect(gpu.makeResident([2], 0, 1, 'batch')).toBe(true);
    expect(gpu.objectHistory(2)).toEqual([
      't=0: created evicted',
      't=4: enqueued resident at paging 3 (fallback)',
      't=6: touched by submission #1 on queue 1',
      't=6: evicted',
      't=6: made resident (batch)',
    ]);
    expect(makeGpu({ checked: false }).objectHistory(2)).toEqual([]);
  });
});
