/**
 * Misuse and edges of the residency manager (issue 14), held on the model and the shipped
 * implementation alike (docs/spec/residency-library.md#rl-4 to #rl-8, contract errors of
 * residency-manager-types); the unchecked mode's silence is the implementation's alone (the model
 * always records events):
 *
 * - construction refuses a MaxLatency below 1 (0 hangs the first submission,
 *   docs/spec/residency-library.md#rl-5), and 1 works;
 * - contract errors carry their code and name the object, and a refused call changes nothing;
 * - in async mode an object in a queued, not yet processed paging work cannot end tracking, in
 *   whichever ring slot the work sits (the ring wraps), and can once the worker processed it;
 * - the grace period at exactly 0.7f pressure is MAXUINT64 (never trims,
 *   docs/spec/residency-library.md#rl-8-4 is strictly greater), one byte more gives the
 *   interpolated grace and idle objects go;
 * - a MakeResident failing right after a pressure-trim Evict (the device fails the next call):
 *   whether it is the second batch or the fallback's first try, the retry covers exactly the
 *   objects not yet made, and bookkeeping ends equal to the device (latent defect (b) avoided);
 * - split halves: when another thread takes every free slot while the first half runs, the
 *   second half's master set fails and the submission answers E_FAIL
 *   (docs/spec/residency-library.md#rl-7-5);
 * - the pressure loop is bounded: G-1 rounds with a device failing every MakeResident stop
 *   with an error after 2 * (sync points + objects) + 8 rounds (the library would spin,
 *   docs/spec/residency-library.md#rl-8-6);
 * - the benchmark's unchecked mode answers like the checked one and records no events;
 * - the manager's set pool validates only the sets of [from, to) it is given.
 */
import { describe, expect, it } from 'vitest';
import { ResidencyManagerModel } from '../models/residency-manager.js';
import { ResidencyManagerImpl } from '../src/residency/residency-manager.js';
import { ManagerSetPool } from '../src/residency/residency-manager-sets.js';
import {
  NEVER_TRIM_TICKS,
  TRIM_THRESHOLD,
  type ResidencyManager,
  type ResidencyManagerConfig,
} from '../src/residency/residency-manager-types.js';
import { ContractError } from '../src/contract.js';
import { thrownBy } from './support.js';

const BASE: ResidencyManagerConfig = {
  objectSizesBytes: [4, 4, 4, 4],
  queueCount: 1,
  mode: 'inline',
  startEvicted: true,
  maxLatency: 6,
  ticksPerSecond: 10,
  localBudgetBytes: 100,
  nonLocalBudgetBytes: 0,
  unrealBudgetCap: false,
  debugBudgetBytes: -1,
  slotCount: 32,
  initialCapacity: 4,
};

interface Side {
  readonly name: string;
  readonly make: (config: ResidencyManagerConfig, checked?: boolean) => ResidencyManager;
}
/** The SET_HOLDS_UNTRACKED message: the first set, in submission order, holding an untracked object. */
const holdsUntracked = (set: number, object: number): string =>
  `set ${set} holds untracked object ${object}`;
const SIDES: Side[] = [
  {
    name: 'model',
    make: (config, checked = true) => new ResidencyManagerModel(config, { checked }),
  },
  {
    name: 'implementation',
    make: (config, checked = true) => new ResidencyManagerImpl(config, { checked }),
  },
];

/** Tracks every object and creates one closed set per given object list. */
function setUp(manager: ResidencyManager, contents: number[][]): number[] {
  for (let object = 0; object < manager.config.objectSizesBytes.length; object++)
    manager.beginTracking(object);
  return contents.map((objects) => {
    const set = manager.sets.createSet();
    expect(manager.sets.open(set)).toBe('S_OK');
    for (const object of objects) manager.sets.insert(set, object);
    expect(manager.sets.close(set)).toBe('S_OK');
    return set;
  });
}

function execute(manager: ResidencyManager, sets: number[]): string {
  return manager.executeCommandLists(
    0,
    sets.map((set) => manager.sets.contents(set)),
    sets,
  );
}

/** A contract error with this code and exactly this message (after the code). */
function expectContractError(call: () => unknown, code: string, message: string): void {
  const error = thrownBy(call);
  expect(error, message).toBeInstanceOf(ContractError);
  expect((error as ContractError).code).toBe(code);
  expect((error as ContractError).message).toBe(`${code}: ${message}`);
}

