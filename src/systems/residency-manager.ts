/**
 * System `residency-manager`: the LRU residency manager over a simulated GPU
 * (residency-library.md §4-§8, §10, §11; Unreal's settings from the seed
 * ue5-dx12-residency-set, sections 2, 5, 6, 8, 9).
 *
 * Each side is a manager (model or implementation) with its own simulated GPU and set pool.
 * Commands are plain data; handles resolve modulo what exists (4 residency sets created up
 * front, object ids modulo the object count, queues modulo the queue count), so every
 * subsequence of a program is a program. Every object is tracked at the start, in id order;
 * `untrack`/`track` end and begin tracking again.
 *
 * The observation of every command holds its result, the device calls and CPU waits it caused
 * (from the GPU's log: which objects, in which calls, in which order) and the manager's events,
 * so model and implementation must agree decision for decision.
 *
 * A share of configs (`benchmarkTwin`) gives the implementation side a twin built in the
 * benchmark's unchecked mode: a debug/release pair. The twin runs every command too, and its
 * answers and state must equal the checked implementation's: a behaviour that exists only when
 * nothing is checking (a side effect kept inside a debug-only branch, an unchecked path of the
 * simulated GPU that crashes) would otherwise ship unseen, and the benchmark would measure it.
 */
import fc from 'fast-check';
import type { Json, JsonObject } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Bool, Int, Nat, OneOf, Strict, Type, type Static } from '../harness/schema.js';
import { ResidencyManagerModel } from '../../models/residency-manager.js';
import { ResidencyManagerImpl, type ManagerOptions } from '../residency/residency-manager.js';
import { DEVICE_CALL_KINDS, type ViolationKind } from '../gpu/sim-gpu.js';
import type { ResidencyManager } from '../residency/residency-manager-types.js';
import { bothSides, pickLive, sameNumbers } from './common.js';
import { managerVisual } from './visuals.js';

export const ResidencyManagerConfigSchema = Strict({
  objectSizesBytes: Type.Array(Nat(), { description: 'size of each pageable object; object ids are the indices; at least one' }),
  queueCount: Nat({ description: 'command queues, at least 1' }),
  mode: OneOf(['inline', 'async'], {
    description: "'inline': Device3 present, paging on the submitting thread; 'async': no Device3, a paging worker the harness steps",
  }),
  startEvicted: Bool({ description: "objects start EVICTED (Unreal: CREATE_NOT_RESIDENT) or RESIDENT (the library's default)" }),
  maxLatency: Nat({ description: "MaxLatency, at least 1 (0 hangs the library; Unreal's RESIDENCY_PIPELINE_DEPTH is 6)" }),
  ticksPerSecond: Nat({ description: 'simulated clock ticks per second, at least 1' }),
  localBudgetBytes: Nat({ description: 'local segment budget the device reports' }),
  nonLocalBudgetBytes: Nat({ description: 'non-local segment budget the device reports' }),
  unrealBudgetCap: Bool({ description: "Unreal's LocalMemoryBudgetLimit: the local budget is min(reported, limit), 0 when backgrounded" }),
  debugBudgetBytes: Int({ description: 'D3D12.ResidencyDebugBudgetMB in bytes; -1 is off; only with unrealBudgetCap' }),
  slotCount: Nat({ description: 'slots in the residency-set pool, 1..4096' }),
  initialCapacity: Nat({ description: "entries of a set's first storage allocation, at least 2" }),
  // Optional: files written before it existed lack it (read as false).
  benchmarkTwin: Type.Optional(
    Bool({
      description:
        "the implementation side also drives a twin built in the benchmark's unchecked mode (no judge, no events) with the same commands: its answers and state must agree ('benchmark-mode-agrees'); absent means false",
    }),
  ),
});
export type ResidencyManagerSystemConfig = Static<typeof ResidencyManagerConfigSchema>;

/** Residency sets each side creates up front; set handles are taken modulo this. */
export const SET_COUNT = 4;

export interface ManagerSide {
  readonly manager: ResidencyManager;
  readonly config: ResidencyManagerSystemConfig;
  readonly env: RunEnv;
  readonly setIds: number[];
  /**
   * Highest generation observed before the current command (generations never go back).
   * Updated by `around` before it runs the command; the invariant only reads it.
   */
  highestGeneration: number;
  /** Evictions of objects whose last sync point was not complete when the Evict was issued. */
  readonly unsafeEvictions: string[];
  /** The implementation side's unchecked twin (configs with `benchmarkTwin`), else null. */
  readonly twin: ManagerSide | null;
  /** The first step at which the twin disagreed, described; null while it agrees. */
  twinDisagreement: string | null;
}

