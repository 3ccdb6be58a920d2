/**
 * The residency-manager system's invariants (src/systems/residency-manager.ts), in the order the
 * runner checks them: per side (through bothSides) or across the two sides.
 */
import type { Invariant } from '../harness/system.js';
import type { ViolationKind } from '../gpu/sim-gpu.js';
import type { ResidencyManager } from '../residency/residency-manager-types.js';
import { bothSides, sameNumbers } from './common.js';
import type { ManagerSide, ResidencyManagerSystemConfig } from './residency-manager-side.js';

/** The first violation the side's GPU reported of one of these kinds, or null. */
function gpuViolation(kinds: readonly ViolationKind[]): (s: ManagerSide) => string | null {
  return (s) => {
    const violations = s.manager.gpu.violations;
    for (let i = 0; i < violations.length; i++)
      if (kinds.includes(violations[i]!.kind)) return violations[i]!.message;
    return null;
  };
}

const refcountViolation = gpuViolation(['refcount']);
const evictInFlightViolation = gpuViolation(['evict-in-flight']);

function objectHistory(m: ResidencyManager, object: number): string {
  return `\n    history of object ${object}:\n      ${m.gpu.objectHistory(object).join('\n      ')}`;
}

/** Which list each object was found on while walking the lists (0: neither). */
const ON_RESIDENT = 1;
const ON_EVICTED = 2;
/** Reused by every bookkeeping check (one check runs at a time): per-object list marks. */
let onListScratch = new Uint8Array(16);

function bookkeeping(s: ManagerSide): string | null {
  // The device's own report names the call that broke the one-flip rule (with the object's
  // history); a refcount of 2 would otherwise be reported below as a status mismatch first.
  const refcount = refcountViolation(s);
  if (refcount !== null) return refcount;
  const m = s.manager;
  const resident = m.residentList();
  const evicted = m.evictedList();
  const counters = m.counters();
  if (resident.length !== counters.resident)
    return `resident list holds ${resident.length} objects, the counter says ${counters.resident}`;
  if (evicted.length !== counters.evicted)
    return `evicted list holds ${evicted.length} objects, the counter says ${counters.evicted}`;
  const sizes = s.config.objectSizesBytes;
  if (onListScratch.length < sizes.length) onListScratch = new Uint8Array(sizes.length);
  const onList = onListScratch;
  for (let object = 0; object < sizes.length; object++) onList[object] = 0;
  let residentBytes = 0;
  // Index loops: these lists are the model's arrays on one call and the implementation's views
  // on the next, and for...of over both allocated an iterator result per element.
  for (let i = 0; i < resident.length; i++) {
    const object = resident[i]!;
    if (onList[object] !== 0) return `object ${object} is twice in the resident list`;
    onList[object] = ON_RESIDENT;
    residentBytes += sizes[object]!;
  }
  if (residentBytes !== counters.residentSizeBytes)
    return `ResidentSize is ${counters.residentSizeBytes} bytes but the resident list holds ${residentBytes}`;
  for (let i = 0; i < evicted.length; i++) {
    const object = evicted[i]!;
    if (onList[object] !== 0)
      return `object ${object} is ${onList[object] === ON_RESIDENT ? 'in both lists' : 'twice in the evicted list'}`;
    onList[object] = ON_EVICTED;
  }
  for (let object = 0; object < sizes.length; object++) {
    const status = m.status(object);
    const refCount = m.gpu.residencyRefCount(object);
    if (status === 'resident' && refCount !== 1)
      return `object ${object} is RESIDENT in the bookkeeping, device refcount ${refCount}${objectHistory(m, object)}`;
    if (status !== 'resident' && refCount !== 0)
      return `object ${object} is ${status} in the bookkeeping, device refcount ${refCount}${objectHistory(m, object)}`;
    const listed = onList[object];
    if ((status === 'resident') !== (listed === ON_RESIDENT))
      return `object ${object} is ${status} but ${listed === ON_RESIDENT ? 'is' : 'is not'} in the resident list`;
    if ((status === 'evicted') !== (listed === ON_EVICTED))
      return `object ${object} is ${status} but ${listed === ON_EVICTED ? 'is' : 'is not'} in the evicted list`;
  }
  return null;
}