/** Everything the manager's public views report, copied. */
function views(manager: ResidencyManager): unknown {
  const objects = manager.config.objectSizesBytes.map((_, object) => object);
  return {
    resident: [...manager.residentList()],
    evicted: [...manager.evictedList()],
    counters: manager.counters(),
    status: objects.map((object) => manager.status(object)),
    lastSync: objects.map((object) => manager.lastSyncPoint(object)),
    lastUsed: objects.map((object) => manager.lastUsedTimestamp(object)),
    syncPoints: [...manager.syncPointGenerations()],
    firstUncompleted: manager.firstUncompletedGeneration(),
    generation: manager.currentGeneration(),
    queued: manager.queuedWorks(),
    deviceRefCounts: objects.map((object) => manager.gpu.residencyRefCount(object)),
  };
}

describe('residency-manager: MaxLatency at its edge', () => {
  it('a MaxLatency below 1 is refused at construction (0 would hang the first submission)', () => {
    for (const [maxLatency, make] of [0, -1, 0.5, Number.NaN].flatMap((value) =>
      SIDES.map((side) => [value, side.make] as const),
    )) {
      const error = thrownBy(() => make({ ...BASE, maxLatency }));
      expect(error, `maxLatency ${maxLatency}`).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe(
        'maxLatency must be >= 1 (0 hangs the first submission)',
      );
    }
  });

  for (const side of SIDES) {
    it(`${side.name}: MaxLatency 1 holds one queued work; the next submission runs the worker first`, () => {
      const manager = side.make({ ...BASE, mode: 'async', maxLatency: 1 });
      const [a, b] = setUp(manager, [[0], [1]]);
      expect(execute(manager, [a!])).toBe('S_OK');
      expect(manager.queuedWorks()).toBe(1);
      expect(manager.drainEvents()).toEqual([]);
      expect(execute(manager, [b!])).toBe('S_OK');
      expect(manager.drainEvents()).toEqual(['paging-queue-full']);
      expect(manager.queuedWorks()).toBe(1);
      expect(manager.status(0)).toBe('resident');
      expect(manager.gpu.isResident(0)).toBe(true);
      expect(manager.pagingWorkerStep()).toBe(true);
      expect(manager.pagingWorkerStep()).toBe(false);
      manager.gpu.progress(0, 100);
      expect(manager.gpu.violations).toEqual([]);
    });
  }
});

// 11744051 / 2^24 is 0.7f exactly (0.699999988079071): usage at the pressure threshold.
const budget = 2 ** 24;
const atThreshold = 11744051;

describe('residency-manager: the grace period at exactly 0.7f pressure', () => {
  it('the threshold usage is exactly 0.7f of the budget', () => {
    expect(atThreshold / budget).toBe(TRIM_THRESHOLD);
  });

  it('graceFor / gracePeriodTicks: MAXUINT64 at the threshold, the interpolated 599 ticks one byte above', () => {
    const model = new ResidencyManagerModel(BASE);
    const impl = new ResidencyManagerImpl(BASE);
    // MAXUINT64, the library's "never trim" grace (docs/spec/residency-library.md#rl-8-4).
    expect([
      model.gracePeriodTicks(atThreshold, budget),
      impl.graceFor(atThreshold, budget),
    ]).toEqual([18446744073709551615n, Infinity]);
    expect(NEVER_TRIM_TICKS).toBe(2n ** 64n - 1n);
    const q = ((atThreshold + 1) / budget - TRIM_THRESHOLD) / (1 - TRIM_THRESHOLD);
    const expected = Math.trunc(590 * (1 - q)) + 10;
    expect(expected).toBe(599);
    expect([
      model.gracePeriodTicks(atThreshold + 1, budget),
      impl.graceFor(atThreshold + 1, budget),
    ]).toEqual([BigInt(expected), expected]);
  });
});