export const PROBES = [
  'split',
  'aged-trim',
  'pressure-trim',
  'wait-sync-point',
  'forced-fallback',
  'paging-queue-full',
  'stuck-set',
  'g-minus-one',
  'make-resident-failed',
  'evict-failed',
  'resident-moved-to-non-local',
  'execute-with-non-local-usage',
  'sync-point-ring-grown',
] as const;

/** Sync points the implementation's ring holds before it first grows (src/residency/residency-manager.ts). */
const INITIAL_SYNC_POINTS = 16;

/**
 * The implementation side: `make` builds a manager with the given options (the shipped class or a
 * mutant of it); configs with `benchmarkTwin` get a second one in unchecked mode as its twin.
 */
export function implementationSide(make: (options: ManagerOptions) => ResidencyManager, config: ResidencyManagerSystemConfig, env: RunEnv): ManagerSide {
  const twin = config.benchmarkTwin === true ? managerSide(make({ checked: false }), config, env) : null;
  return managerSide(make({}), config, env, twin);
}

/** Wraps a manager as a side: creates the sets and tracks every object in id order. */
export function managerSide(manager: ResidencyManager, config: ResidencyManagerSystemConfig, env: RunEnv, twin: ManagerSide | null = null): ManagerSide {
  const setIds: number[] = [];
  for (let i = 0; i < SET_COUNT; i++) setIds.push(manager.sets.createSet());
  for (let object = 0; object < manager.config.objectSizesBytes.length; object++) manager.beginTracking(object);
  manager.drainEvents();
  manager.gpu.drainCalls();
  const side: ManagerSide = { manager, config, env, setIds, highestGeneration: 0, unsafeEvictions: [], twin, twinDisagreement: null };
  manager.gpu.evictObserver = (objects) => {
    const firstUncompleted = manager.firstUncompletedGeneration();
    if (firstUncompleted < 0) return;
    for (const object of objects) {
      const lastSync = manager.lastSyncPoint(object);
      if (lastSync >= firstUncompleted) {
        side.unsafeEvictions.push(`Evict of object ${object} whose last sync point ${lastSync} is not complete (the first uncompleted is ${firstUncompleted})`);
      }
    }
  };
  return side;
}

function objectOf(s: ManagerSide, obj: number): number {
  return obj % s.config.objectSizesBytes.length;
}
function setOf(s: ManagerSide, handle: number): number {
  return pickLive(s.setIds, handle)!; // SET_COUNT sets exist from the start, so this always resolves
}
function queueOf(s: ManagerSide, queue: number): number {
  return queue % s.config.queueCount;
}

function insertChecked(s: ManagerSide, set: number, object: number): boolean {
  const inserted = s.manager.sets.insert(set, object);
  if (s.manager.sets.isOutOfMemory(set)) s.env.probe('stuck-set');
  return inserted;
}

/** Set handles: one of the SET_COUNT sets created up front. */
const setHandle = fc.nat({ max: SET_COUNT - 1 });
/** Object ids: one of the configured objects. */
const objectArb = (config: ResidencyManagerSystemConfig): fc.Arbitrary<number> => fc.nat({ max: config.objectSizesBytes.length - 1 });
const queueArb = (config: ResidencyManagerSystemConfig): fc.Arbitrary<number> => fc.nat({ max: config.queueCount - 1 });
const op = opsFor<ResidencyManagerSystemConfig, ManagerSide>();

