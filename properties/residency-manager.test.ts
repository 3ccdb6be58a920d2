import { describe, expect, it } from 'vitest';
import { residencyManagerSystem } from '../src/systems/residency-manager.js';
import { ResidencyManagerModel } from '../models/residency-manager.js';
import { ResidencyManagerImpl } from '../src/residency/residency-manager.js';
import {
  NEVER_TRIM_TICKS,
  TRIM_THRESHOLD,
  type ResidencyManager,
  type ResidencyManagerConfig,
} from '../src/residency/residency-manager-types.js';
import { SimGpu } from '../src/gpu/sim-gpu.js';
import { describeSystem } from './support.js';

describeSystem(residencyManagerSystem, { numRuns: 3000, mutantRuns: 400 });

const BASE: ResidencyManagerConfig = {
  objectSizesBytes: [4, 4],
  queueCount: 1,
  mode: 'inline',
  startEvicted: true,
  maxLatency: 6,
  ticksPerSecond: 10,
  localBudgetBytes: 8,
  nonLocalBudgetBytes: 0,
  unrealBudgetCap: false,
  debugBudgetBytes: -1,
  slotCount: 32,
  initialCapacity: 4,
};

type Factory = (config: ResidencyManagerConfig) => ResidencyManager;
const SIDES: [string, Factory][] = [
  ['model', (config) => new ResidencyManagerModel(config)],
  ['implementation', (config) => new ResidencyManagerImpl(config)],
];

/** Creates a manager tracking every object and one closed set per given object list. */
function setUp(
  make: Factory,
  config: ResidencyManagerConfig,
  contents: number[][],
): { manager: ResidencyManager; sets: number[] } {
  const manager = make(config);
  for (let object = 0; object < config.objectSizesBytes.length; object++)
    manager.beginTracking(object);
  const sets = contents.map((objects) => {
    const set = manager.sets.createSet();
    expect(manager.sets.open(set)).toBe('S_OK');
    for (const object of objects) manager.sets.insert(set, object);
    expect(manager.sets.close(set)).toBe('S_OK');
    return set;
  });
  manager.gpu.drainCalls();
  return { manager, sets };
}

function execute(manager: ResidencyManager, sets: number[]): string {
  return manager.executeCommandLists(
    0,
    sets.map((set) => manager.sets.contents(set)),
    sets,
  );
}

describe('residency-manager: grace period (0.7f threshold, 60 s down to 1 s)', () => {
  const model = new ResidencyManagerModel({ ...BASE, ticksPerSecond: 10 });
  const impl = new ResidencyManagerImpl({ ...BASE, ticksPerSecond: 10 });
  const both = (usage: number, budget: number): [bigint, number] => [
    model.gracePeriodTicks(usage, budget),
    impl.graceFor(usage, budget),
  ];

  it('the threshold is 0.7f, 0.699999988079071 as a double', () => {
    expect(TRIM_THRESHOLD).toBe(0.699999988079071);
  });
  it('never trims at or below the threshold (MAXUINT64)', () => {
    expect(both(69, 100)).toEqual([NEVER_TRIM_TICKS, Infinity]);
    expect(both(0, 100)).toEqual([NEVER_TRIM_TICKS, Infinity]);
  });
  it('exactly 70 % is above 0.7f: 599 ticks at 10 ticks/s, not 600', () => {
    expect(both(70, 100)).toEqual([599n, 599]);
  });
  it('full pressure, over budget, 0/0 (NaN) and x/0 (+Infinity) all give the 1 s minimum', () => {
    for (const [usage, budget] of [
      [100, 100],
      [150, 100],
      [0, 0],
      [5, 0],
    ] as const)
      expect(both(usage, budget)).toEqual([10n, 10]);
  });
  it('interpolates linearly in between (85 %: trunc(590 * (1 - q)) + 10)', () => {
    const q = (0.85 - TRIM_THRESHOLD) / (1 - TRIM_THRESHOLD);
    const expected = Math.trunc(590 * (1 - q)) + 10;
    expect(both(85, 100)).toEqual([BigInt(expected), expected]);
  });
});