for (const side of SIDES) {
  describe(`residency-manager (${side.name}): contract errors name the object and change nothing`, () => {
    it('tracking twice, ending an untracked object, ending one in an open set or in flight, executing a set that holds an untracked object', () => {
      const manager = side.make(BASE);
      const [a, b] = setUp(manager, [[0, 1], [2]]);
      const before = views(manager);
      expectContractError(
        () => manager.beginTracking(1),
        'ALREADY_TRACKED',
        'object 1 is already tracked',
      );
      expect(views(manager)).toEqual(before);

      // Object 3 leaves; ending it again, or a second time later, is NOT_TRACKED.
      manager.endTracking(3);
      const untracked = views(manager);
      expectContractError(() => manager.endTracking(3), 'NOT_TRACKED', 'object 3 is not tracked');
      expect(views(manager)).toEqual(untracked);

      // An open set holds object 2.
      const open = manager.sets.createSet();
      expect(manager.sets.open(open)).toBe('S_OK');
      manager.sets.insert(open, 2);
      expectContractError(
        () => manager.endTracking(2),
        'END_TRACKING_IN_USE',
        'object 2 is in an open set or in flight',
      );
      expect(manager.sets.close(open)).toBe('S_OK');

      // Submitted and not yet run on the GPU: in flight.
      expect(execute(manager, [a!])).toBe('S_OK');
      const inFlight = views(manager);
      expectContractError(
        () => manager.endTracking(0),
        'END_TRACKING_IN_USE',
        'object 0 is in an open set or in flight',
      );
      expect(views(manager)).toEqual(inFlight);
      manager.gpu.pagingProgress(100);
      manager.gpu.progress(0, 100);
      manager.endTracking(0);
      expect(manager.status(0)).toBe('untracked');

      // Set a still holds object 0, no longer tracked: Execute and MakeResident refuse it.
      const refused = views(manager);
      expectContractError(
        () => execute(manager, [b!, a!]),
        'SET_HOLDS_UNTRACKED',
        holdsUntracked(a!, 0),
      );
      expectContractError(
        () => manager.makeResidentForQueue(0, a!),
        'SET_HOLDS_UNTRACKED',
        holdsUntracked(a!, 0),
      );
      expect(views(manager)).toEqual(refused);
      expect(manager.gpu.violations).toEqual([]);
    });
  });

  describe(`residency-manager (${side.name}): async, objects in queued paging work`, () => {
    it('an object in a queued, unprocessed paging work cannot end tracking, in every slot of the ring; once processed it can', () => {
      // MaxLatency 2: a ring of 3 slots, wrapped twice by 7 works.
      const manager = side.make({ ...BASE, mode: 'async', maxLatency: 2 });
      const [p, q] = setUp(manager, [
        [0, 1],
        [2, 3],
      ]);
      for (let round = 0; round < 7; round++) {
        const set = round % 2 === 0 ? p! : q!;
        const [first, second] = manager.sets.contents(set);
        const other = round % 2 === 0 ? 2 : 0;
        expect(manager.makeResidentForQueue(0, set)).toBe('S_OK');
        expect(manager.queuedWorks()).toBe(1);
        for (const object of [first!, second!]) {
          expectContractError(
            () => manager.endTracking(object),
            'END_TRACKING_IN_USE',
            `object ${object} is in an open set or in flight`,
          );
          expect(manager.status(object), `round ${round}`).not.toBe('untracked');
        }
        // An object of no queued work may leave (and come back, evicted).
        manager.endTracking(other);
        manager.beginTracking(other);
        expect(manager.pagingWorkerStep()).toBe(true);
        for (const object of [first!, second!]) {
          manager.endTracking(object);
          manager.beginTracking(object);
        }
      }
      // Two works queued at once: the second one's objects are held until it is processed.
      expect(manager.makeResidentForQueue(0, p!)).toBe('S_OK');
      expect(manager.makeResidentForQueue(0, q!)).toBe('S_OK');
      expect(manager.queuedWorks()).toBe(2);
      expectContractError(
        () => manager.endTracking(3),
        'END_TRACKING_IN_USE',
        'object 3 is in an open set or in flight',
      );
      expect(manager.pagingWorkerStep()).toBe(true);
      manager.endTracking(1);
      expectContractError(
        () => manager.endTracking(3),
        'END_TRACKING_IN_USE',
        'object 3 is in an open set or in flight',
      );
      expect(manager.pagingWorkerStep()).toBe(true);
      manager.endTracking(3);
      expect([0, 1, 2, 3].map((object) => manager.status(object))).toEqual([
        'resident',
        'untracked',
        'resident',
        'untracked',
      ]);
      expect(manager.gpu.violations).toEqual([]);
    });
  });

  describe(`residency-manager (${side.name}): split halves and the set pool`, () => {
    it('another thread takes the free slots while the first half runs: the second half is E_OUTOFMEMORY and the submission E_FAIL', () => {
      // Budget 7 < 8 bytes: the two sets split. The first half's aged trim is the moment the
      // other thread (here the Evict hook) opens sets on every free slot; the second half's
      // master set then finds none.
      const manager = side.make({
        ...BASE,
        objectSizesBytes: [4, 4, 4],
        startEvicted: false,
        localBudgetBytes: 7,
        slotCount: 4,
      });
      const [first, second] = setUp(manager, [[1], [2]]);
      manager.gpu.advanceClock(1000);
      manager.gpu.drainCalls();
      const taken: number[] = [];
      manager.gpu.evictObserver = () => {
        for (;;) {
          const set = manager.sets.createSet();
          if (manager.sets.open(set) !== 'S_OK') {
            manager.sets.destroySet(set);
            return;
          }
          taken.push(set);
        }
      };
      expect(execute(manager, [first!, second!])).toBe('E_FAIL');
      expect(taken).toHaveLength(4);
      expect(manager.drainEvents()).toEqual(['split', 'aged-trim']);
      // The first half ran (one list, one generation); the second executed nothing.
      expect(manager.gpu.drainCalls()).toEqual([
        ['evict', [2, 0]],
        ['execute', 0, 1],
        ['signal', 0, 1],
      ]);
      expect(manager.currentGeneration()).toBe(1);
      expect(manager.residentList()).toEqual([1]);
      // Once the other thread closes its sets, the second set goes through.
      manager.gpu.evictObserver = null;
      for (const set of taken) expect(manager.sets.close(set)).toBe('S_OK');
      expect(execute(manager, [second!])).toBe('S_OK');
      expect(manager.status(2)).toBe('resident');
      manager.gpu.pagingProgress(100);
      manager.gpu.progress(0, 100);
      expect(manager.gpu.violations).toEqual([]);
    });
  });

  describe(`residency-manager (${side.name}): the pressure loop is bounded`, () => {
    it('G-1 with a device that fails every MakeResident: the paging loop stops after 2 * (sync points + objects) + 8 rounds, it does not spin', () => {
      // Async: object 0 resident from generation 0 (completed); the worker processes
      // generation 1 while its own sync point is uncompleted, so every round is G-1: nothing
      // to wait for, nothing to trim (room enough), and the MakeResident fails again.
      const manager = side.make({ ...BASE, mode: 'async' });
      const [old, wanted] = setUp(manager, [[0], [1]]);
      expect(execute(manager, [old!])).toBe('S_OK');
      expect(manager.pagingWorkerStep()).toBe(true);
      manager.gpu.progress(0, 100);
      expect(execute(manager, [wanted!])).toBe('S_OK');
      manager.gpu.drainCalls();
      manager.drainEvents();
      // The failure is re-armed at each round's Evict, a hundred times at most.
      let arms = 0;
      manager.gpu.failNext('makeResident');
      manager.gpu.evictObserver = () => {
        if (arms === 100) return;
        arms++;
        manager.gpu.failNext('makeResident');
      };
      const limit = 2 * (1 + 1) + 8;
      const error = thrownBy(() => manager.pagingWorkerStep());
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(
        new RegExp(`^(model: )?paging loop exceeded ${limit} rounds$`),
      );
      const calls = manager.gpu.drainCalls();
      const round = [
        ['makeResident', 'batch', [1], 'E_OUTOFMEMORY'],
        ['evict', []],
      ];
      expect(calls).toEqual(Array.from({ length: limit + 1 }, () => round).flat());
      expect(manager.drainEvents()).toEqual(
        Array.from({ length: limit + 1 }, () => ['make-resident-failed', 'g-minus-one']).flat(),
      );
    });
  });

  describe(`residency-manager (${side.name}): grace period at exactly 0.7f pressure`, () => {
    for (const [label, sizes, trims] of [
      [
        'usage exactly 0.7f of the local budget never trims (MAXUINT64)',
        [atThreshold - 1, 1],
        false,
      ],
      [
        'one byte more gives the interpolated grace (599 ticks at 10 ticks/s): objects idle for 100 s go',
        [atThreshold - 1, 2],
        true,
      ],
    ] as const) {
      it(label, () => {
        const manager = side.make({
          ...BASE,
          objectSizesBytes: [...sizes],
          startEvicted: false,
          localBudgetBytes: budget,
        });
        setUp(manager, []);
        manager.gpu.drainCalls();
        manager.gpu.advanceClock(1000);
        expect(execute(manager, [])).toBe('S_OK');
        if (trims) {
          expect(manager.drainEvents()).toEqual(['aged-trim']);
          expect(manager.gpu.drainCalls()[0]).toEqual(['evict', [1, 0]]);
          expect(manager.residentList()).toEqual([]);
          expect(manager.evictedList()).toEqual([1, 0]);
        } else {
          expect(manager.drainEvents()).toEqual([]);
          expect(manager.gpu.drainCalls().filter((call) => call[0] === 'evict')).toEqual([]);
          expect(manager.residentList()).toEqual([1, 0]);
        }
      });
    }
  });

  describe(`residency-manager (${side.name}): a MakeResident failing right after a pressure-trim Evict`, () => {
    /**
     * Budget 10. Object 0 (4 bytes) is resident from generation 0, whose sync point is still
     * uncompleted; the next submission needs objects 1 and 2. The first batch takes object 1
     * (the prefix that fits), object 2 does not fit; the loop waits for generation 0 and trims
     * (nothing: the projection fits), and the device fails the next MakeResident.
     */
    function run(sizes: number[]): {
      manager: ResidencyManager;
      calls: unknown[];
      events: string[];
    } {
      const manager = side.make({ ...BASE, objectSizesBytes: sizes, localBudgetBytes: 10 });
      const [old, wanted] = setUp(manager, [[0], [1, 2]]);
      expect(execute(manager, [old!])).toBe('S_OK');
      manager.gpu.drainCalls();
      manager.drainEvents();
      let armed = false;
      manager.gpu.evictObserver = () => {
        if (armed) return;
        armed = true;
        manager.gpu.failNext('enqueueMakeResident');
      };
      expect(execute(manager, [wanted!])).toBe('S_OK');
      expect(armed).toBe(true);
      return { manager, calls: manager.gpu.drainCalls(), events: manager.drainEvents() };
    }

    function settled(manager: ResidencyManager): void {
      manager.gpu.pagingProgress(100);
      manager.gpu.progress(0, 100);
      expect(manager.gpu.violations).toEqual([]);
      expect([0, 1, 2].map((object) => manager.gpu.residencyRefCount(object))).toEqual([1, 1, 1]);
      expect(manager.residentList()).toEqual([0, 1, 2]);
      expect(manager.counters()).toEqual({
        resident: 3,
        evicted: 0,
        residentSizeBytes: manager.config.objectSizesBytes.reduce((a, b) => a + b, 0),
      });
    }

    it('the second batch fails (1 byte free, nothing fits): the fallback makes exactly object 2, not the first batch again', () => {
      const { manager, calls, events } = run([4, 5, 2]);
      expect(calls).toEqual([
        ['enqueueMakeResident', 'batch', [1], 2],
        ['cpuWait', 0, 1],
        ['evict', []],
        ['enqueueMakeResident', 'batch', [], 3, 'E_OUTOFMEMORY'],
        ['enqueueMakeResident', 'fallback', [2], 3],
        ['gpuWait', 0, 3],
        ['execute', 0, 1],
        ['signal', 0, 2],
      ]);
      expect(events).toEqual(['wait-sync-point', 'make-resident-failed', 'forced-fallback']);
      settled(manager);
    });

    it('the budget is full after the first batch, so the fallback comes next and fails once: its retry makes exactly object 2', () => {
      const { manager, calls, events } = run([4, 6, 2]);
      expect(calls).toEqual([
        ['enqueueMakeResident', 'batch', [1], 2],
        ['cpuWait', 0, 1],
        ['evict', []],
        ['enqueueMakeResident', 'fallback', [2], 3, 'E_OUTOFMEMORY'],
        ['enqueueMakeResident', 'fallback', [2], 3],
        ['gpuWait', 0, 3],
        ['execute', 0, 1],
        ['signal', 0, 2],
      ]);
      expect(events).toEqual(['wait-sync-point', 'forced-fallback', 'make-resident-failed']);
      settled(manager);
    });
  });
}