const ops = {
  track: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: (config, op) => objectArb(config).map((obj) => ({ op, obj })),
    apply: (s, command) => {
      s.manager.beginTracking(objectOf(s, command.obj));
      return {};
    },
  }),
  untrack: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: (config, op) => objectArb(config).map((obj) => ({ op, obj })),
    apply: (s, command) => {
      s.manager.endTracking(objectOf(s, command.obj));
      return {};
    },
  }),
  open: op({
    fields: { set: Nat() },
    weight: 2,
    arbitrary: (_config, op) => setHandle.map((set) => ({ op, set })),
    apply: (s, command) => ({ hr: s.manager.sets.open(setOf(s, command.set)) }),
  }),
  insert: op({
    fields: { set: Nat(), obj: Nat() },
    weight: 4,
    arbitrary: (config, op) => fc.tuple(setHandle, objectArb(config)).map(([set, obj]) => ({ op, set, obj })),
    apply: (s, command) => ({ inserted: insertChecked(s, setOf(s, command.set), objectOf(s, command.obj)) }),
  }),
  close: op({
    fields: { set: Nat() },
    weight: 2,
    arbitrary: (_config, op) => setHandle.map((set) => ({ op, set })),
    apply: (s, command) => ({ hr: s.manager.sets.close(setOf(s, command.set)) }),
  }),
  record: op({
    fields: { set: Nat(), objs: Type.Array(Nat()) },
    weight: 10,
    arbitrary: (config, op) =>
      fc
        .tuple(setHandle, fc.array(objectArb(config), { minLength: 1, maxLength: config.objectSizesBytes.length + 1 }))
        .map(([set, objs]) => ({ op, set, objs })),
    apply: (s, command): Json => {
      const { sets } = s.manager;
      const set = setOf(s, command.set);
      const opened = sets.open(set);
      if (opened !== 'S_OK') return { open: opened };
      let inserted = 0;
      for (const obj of command.objs) if (insertChecked(s, set, objectOf(s, obj))) inserted++;
      return { open: opened, inserted, close: sets.close(set) };
    },
  }),
  execute: op({
    fields: { queue: Nat(), sets: Type.Array(Type.Union([Nat(), Type.Null()])) },
    weight: 12,
    arbitrary: (config, op) =>
      fc
        .tuple(queueArb(config), fc.array(fc.option(setHandle, { freq: 8, nil: null }), { minLength: 0, maxLength: 4 }))
        .map(([queue, sets]) => ({ op, queue, sets })),
    apply: (s, command) => {
      const { manager } = s;
      const ids = command.sets.map((handle) => (handle === null ? null : setOf(s, handle)));
      // Each list references exactly its set's objects (a list without a set references none).
      const lists = ids.map((id) => (id === null ? [] : manager.sets.contents(id)));
      if (manager.gpu.nonLocalUsageBytes > 0) s.env.probe('execute-with-non-local-usage');
      const hr = manager.executeCommandLists(queueOf(s, command.queue), lists, ids);
      // Growth path: more sync points in flight than the implementation's first ring holds.
      if (manager.syncPointGenerations().length > INITIAL_SYNC_POINTS) s.env.probe('sync-point-ring-grown');
      return { hr };
    },
  }),
  mapTiles: op({
    fields: { queue: Nat(), set: Nat() },
    weight: 1,
    arbitrary: (config, op) => fc.tuple(queueArb(config), setHandle).map(([queue, set]) => ({ op, queue, set })),
    apply: (s, command) => {
      const { manager } = s;
      const queue = queueOf(s, command.queue);
      const set = setOf(s, command.set);
      const hr = manager.makeResidentForQueue(queue, set);
      if (hr === 'S_OK') {
        // UpdateTileMappings touches the new heaps on the queue, then the caller signals.
        manager.gpu.executeCommandLists(queue, [manager.sets.contents(set)]);
        manager.signalFence(queue);
      }
      return { hr };
    },
  }),
  signal: op({
    fields: { queue: Nat() },
    weight: 1,
    arbitrary: (config, op) => queueArb(config).map((queue) => ({ op, queue })),
    apply: (s, command) => ({ value: s.manager.signalFence(queueOf(s, command.queue)) }),
  }),
  gpuProgress: op({
    fields: { queue: Nat(), steps: Nat() },
    weight: 10,
    arbitrary: (config, op) => fc.tuple(queueArb(config), fc.integer({ min: 1, max: 12 })).map(([queue, steps]) => ({ op, queue, steps })),
    apply: (s, command) => ({ ran: s.manager.gpu.progress(queueOf(s, command.queue), command.steps) }),
  }),
  pagingProgress: op({
    fields: { steps: Nat() },
    // Inline mode only: the async worker CPU-signals the paging fence itself.
    weight: (config) => (config.mode === 'inline' ? 4 : 0),
    arbitrary: (_config, op) => fc.integer({ min: 1, max: 4 }).map((steps) => ({ op, steps })),
    apply: (s, command) => ({ ran: s.manager.gpu.pagingProgress(command.steps) }),
  }),
  pagingWorkerStep: op({
    fields: {},
    // Async mode only: inline mode has no paging worker.
    weight: (config) => (config.mode === 'inline' ? 0 : 6),
    apply: (s) => ({ ran: s.manager.pagingWorkerStep() }),
  }),
  tick: op({
    fields: { ticks: Nat() },
    weight: 5,
    arbitrary: (config, op) =>
      fc
        .oneof(fc.integer({ min: 0, max: 2 * config.ticksPerSecond }), fc.integer({ min: 0, max: 70 * config.ticksPerSecond }))
        .map((ticks) => ({ op, ticks })),
    apply: (s, command) => {
      s.manager.gpu.advanceClock(command.ticks);
      return {};
    },
  }),
  setBudget: op({
    fields: { localBytes: Nat(), nonLocalBytes: Nat() },
    weight: 2,
    arbitrary: (config, op) => {
      const totalBytes = config.objectSizesBytes.reduce((a, b) => a + b, 0);
      return fc
        .tuple(fc.oneof(fc.constant(0), fc.integer({ min: 20, max: 150 })), fc.integer({ min: 0, max: 25 }))
        .map(([localPercent, nonLocalPercent]) => ({ op,
          localBytes: Math.floor((totalBytes * localPercent) / 100),
          nonLocalBytes: Math.floor((totalBytes * nonLocalPercent) / 100),
        }));
    },
    apply: (s, command) => {
      s.manager.gpu.setBudgets(command.localBytes, command.nonLocalBytes);
      return {};
    },
  }),
  background: op({
    fields: { on: Bool() },
    // Only Unreal's budget cap reads the background state.
    weight: (config) => (config.unrealBudgetCap ? 1 : 0),
    arbitrary: (_config, op) => fc.boolean().map((on) => ({ op, on })),
    apply: (s, command) => {
      s.manager.setBackground(command.on);
      return {};
    },
  }),
  failNext: op({
    fields: { call: OneOf(DEVICE_CALL_KINDS) },
    weight: 1,
    arbitrary: (_config, op) => fc.constantFrom(...DEVICE_CALL_KINDS).map((call) => ({ op, call })),
    apply: (s, command) => {
      s.manager.gpu.failNext(command.call);
      return {};
    },
  }),
  failNextGrowth: op({
    fields: {},
    weight: 1,
    apply: (s) => {
      s.manager.sets.failNextGrowth();
      return {};
    },
  }),
  relocate: op({
    fields: { obj: Nat(), nonLocal: Bool() },
    // The OS moves an allocation between the segments (demotion to system memory and back): the
    // usage the device reports moves with it, so usage, budgets and trims that confuse the two
    // segments decide differently from the model.
    weight: 2,
    arbitrary: (config, op) => fc.tuple(objectArb(config), fc.boolean()).map(([obj, nonLocal]) => ({ op, obj, nonLocal })),
    apply: (s, command) => {
      const object = objectOf(s, command.obj);
      const moved = s.manager.gpu.moveToSegment(object, command.nonLocal);
      if (moved && s.manager.gpu.isNonLocal(object) && s.manager.gpu.isResident(object)) s.env.probe('resident-moved-to-non-local');
      return { moved };
    },
  }),
};