/**
 * One side's LRU sort (docs/spec/residency-library.md#rl-4, the ordering property): the resident list is non-decreasing in last sync
 * point from head to tail, and in last-used tick among objects that have been used. A never-used
 * object (newly tracked: sync point 0, tick 0, inserted at the head) is left out of the tick
 * comparison; an object referenced at generation 0 and tick 0 carries the same stamps, so it is
 * left out too. Whether the lists are the model's is lru-matches-model's question, not this one.
 */
function lruSorted(s: ManagerSide): string | null {
  const m = s.manager;
  const resident = m.residentList();
  let previousUsed = -1; // the last used object seen so far, or -1
  let usedBefore = 0; // its last-used tick
  let before = 0; // the previous object's sync point
  for (let i = 0; i < resident.length; i++) {
    const object = resident[i]!;
    const sync = m.lastSyncPoint(object);
    if (i > 0 && sync < before)
      return `resident list [${resident}] has object ${object} (sync point ${sync}) after object ${resident[i - 1]} (sync point ${before})`;
    before = sync;
    const used = m.lastUsedTimestamp(object);
    if (sync === 0 && used === 0) continue; // never used
    if (previousUsed >= 0 && used < usedBefore) {
      return `resident list [${resident}] has object ${object} (used at tick ${used}) after object ${previousUsed} (used at tick ${usedBefore})`;
    }
    previousUsed = object;
    usedBefore = used;
  }
  return null;
}

/**
 * Cross-side LRU state: the implementation's resident and evicted lists hold the model's objects
 * in the model's order, and every tracked object carries the model's last sync point and
 * last-used tick (the eviction observer of no-eviction-in-flight reads the implementation's own
 * stamps, so they must be the model's).
 */
function lruMatchesModel(model: ManagerSide, impl: ManagerSide): string | null {
  const expected = model.manager.residentList();
  const actual = impl.manager.residentList();
  if (!sameNumbers(expected, actual))
    return `the implementation's resident list is [${actual}], the model's [${expected}]`;
  const expectedEvicted = model.manager.evictedList();
  const actualEvicted = impl.manager.evictedList();
  if (!sameNumbers(expectedEvicted, actualEvicted))
    return `the implementation's evicted list is [${actualEvicted}], the model's [${expectedEvicted}]`;
  for (let object = 0; object < model.config.objectSizesBytes.length; object++) {
    if (model.manager.status(object) === 'untracked') continue;
    const expectedSync = model.manager.lastSyncPoint(object);
    const actualSync = impl.manager.lastSyncPoint(object);
    if (expectedSync !== actualSync)
      return `object ${object} has last sync point ${actualSync} in the implementation, ${expectedSync} in the model`;
    const expectedUsed = model.manager.lastUsedTimestamp(object);
    const actualUsed = impl.manager.lastUsedTimestamp(object);
    if (expectedUsed !== actualUsed)
      return `object ${object} was last used at tick ${actualUsed} in the implementation, ${expectedUsed} in the model`;
  }
  return null;
}

function generations(s: ManagerSide): string | null {
  const current = s.manager.currentGeneration();
  if (current < s.highestGeneration)
    return `the current generation went back from ${s.highestGeneration} to ${current}`;
  const inFlight = s.manager.syncPointGenerations();
  for (let i = 0; i < inFlight.length; i++) {
    if (i > 0 && inFlight[i]! <= inFlight[i - 1]!)
      return `in-flight sync points are not strictly increasing: [${inFlight}]`;
    if (inFlight[i]! >= current)
      return `sync point ${inFlight[i]} is not below the current generation ${current}`;
  }
  return null;
}