for (const side of SIDES) {
  describe(`residency-manager (${side.name}): the submitted lists are the manager's own copy`, () => {
    it('a caller reusing its lists array after Execute does not change what is in flight', () => {
      const manager = side.make(BASE);
      const [a] = setUp(manager, [[0, 1]]);
      const lists = [manager.sets.contents(a!).slice()];
      expect(manager.executeCommandLists(0, lists, [a!])).toBe('S_OK');
      lists[0] = []; // the caller records its next frame into the same array
      expectContractError(
        () => manager.endTracking(0),
        'END_TRACKING_IN_USE',
        'object 0 is in an open set or in flight',
      );
      manager.gpu.pagingProgress(100);
      manager.gpu.progress(0, 100);
      manager.endTracking(0);
      expect(manager.gpu.violations).toEqual([]);
    });
  });
}

describe("residency-manager: the benchmark's unchecked mode", () => {
  it('the implementation unchecked answers like itself checked and like the model, step by step, and records no events', () => {
    for (const mode of ['inline', 'async'] as const) {
      const config: ResidencyManagerConfig = {
        ...BASE,
        mode,
        objectSizesBytes: [4, 4, 4],
        localBudgetBytes: 8,
      };
      const model: ResidencyManager = new ResidencyManagerModel(config);
      const checked: ResidencyManager = new ResidencyManagerImpl(config);
      const unchecked: ResidencyManager = new ResidencyManagerImpl(config, { checked: false });
      const managers = [model, checked, unchecked];
      const checkedEvents: string[] = [];
      const steps: [string, (manager: ResidencyManager, sets: number[]) => unknown][] = [
        ['split', (m, s) => execute(m, [s[0]!, s[1]!, s[2]!])],
        ['worker', (m) => [m.pagingWorkerStep(), m.pagingWorkerStep()]],
        ['one set over budget', (m, s) => execute(m, [s[3]!])],
        ['worker', (m) => m.pagingWorkerStep()],
        ['GPU runs', (m) => [m.gpu.pagingProgress(100), m.gpu.progress(0, 100)]],
        ['clock', (m) => m.gpu.advanceClock(700)],
        ['aged trim', (m, s) => execute(m, [s[0]!])],
        ['worker', (m) => m.pagingWorkerStep()],
        ['sync point', (m) => m.signalFence(0)],
      ];
      const sets = managers.map((manager) => setUp(manager, [[0], [1], [2], [0, 1, 2]]));
      for (const [name, step] of steps) {
        const answers = managers.map((manager, i) => step(manager, sets[i]!));
        expect(answers[1], `${mode}: ${name} (checked)`).toEqual(answers[0]);
        expect(answers[2], `${mode}: ${name} (unchecked)`).toEqual(answers[0]);
        expect(views(checked), `${mode}: views after ${name} (checked)`).toEqual(views(model));
        expect(views(unchecked), `${mode}: views after ${name} (unchecked)`).toEqual(views(model));
        const events = model.drainEvents();
        expect(checked.drainEvents(), `${mode}: events of ${name}`).toEqual(events);
        checkedEvents.push(...events);
        expect(unchecked.drainEvents(), `${mode}: unchecked events after ${name}`).toEqual([]);
      }
      expect(checkedEvents, mode).toEqual(
        expect.arrayContaining(['split', 'forced-fallback', 'aged-trim']),
      );
      expect(checked.gpu.violations).toEqual([]);
    }
  });
});