for (const [name, make] of SIDES) {
  describe(`residency-manager (${name}): spec examples`, () => {
    it('fence start values: queue fence counter 1 (D3D fence at 0), paging counter 0 with Device3, 1 without', () => {
      const inline = setUp(make, BASE, [[0]]);
      expect(execute(inline.manager, inline.sets)).toBe('S_OK');
      expect(inline.manager.gpu.fenceCompleted(0)).toBe(0);
      expect(inline.manager.gpu.drainCalls()).toEqual([
        ['enqueueMakeResident', 'batch', [0], 1],
        ['gpuWait', 0, 1],
        ['execute', 0, 1],
        ['signal', 0, 1],
      ]);
      const async = setUp(make, { ...BASE, mode: 'async' }, [[0]]);
      expect(execute(async.manager, async.sets)).toBe('S_OK');
      expect(async.manager.gpu.drainCalls()).toEqual([
        ['gpuWait', 0, 1],
        ['execute', 0, 1],
        ['signal', 0, 1],
      ]);
      expect(async.manager.pagingWorkerStep()).toBe(true);
      expect(async.manager.gpu.drainCalls()).toEqual([
        ['makeResident', 'batch', [0]],
        ['cpuSignalPaging', 1],
      ]);
    });

    it('splits only when the unique total is strictly greater than local + non-local budget', () => {
      const equal = setUp(make, { ...BASE, localBudgetBytes: 6, nonLocalBudgetBytes: 2 }, [
        [0],
        [1, 0],
      ]);
      expect(execute(equal.manager, equal.sets)).toBe('S_OK');
      expect(equal.manager.drainEvents()).not.toContain('split');
      const over = setUp(make, { ...BASE, localBudgetBytes: 6, nonLocalBudgetBytes: 1 }, [
        [0],
        [1, 0],
      ]);
      expect(execute(over.manager, over.sets)).toBe('S_OK');
      expect(over.manager.drainEvents()).toContain('split');
      // Both halves ran: two submissions, two generations.
      expect(over.manager.currentGeneration()).toBe(2);
    });

    it('a single list over budget does not split: it takes the force-resident fallback, reported as an event', () => {
      const { manager, sets } = setUp(make, { ...BASE, localBudgetBytes: 4 }, [[0, 1]]);
      expect(execute(manager, sets)).toBe('S_OK');
      const events = manager.drainEvents();
      expect(events).not.toContain('split');
      expect(events).toContain('forced-fallback');
      expect(manager.gpu.drainCalls().slice(0, 2)).toEqual([
        ['enqueueMakeResident', 'batch', [0], 1],
        ['enqueueMakeResident', 'fallback', [1], 2],
      ]);
    });

    it('G-1: the worker behind the submission thread waits for G-1 and trims what completed', () => {
      const { manager, sets } = setUp(make, { ...BASE, mode: 'async', localBudgetBytes: 4 }, [
        [0],
        [1],
      ]);
      expect(execute(manager, [sets[0]!])).toBe('S_OK');
      expect(manager.pagingWorkerStep()).toBe(true);
      manager.gpu.progress(0, 10);
      expect(execute(manager, [sets[1]!])).toBe('S_OK');
      manager.gpu.drainCalls();
      expect(manager.pagingWorkerStep()).toBe(true);
      expect(manager.drainEvents()).toEqual(['g-minus-one', 'pressure-trim']);
      expect(manager.gpu.drainCalls()).toEqual([
        ['evict', [0]],
        ['makeResident', 'batch', [1]],
        ['cpuSignalPaging', 2],
      ]);
      manager.gpu.progress(0, 10);
      expect(manager.gpu.violations).toEqual([]);
    });

    it('G = 0 never reaches G-1: the resident head is this work, so the fallback is taken', () => {
      const { manager, sets } = setUp(make, { ...BASE, mode: 'async', localBudgetBytes: 4 }, [
        [0, 1],
      ]);
      expect(execute(manager, sets)).toBe('S_OK');
      expect(manager.pagingWorkerStep()).toBe(true);
      expect(manager.drainEvents()).toEqual(['forced-fallback']);
      manager.gpu.progress(0, 10);
      expect(manager.gpu.violations).toEqual([]);
    });

    it('latent defect (b) avoided: a failed batch is not counted as made; the retry gives every flipped object its device call', () => {
      const { manager, sets } = setUp(make, BASE, [[0, 1]]);
      manager.gpu.failNext('enqueueMakeResident');
      expect(execute(manager, sets)).toBe('S_OK');
      expect(manager.drainEvents()).toEqual(['make-resident-failed', 'forced-fallback']);
      expect(manager.gpu.drainCalls()).toEqual([
        ['enqueueMakeResident', 'batch', [0, 1], 1, 'E_OUTOFMEMORY'],
        ['enqueueMakeResident', 'fallback', [0, 1], 1],
        ['gpuWait', 0, 1],
        ['execute', 0, 1],
        ['signal', 0, 1],
      ]);
      expect([manager.gpu.residencyRefCount(0), manager.gpu.residencyRefCount(1)]).toEqual([1, 1]);
      expect(manager.residentList()).toEqual([0, 1]);
    });

    it('Unreal: backgrounded, the local budget is 0 and the grace period 0, so idle objects go at the next submission', () => {
      const config = { ...BASE, startEvicted: false, unrealBudgetCap: true, localBudgetBytes: 100 };
      const { manager, sets } = setUp(make, config, [[0]]);
      expect(execute(manager, sets)).toBe('S_OK');
      manager.gpu.progress(0, 10);
      manager.gpu.advanceClock(1);
      expect(manager.executeCommandLists(0, [], [])).toBe('S_OK');
      expect(manager.drainEvents()).not.toContain('aged-trim');
      manager.gpu.progress(0, 10);
      manager.setBackground(true);
      manager.gpu.advanceClock(1);
      manager.gpu.drainCalls();
      expect(manager.executeCommandLists(0, [], [])).toBe('S_OK');
      expect(manager.drainEvents()).toContain('aged-trim');
      expect(manager.gpu.drainCalls()[0]).toEqual(['evict', [1, 0]]);
    });
  });
}