export const invariants: Invariant<ManagerSide, ResidencyManagerSystemConfig>[] = [
  {
    // First: a work ring that overruns corrupts the LRU at the same step; this names the cause.
    name: 'paging-latency',
    description: 'paging work queued and not yet dequeued never exceeds MaxLatency',
    check: bothSides((s) => {
      const queued = s.manager.queuedWorks();
      return queued <= s.config.maxLatency
        ? null
        : `${queued} paging works queued with MaxLatency ${s.config.maxLatency}`;
    }),
  },
  {
    name: 'residency-before-execution',
    description:
      'every object a list touches is device-resident and its queued make-resident has reached the paging fence when the GPU runs the list; CPU waits complete',
    check: bothSides(gpuViolation(['touch-not-resident', 'touch-before-paging', 'deadlock'])),
  },
  {
    name: 'no-eviction-in-flight',
    description:
      'no object is evicted while its last sync point is incomplete, nor while a submitted list that may run (not behind an unsatisfied paging wait) or has not retired references it',
    check: bothSides((s) => s.unsafeEvictions[0] ?? evictInFlightViolation(s)),
  },
  {
    name: 'bookkeeping-matches-device',
    description:
      'status equals device residency (refcount 1 or 0: one device call per status flip), lists match statuses, counters and ResidentSize match the lists',
    check: bothSides(bookkeeping),
  },
  {
    name: 'lru-sorted',
    description:
      'on each side, the resident list is non-decreasing from head to tail in last sync point, and in last-used tick among objects that have been used',
    check: bothSides(lruSorted),
  },
  {
    name: 'lru-matches-model',
    description:
      "the implementation's resident and evicted lists hold the model's objects in the model's order, and every tracked object has the model's last sync point and last-used tick",
    check: lruMatchesModel,
  },
  {
    name: 'generations-increasing',
    description:
      'the current generation never goes back; in-flight sync points are strictly increasing and below it',
    check: bothSides(generations),
  },
  {
    name: 'within-budget',
    description:
      'a budgeted make-resident batch never takes the usage over the budget (only the reported fallback may)',
    check: bothSides(gpuViolation(['over-budget'])),
  },
  {
    name: 'benchmark-mode-agrees',
    description:
      "with benchmarkTwin, a twin of the implementation in the benchmark's unchecked mode (no judge, no events), fed the same commands, gives the same answers and keeps the same LRU lists, generation, counters, sync points, queued works, per-object stamps, device refcounts, fences and usage",
    check: (_model, impl) => impl.twinDisagreement,
  },
  {
    name: 'answers-match-model',
    description:
      "the implementation's public answers are the model's: current generation, in-flight sync points, first uncompleted generation, queued works and the LRU counters; its device's paging fence, queue backlogs and segment usage are the model's device's",
    check: (model, impl) => {
      const m = model.manager;
      const i = impl.manager;
      if (i.currentGeneration() !== m.currentGeneration())
        return `currentGeneration() is ${i.currentGeneration()}, the model's ${m.currentGeneration()}`;
      const points = i.syncPointGenerations();
      const expectedPoints = m.syncPointGenerations();
      if (!sameNumbers(points, expectedPoints))
        return `syncPointGenerations() is [${points}], the model's [${expectedPoints}]`;
      if (i.firstUncompletedGeneration() !== m.firstUncompletedGeneration()) {
        return `firstUncompletedGeneration() is ${i.firstUncompletedGeneration()}, the model's ${m.firstUncompletedGeneration()}`;
      }
      if (i.queuedWorks() !== m.queuedWorks())
        return `queuedWorks() is ${i.queuedWorks()}, the model's ${m.queuedWorks()}`;
      const counters = i.counters();
      const expected = m.counters();
      if (
        counters.resident !== expected.resident ||
        counters.evicted !== expected.evicted ||
        counters.residentSizeBytes !== expected.residentSizeBytes
      ) {
        return `counters() is ${JSON.stringify(counters)}, the model's ${JSON.stringify(expected)}`;
      }
      // The two devices answer alike too (their calls are compared in the observations): paging
      // fence, queue backlogs and each segment's usage.
      if (i.gpu.pagingFenceCompleted !== m.gpu.pagingFenceCompleted)
        return `paging fence at ${i.gpu.pagingFenceCompleted}, the model's device at ${m.gpu.pagingFenceCompleted}`;
      for (let queue = 0; queue < impl.config.queueCount; queue++) {
        if (i.gpu.pendingItems(queue) !== m.gpu.pendingItems(queue))
          return `queue ${queue} holds ${i.gpu.pendingItems(queue)} items, the model's device ${m.gpu.pendingItems(queue)}`;
      }
      const local = i.gpu.localUsageBytes;
      const nonLocal = i.gpu.nonLocalUsageBytes;
      if (local !== m.gpu.localUsageBytes || nonLocal !== m.gpu.nonLocalUsageBytes) {
        return `device usage local ${local} + non-local ${nonLocal}, the model's device ${m.gpu.localUsageBytes} + ${m.gpu.nonLocalUsageBytes}`;
      }
      return null;
    },
  },
];