/** An op's observation, which is an object for every op here: `around` adds the calls and events to it. */
function observationFields(result: Json): JsonObject {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new Error(`residency-manager: an op observed ${JSON.stringify(result)}, not an object`);
  }
  return result;
}

function gpuViolation(kinds: readonly ViolationKind[]): (s: ManagerSide) => string | null {
  return (s) => {
    const found = s.manager.gpu.violations.find((violation) => kinds.includes(violation.kind));
    return found === undefined ? null : found.message;
  };
}

const refcountViolation = gpuViolation(['refcount']);

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
  if (resident.length !== counters.resident) return `resident list holds ${resident.length} objects, the counter says ${counters.resident}`;
  if (evicted.length !== counters.evicted) return `evicted list holds ${evicted.length} objects, the counter says ${counters.evicted}`;
  const sizes = s.config.objectSizesBytes;
  if (onListScratch.length < sizes.length) onListScratch = new Uint8Array(sizes.length);
  const onList = onListScratch;
  onList.fill(0, 0, sizes.length);
  let residentBytes = 0;
  for (const object of resident) {
    if (onList[object] !== 0) return `object ${object} is twice in the resident list`;
    onList[object] = ON_RESIDENT;
    residentBytes += sizes[object]!;
  }
  if (residentBytes !== counters.residentSizeBytes) return `ResidentSize is ${counters.residentSizeBytes} bytes but the resident list holds ${residentBytes}`;
  for (const object of evicted) {
    if (onList[object] !== 0) return `object ${object} is ${onList[object] === ON_RESIDENT ? 'in both lists' : 'twice in the evicted list'}`;
    onList[object] = ON_EVICTED;
  }
  for (let object = 0; object < sizes.length; object++) {
    const status = m.status(object);
    const refCount = m.gpu.residencyRefCount(object);
    if (status === 'resident' && refCount !== 1) return `object ${object} is RESIDENT in the bookkeeping, device refcount ${refCount}${objectHistory(m, object)}`;
    if (status !== 'resident' && refCount !== 0) return `object ${object} is ${status} in the bookkeeping, device refcount ${refCount}${objectHistory(m, object)}`;
    const listed = onList[object];
    if ((status === 'resident') !== (listed === ON_RESIDENT)) return `object ${object} is ${status} but ${listed === ON_RESIDENT ? 'is' : 'is not'} in the resident list`;
    if ((status === 'evicted') !== (listed === ON_EVICTED)) return `object ${object} is ${status} but ${listed === ON_EVICTED ? 'is' : 'is not'} in the evicted list`;
  }
  return null;
}