describe("the manager's set pool: validation looks at ids[from, to) only", () => {
  it('anyOpen and firstUntracked ignore the sets past `to` and before `from`, and null entries', () => {
    const pool = new ManagerSetPool({
      slotCount: 4,
      initialCapacity: 2,
      objectSizesBytes: [1, 1, 1],
    });
    const closed = pool.createSet();
    expect(pool.open(closed)).toBe('S_OK');
    pool.insert(closed, 0);
    expect(pool.close(closed)).toBe('S_OK');
    const holdsTwo = pool.createSet();
    expect(pool.open(holdsTwo)).toBe('S_OK');
    pool.insert(holdsTwo, 2);
    expect(pool.close(holdsTwo)).toBe('S_OK');
    const open = pool.createSet();
    expect(pool.open(open)).toBe('S_OK');
    pool.insert(open, 1);

    expect(pool.anyOpen([closed, open], 0, 1)).toBe(false);
    expect(pool.anyOpen([closed, open], 0, 2)).toBe(true);
    expect(pool.anyOpen([open, closed], 1, 2)).toBe(false);
    expect(pool.anyOpen([null, closed], 0, 2)).toBe(false);

    const status = Uint8Array.from([1, 1, 0]); // object 2 untracked
    expect(pool.firstUntracked([closed, holdsTwo], 0, 1, status)).toBe(-1);
    expect(pool.firstUntracked([closed, holdsTwo], 0, 2, status)).toBe(2);
    expect(pool.firstUntracked([holdsTwo, closed], 1, 2, status)).toBe(-1);
    expect(pool.firstUntracked([null, holdsTwo], 0, 2, status)).toBe(2);
  });
});