describe('simulated GPU', () => {
  it('reports a list touching an object that is not resident, with the object history', () => {
    const gpu = new SimGpu({
      objectSizesBytes: [4],
      queueCount: 1,
      ticksPerSecond: 1,
      localBudgetBytes: 4,
      nonLocalBudgetBytes: 0,
    });
    gpu.createObject(0, false);
    gpu.executeCommandLists(0, [[0]]);
    expect(gpu.violations.map((v) => v.kind)).toEqual(['touch-not-resident']);
    expect(gpu.violations[0]!.message).toMatch(/history of object 0:\n\s+t=0: created evicted/);
  });
  it('a queue blocks on the paging fence; usage follows device residency; failures are one-shot', () => {
    const gpu = new SimGpu({
      objectSizesBytes: [4, 6],
      queueCount: 1,
      ticksPerSecond: 1,
      localBudgetBytes: 10,
      nonLocalBudgetBytes: 0,
    });
    gpu.createObject(0, false);
    gpu.createObject(1, false);
    gpu.failNext('enqueueMakeResident');
    expect(gpu.enqueueMakeResident([0, 1], 0, 2, 1, 'batch')).toBe(false);
    expect(gpu.localUsageBytes).toBe(0);
    expect(gpu.enqueueMakeResident([0, 1], 0, 2, 1, 'batch')).toBe(true);
    expect(gpu.localUsageBytes).toBe(10);
    gpu.queueWaitPaging(0, 1);
    gpu.executeCommandLists(0, [[0, 1]]);
    gpu.queueSignal(0, 1);
    expect(gpu.progress(0, 5)).toBe(0);
    expect(gpu.pagingProgress(1)).toBe(1);
    expect(gpu.progress(0, 5)).toBe(3);
    expect(gpu.fenceCompleted(0)).toBe(1);
    expect(gpu.violations).toEqual([]);
    gpu.setBudgets(0, 0);
    expect(gpu.localMemory()).toEqual({ budgetBytes: 0, usageBytes: 10 });
  });
});

describe('bookkeeping-matches-device: list walks', () => {
  // A side whose lists are doctored: the check must name an object listed twice or on both lists
  // (the counters and statuses alone cannot show it when another object is missing).
  const check = residencyManagerSystem.invariants.find(
    (invariant) => invariant.name === 'bookkeeping-matches-device',
  )!.check;
  const config = { ...BASE, objectSizesBytes: [4, 4, 4], benchmarkTwin: false };
  const fakeSide = (resident: number[], evicted: number[]) => {
    const manager = {
      residentList: () => resident,
      evictedList: () => evicted,
      counters: () => ({
        resident: resident.length,
        evicted: evicted.length,
        residentSizeBytes: resident.length * 4,
      }),
      status: (object: number) =>
        resident.includes(object) ? 'resident' : evicted.includes(object) ? 'evicted' : 'untracked',
      gpu: {
        residencyRefCount: (object: number) => (resident.includes(object) ? 1 : 0),
        violations: [],
        objectHistory: () => [],
      },
    };
    return { manager, config } as never;
  };
  it('passes well-formed lists', () => {
    expect(check(fakeSide([0, 1], [2]), fakeSide([0, 1], [2]), config)).toBeNull();
  });
  it('names an object listed twice in the resident list', () => {
    expect(check(fakeSide([0, 1], [2]), fakeSide([0, 0], [2]), config)).toBe(
      'implementation: object 0 is twice in the resident list',
    );
  });
  it('names an object on both lists', () => {
    expect(check(fakeSide([0, 1], [2]), fakeSide([0, 1], [1]), config)).toBe(
      'implementation: object 1 is in both lists',
    );
  });
  it('names an object listed twice in the evicted list', () => {
    expect(check(fakeSide([0, 1], [2, 2]), fakeSide([0, 1], [2]), config)).toBe(
      'model: object 2 is twice in the evicted list',
    );
  });
});

describe('benchmark twin', () => {
  it('a config written before benchmarkTwin existed still loads, and builds no twin', () => {
    const config = residencyManagerSystem.parseConfig({ ...BASE }, 'old.json', '$.config');
    expect(config.benchmarkTwin).toBeUndefined();
    expect(residencyManagerSystem.createImpl(config, { probe: () => {} }).twin).toBeNull();
    const twinned = residencyManagerSystem.parseConfig(
      { ...BASE, benchmarkTwin: true },
      'new.json',
      '$.config',
    );
    expect(residencyManagerSystem.createImpl(twinned, { probe: () => {} }).twin).not.toBeNull();
  });
});