/**
 * One side's LRU sort (§4 ordering property): the resident list is non-decreasing in last sync
 * point from head to tail, and in last-used tick among objects that have been used. A never-used
 * object (newly tracked: sync point 0, tick 0, inserted at the head) is left out of the tick
 * comparison; an object referenced at generation 0 and tick 0 carries the same stamps, so it is
 * left out too. Whether the lists are the model's is lru-matches-model's question, not this one.
 */
function lruSorted(s: ManagerSide): string | null {
  const m = s.manager;
  const resident = m.residentList();
  let previousUsed = -1; // the last used object seen so far, or -1
  for (let i = 0; i < resident.length; i++) {
    const object = resident[i]!;
    const sync = m.lastSyncPoint(object);
    if (i > 0) {
      const before = m.lastSyncPoint(resident[i - 1]!);
      if (sync < before) return `resident list [${resident}] has object ${object} (sync point ${sync}) after object ${resident[i - 1]} (sync point ${before})`;
    }
    const used = m.lastUsedTimestamp(object);
    if (sync === 0 && used === 0) continue; // never used
    if (previousUsed >= 0) {
      const usedBefore = m.lastUsedTimestamp(previousUsed);
      if (used < usedBefore) return `resident list [${resident}] has object ${object} (used at tick ${used}) after object ${previousUsed} (used at tick ${usedBefore})`;
    }
    previousUsed = object;
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
  if (!sameNumbers(expected, actual)) return `the implementation's resident list is [${actual}], the model's [${expected}]`;
  const expectedEvicted = model.manager.evictedList();
  const actualEvicted = impl.manager.evictedList();
  if (!sameNumbers(expectedEvicted, actualEvicted)) return `the implementation's evicted list is [${actualEvicted}], the model's [${expectedEvicted}]`;
  for (let object = 0; object < model.config.objectSizesBytes.length; object++) {
    if (model.manager.status(object) === 'untracked') continue;
    const expectedSync = model.manager.lastSyncPoint(object);
    const actualSync = impl.manager.lastSyncPoint(object);
    if (expectedSync !== actualSync) return `object ${object} has last sync point ${actualSync} in the implementation, ${expectedSync} in the model`;
    const expectedUsed = model.manager.lastUsedTimestamp(object);
    const actualUsed = impl.manager.lastUsedTimestamp(object);
    if (expectedUsed !== actualUsed) return `object ${object} was last used at tick ${actualUsed} in the implementation, ${expectedUsed} in the model`;
  }
  return null;
}

function generations(s: ManagerSide): string | null {
  const current = s.manager.currentGeneration();
  if (current < s.highestGeneration) return `the current generation went back from ${s.highestGeneration} to ${current}`;
  const inFlight = s.manager.syncPointGenerations();
  for (let i = 0; i < inFlight.length; i++) {
    if (i > 0 && inFlight[i]! <= inFlight[i - 1]!) return `in-flight sync points are not strictly increasing: [${inFlight}]`;
    if (inFlight[i]! >= current) return `sync point ${inFlight[i]} is not below the current generation ${current}`;
  }
  return null;
}

/** Whether a generated config gets the benchmark twin: 1 in 8, by a mix of its fields. */
function twinShare(config: ResidencyManagerSystemConfig): boolean {
  let mix = config.maxLatency * 31 + config.ticksPerSecond * 7 + config.localBudgetBytes;
  for (const size of config.objectSizesBytes) mix = (mix * 17 + size) % 1_000_003;
  return mix % 8 === 0;
}

/**
 * Runs `command` on the twin and compares it with what the checked side just did: the answer
 * (or the error), then the state a benchmark's figures depend on. Returns the disagreement.
 */
function twinStep<Cmd extends { readonly op: string }>(
  checked: ManagerSide,
  twin: ManagerSide,
  command: Cmd,
  dispatch: (side: ManagerSide, command: Cmd) => Json,
  result: Json,
  failure: unknown,
): string | null {
  let twinResult: Json = null;
  let twinFailure: unknown = undefined;
  try {
    twinResult = dispatch(twin, command);
  } catch (error) {
    twinFailure = error;
  }
  twin.manager.drainEvents();
  twin.manager.gpu.drainCalls();
  const what = `${command.op} ${JSON.stringify(command)}`;
  if ((failure === undefined) !== (twinFailure === undefined) || (failure !== undefined && String(failure) !== String(twinFailure))) {
    return `${what}: the checked implementation ${failure === undefined ? 'answered' : `threw ${String(failure)}`}, the unchecked twin ${twinFailure === undefined ? 'answered' : `threw ${String(twinFailure)}`}`;
  }
  if (failure === undefined && JSON.stringify(result) !== JSON.stringify(twinResult)) {
    return `${what}: the checked implementation answered ${JSON.stringify(result)}, the unchecked twin ${JSON.stringify(twinResult)}`;
  }
  const a = checked.manager;
  const b = twin.manager;
  if (!sameNumbers(a.residentList(), b.residentList())) return `after ${what}: resident list (LRU order) ${JSON.stringify(a.residentList())}, the unchecked twin's ${JSON.stringify(b.residentList())}`;
  if (!sameNumbers(a.evictedList(), b.evictedList())) return `after ${what}: evicted list ${JSON.stringify(a.evictedList())}, the unchecked twin's ${JSON.stringify(b.evictedList())}`;
  if (a.currentGeneration() !== b.currentGeneration()) return `after ${what}: generation ${a.currentGeneration()}, the unchecked twin's ${b.currentGeneration()}`;
  const countersA = a.counters();
  const countersB = b.counters();
  if (countersA.resident !== countersB.resident || countersA.evicted !== countersB.evicted || countersA.residentSizeBytes !== countersB.residentSizeBytes) {
    return `after ${what}: counters() ${JSON.stringify(countersA)}, the unchecked twin's ${JSON.stringify(countersB)}`;
  }
  if (!sameNumbers(a.syncPointGenerations(), b.syncPointGenerations()) || a.firstUncompletedGeneration() !== b.firstUncompletedGeneration() || a.queuedWorks() !== b.queuedWorks()) {
    return (
      `after ${what}: sync points [${a.syncPointGenerations().join(',')}], first uncompleted ${a.firstUncompletedGeneration()}, queued works ${a.queuedWorks()}; ` +
      `the unchecked twin's [${b.syncPointGenerations().join(',')}], ${b.firstUncompletedGeneration()}, ${b.queuedWorks()}`
    );
  }
  const gpuA = a.gpu;
  const gpuB = b.gpu;
  if (gpuA.pagingFenceCompleted !== gpuB.pagingFenceCompleted) return `after ${what}: paging fence ${gpuA.pagingFenceCompleted}, the unchecked twin's ${gpuB.pagingFenceCompleted}`;
  for (let queue = 0; queue < checked.config.queueCount; queue++) {
    if (gpuA.fenceCompleted(queue) !== gpuB.fenceCompleted(queue) || gpuA.pendingItems(queue) !== gpuB.pendingItems(queue)) {
      return `after ${what}: queue ${queue} at fence ${gpuA.fenceCompleted(queue)} with ${gpuA.pendingItems(queue)} items, the unchecked twin's at ${gpuB.fenceCompleted(queue)} with ${gpuB.pendingItems(queue)}`;
    }
  }
  if (gpuA.localUsageBytes !== gpuB.localUsageBytes || gpuA.nonLocalUsageBytes !== gpuB.nonLocalUsageBytes) {
    return `after ${what}: device usage ${gpuA.localUsageBytes} + ${gpuA.nonLocalUsageBytes}, the unchecked twin's ${gpuB.localUsageBytes} + ${gpuB.nonLocalUsageBytes}`;
  }
  for (let object = 0; object < checked.config.objectSizesBytes.length; object++) {
    if (a.lastSyncPoint(object) !== b.lastSyncPoint(object) || a.lastUsedTimestamp(object) !== b.lastUsedTimestamp(object) || gpuA.residencyRefCount(object) !== gpuB.residencyRefCount(object)) {
      return (
        `after ${what}: object ${object} has sync point ${a.lastSyncPoint(object)}, last use ${a.lastUsedTimestamp(object)}, device refcount ${gpuA.residencyRefCount(object)}; ` +
        `the unchecked twin's ${b.lastSyncPoint(object)}, ${b.lastUsedTimestamp(object)}, ${gpuB.residencyRefCount(object)}`
      );
    }
  }
  return null;
}

const invariants: Invariant<ManagerSide, ResidencyManagerSystemConfig>[] = [
  {
    // First: a work ring that overruns corrupts the LRU at the same step; this names the cause.
    name: 'paging-latency',
    description: 'paging work queued and not yet dequeued never exceeds MaxLatency',
    check: bothSides((s) => {
      const queued = s.manager.queuedWorks();
      return queued <= s.config.maxLatency ? null : `${queued} paging works queued with MaxLatency ${s.config.maxLatency}`;
    }),
  },
  {
    name: 'residency-before-execution',
    description: 'every object a list touches is device-resident and its queued make-resident has reached the paging fence when the GPU runs the list; CPU waits complete',
    check: bothSides(gpuViolation(['touch-not-resident', 'touch-before-paging', 'deadlock'])),
  },
  {
    name: 'no-eviction-in-flight',
    description:
      'no object is evicted while its last sync point is incomplete, nor while a submitted list that may run (not behind an unsatisfied paging wait) or has not retired references it',
    check: bothSides((s) => s.unsafeEvictions[0] ?? gpuViolation(['evict-in-flight'])(s)),
  },
  {
    name: 'bookkeeping-matches-device',
    description: 'status equals device residency (refcount 1 or 0: one device call per status flip), lists match statuses, counters and ResidentSize match the lists',
    check: bothSides(bookkeeping),
  },
  {
    name: 'lru-sorted',
    description: 'on each side, the resident list is non-decreasing from head to tail in last sync point, and in last-used tick among objects that have been used',
    check: bothSides(lruSorted),
  },
  {
    name: 'lru-matches-model',
    description: "the implementation's resident and evicted lists hold the model's objects in the model's order, and every tracked object has the model's last sync point and last-used tick",
    check: lruMatchesModel,
  },
  {
    name: 'generations-increasing',
    description: 'the current generation never goes back; in-flight sync points are strictly increasing and below it',
    check: bothSides(generations),
  },
  {
    name: 'within-budget',
    description: 'a budgeted make-resident batch never takes the usage over the budget (only the reported fallback may)',
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
      if (i.currentGeneration() !== m.currentGeneration()) return `currentGeneration() is ${i.currentGeneration()}, the model's ${m.currentGeneration()}`;
      const points = i.syncPointGenerations();
      const expectedPoints = m.syncPointGenerations();
      if (!sameNumbers(points, expectedPoints)) return `syncPointGenerations() is [${points}], the model's [${expectedPoints}]`;
      if (i.firstUncompletedGeneration() !== m.firstUncompletedGeneration()) {
        return `firstUncompletedGeneration() is ${i.firstUncompletedGeneration()}, the model's ${m.firstUncompletedGeneration()}`;
      }
      if (i.queuedWorks() !== m.queuedWorks()) return `queuedWorks() is ${i.queuedWorks()}, the model's ${m.queuedWorks()}`;
      const counters = i.counters();
      const expected = m.counters();
      if (counters.resident !== expected.resident || counters.evicted !== expected.evicted || counters.residentSizeBytes !== expected.residentSizeBytes) {
        return `counters() is ${JSON.stringify(counters)}, the model's ${JSON.stringify(expected)}`;
      }
      // The two devices answer alike too (their calls are compared in the observations): paging
      // fence, queue backlogs and each segment's usage.
      if (i.gpu.pagingFenceCompleted !== m.gpu.pagingFenceCompleted) return `paging fence at ${i.gpu.pagingFenceCompleted}, the model's device at ${m.gpu.pagingFenceCompleted}`;
      for (let queue = 0; queue < impl.config.queueCount; queue++) {
        if (i.gpu.pendingItems(queue) !== m.gpu.pendingItems(queue)) return `queue ${queue} holds ${i.gpu.pendingItems(queue)} items, the model's device ${m.gpu.pendingItems(queue)}`;
      }
      const local = i.gpu.localMemory().usageBytes;
      const nonLocal = i.gpu.nonLocalMemory().usageBytes;
      if (local !== m.gpu.localMemory().usageBytes || nonLocal !== m.gpu.nonLocalMemory().usageBytes) {
        return `device usage local ${local} + non-local ${nonLocal}, the model's device ${m.gpu.localMemory().usageBytes} + ${m.gpu.nonLocalMemory().usageBytes}`;
      }
      return null;
    },
  },
];

export const residencyManagerSystem = defineSystem({
  name: 'residency-manager',
  summary: 'LRU residency manager over a simulated GPU: paging before execution, trims, sync points, split, both execution modes',
  config: {
    schema: ResidencyManagerConfigSchema,
    check: (c) => {
      if (c.objectSizesBytes.length < 1) return 'objectSizesBytes must name at least one object';
      if (c.queueCount < 1) return `queueCount must be >= 1, got ${c.queueCount}`;
      if (c.maxLatency < 1) return 'maxLatency must be >= 1 (0 hangs the first submission)';
      if (c.ticksPerSecond < 1) return 'ticksPerSecond must be >= 1';
      if (c.slotCount < 1 || c.slotCount > 4096) return `slotCount must be 1..4096, got ${c.slotCount}`;
      if (c.initialCapacity < 2) return `initialCapacity must be >= 2, got ${c.initialCapacity}`;
      return null;
    },
    arbitrary: () =>
      fc
        .array(fc.integer({ min: 1, max: 16 }), { minLength: 3, maxLength: 10 })
        .chain((objectSizesBytes) => {
          const totalBytes = objectSizesBytes.reduce((a, b) => a + b, 0);
          return fc.record({
            objectSizesBytes: fc.constant(objectSizesBytes),
            queueCount: fc.integer({ min: 1, max: 3 }),
            mode: fc.constantFrom('inline', 'async'),
            startEvicted: fc.boolean(),
            maxLatency: fc.integer({ min: 1, max: 6 }),
            ticksPerSecond: fc.integer({ min: 1, max: 10 }),
            localBudgetBytes: fc.integer({ min: 30, max: 120 }).map((percent) => Math.floor((totalBytes * percent) / 100)),
            nonLocalBudgetBytes: fc.integer({ min: 0, max: 20 }).map((percent) => Math.floor((totalBytes * percent) / 100)),
            unrealBudgetCap: fc.boolean(),
            debugBudgetBytes: fc.oneof(
              { weight: 3, arbitrary: fc.constant(-1) },
              { weight: 1, arbitrary: fc.integer({ min: 0, max: totalBytes }) },
            ),
            slotCount: fc.oneof({ weight: 4, arbitrary: fc.constant(32) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }) }),
            initialCapacity: fc.integer({ min: 2, max: 4 }),
            // Drawn from the other fields (no draw of its own), so adding it left every generated
            // case as it was: 1 config in 8 gets the twin.
            benchmarkTwin: fc.constant(false),
          }).map((config) => ({ ...config, benchmarkTwin: twinShare(config) }));
        }),
  },
  ops,
  // Every command: note the generation before it (generations-increasing compares against it),
  // then drain the events and device calls it caused, even when it threw, so the next step
  // starts clean; they are part of the observation.
  around: (s, command, dispatch) => {
    s.highestGeneration = Math.max(s.highestGeneration, s.manager.currentGeneration());
    let result: Json = null;
    let failure: unknown = undefined;
    try {
      result = dispatch(s, command);
    } catch (error) {
      failure = error;
    }
    const events = s.manager.drainEvents();
    const calls = s.manager.gpu.drainCalls();
    for (const event of events) s.env.probe(event);
    if (s.twin !== null && s.twinDisagreement === null) s.twinDisagreement = twinStep(s, s.twin, command, dispatch, result, failure);
    if (failure !== undefined) throw failure;
    return { ...observationFields(result), calls, events };
  },
  sequence: { minLength: 1, maxLength: 150 },
  createModel: (config, env) => managerSide(new ResidencyManagerModel(config), config, env),
  visual: (s) => managerVisual(s.manager),
  createImpl: (config, env) => implementationSide((options) => new ResidencyManagerImpl(config, options), config, env),
  invariants,
  probes: PROBES,
  faultOps: { 'device-call-failure': ['failNext'], 'set-growth-failure': ['failNextGrowth'] },
});
