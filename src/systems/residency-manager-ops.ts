/**
 * The residency-manager system's ops (src/systems/residency-manager.ts): one record per command
 * gives its fields, weight, generator and effect. Handles resolve modulo what exists (set handles
 * modulo SET_COUNT, object ids modulo the object count, queues modulo the queue count), so every
 * subsequence of a program is a program.
 */
import {
  type Drawn,
  drawnArray,
  drawnBoolean,
  drawnConstant,
  drawnConstantFrom,
  drawnInteger,
  drawnNat,
  drawnOneof,
  drawnOption,
  drawnTuple,
} from '../harness/drawn.js';
import type { Json } from '../harness/json.js';
import { opsFor } from '../harness/define-system.js';
import { Bool, Nat, OneOf, Type } from '../harness/schema.js';
import { DEVICE_CALL_KINDS } from '../gpu/sim-gpu.js';
import { INITIAL_SYNC_POINTS } from '../residency/sync-points.js';
import { ArbitraryCache, pickLive } from './common.js';
import {
  SET_COUNT,
  type ManagerSide,
  type ResidencyManagerSystemConfig,
} from './residency-manager-side.js';
import { present } from '../assert.js';

function objectOf(s: ManagerSide, obj: number): number {
  return obj % s.config.objectSizesBytes.length;
}
function setOf(s: ManagerSide, handle: number): number {
  // SET_COUNT sets exist from the start, so this always resolves.
  return present(pickLive(s.setIds, handle), 'the manager side has no sets');
}
function queueOf(s: ManagerSide, queue: number): number {
  return queue % s.config.queueCount;
}

function insertChecked(s: ManagerSide, set: number, object: number): boolean {
  const inserted = s.manager.sets.insert(set, object);
  if (s.manager.sets.isOutOfMemory(set)) s.env.probe('stuck-set');
  return inserted;
}

// The generators are drawn arbitraries (src/harness/drawn.ts): fast-check's, with a fast draw of
// the same values for campaigns.
/** Set handles: one of the SET_COUNT sets created up front. */
const setHandle = drawnNat(SET_COUNT - 1);
/** Object ids: one of the configured objects. */
const objectArb = (config: ResidencyManagerSystemConfig): Drawn<number> =>
  drawnNat(config.objectSizesBytes.length - 1);
const queueArb = (config: ResidencyManagerSystemConfig): Drawn<number> =>
  drawnNat(config.queueCount - 1);
const op = opsFor<ResidencyManagerSystemConfig, ManagerSide>();
/** Each op's arbitrary per op name and the config values it reads (see ArbitraryCache). */
const arbitraries = new ArbitraryCache();

export const ops = {
  track: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.objectSizesBytes.length, () =>
        objectArb(config).map((obj) => ({ op, obj })),
      ),
    apply: (s, command) => {
      s.manager.beginTracking(objectOf(s, command.obj));
      return {};
    },
  }),
  untrack: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.objectSizesBytes.length, () =>
        objectArb(config).map((obj) => ({ op, obj })),
      ),
    apply: (s, command) => {
      s.manager.endTracking(objectOf(s, command.obj));
      return {};
    },
  }),
  open: op({
    fields: { set: Nat() },
    weight: 2,
    arbitrary: (_config, op) => arbitraries.get(op, 0, () => setHandle.map((set) => ({ op, set }))),
    apply: (s, command) => ({ hr: s.manager.sets.open(setOf(s, command.set)) }),
  }),
  insert: op({
    fields: { set: Nat(), obj: Nat() },
    weight: 4,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.objectSizesBytes.length, () =>
        drawnTuple(setHandle, objectArb(config)).map(([set, obj]) => ({ op, set, obj })),
      ),
    apply: (s, command) => ({
      inserted: insertChecked(s, setOf(s, command.set), objectOf(s, command.obj)),
    }),
  }),
  close: op({
    fields: { set: Nat() },
    weight: 2,
    arbitrary: (_config, op) => arbitraries.get(op, 0, () => setHandle.map((set) => ({ op, set }))),
    apply: (s, command) => ({ hr: s.manager.sets.close(setOf(s, command.set)) }),
  }),
  record: op({
    fields: { set: Nat(), objs: Type.Array(Nat()) },
    weight: 10,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.objectSizesBytes.length, () =>
        drawnTuple(
          setHandle,
          drawnArray(objectArb(config), {
            minLength: 1,
            maxLength: config.objectSizesBytes.length + 1,
          }),
        ).map(([set, objs]) => ({ op, set, objs })),
      ),
    apply: (s, command): Json => {
      const { sets } = s.manager;
      const set = setOf(s, command.set);
      const opened = sets.open(set);
      if (opened !== 'S_OK') return { open: opened };
      let inserted = 0;
      const objs = command.objs;
      for (let i = 0; i < objs.length; i++)
        if (insertChecked(s, set, objectOf(s, objs[i]!))) inserted++;
      return { open: opened, inserted, close: sets.close(set) };
    },
  }),
  execute: op({
    fields: { queue: Nat(), sets: Type.Array(Type.Union([Nat(), Type.Null()])) },
    weight: 12,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.queueCount, () =>
        drawnTuple(
          queueArb(config),
          drawnArray(drawnOption(setHandle, 8, null), { minLength: 0, maxLength: 4 }),
        ).map(([queue, sets]) => ({ op, queue, sets })),
      ),
    apply: (s, command) => {
      const { manager } = s;
      const ids = command.sets.map((handle) => (handle === null ? null : setOf(s, handle)));
      // Each list references exactly its set's objects (a list without a set references none).
      const lists = ids.map((id) => (id === null ? [] : manager.sets.contents(id)));
      if (manager.gpu.nonLocalUsageBytes > 0) s.env.probe('execute-with-non-local-usage');
      const hr = manager.executeCommandLists(queueOf(s, command.queue), lists, ids);
      // Growth path: more sync points in flight than the implementation's first ring holds.
      if (manager.syncPointGenerations().length > INITIAL_SYNC_POINTS)
        s.env.probe('sync-point-ring-grown');
      return { hr };
    },
  }),
  mapTiles: op({
    fields: { queue: Nat(), set: Nat() },
    weight: 1,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.queueCount, () =>
        drawnTuple(queueArb(config), setHandle).map(([queue, set]) => ({ op, queue, set })),
      ),
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
    arbitrary: (config, op) =>
      arbitraries.get(op, config.queueCount, () =>
        queueArb(config).map((queue) => ({ op, queue })),
      ),
    apply: (s, command) => ({ value: s.manager.signalFence(queueOf(s, command.queue)) }),
  }),
  gpuProgress: op({
    fields: { queue: Nat(), steps: Nat() },
    weight: 10,
    arbitrary: (config, op) =>
      arbitraries.get(op, config.queueCount, () =>
        drawnTuple(queueArb(config), drawnInteger(1, 12)).map(([queue, steps]) => ({
          op,
          queue,
          steps,
        })),
      ),
    apply: (s, command) => ({
      ran: s.manager.gpu.progress(queueOf(s, command.queue), command.steps),
    }),
  }),
  pagingProgress: op({
    fields: { steps: Nat() },
    // Inline mode only: the async worker CPU-signals the paging fence itself.
    weight: (config) => (config.mode === 'inline' ? 4 : 0),
    arbitrary: (_config, op) =>
      arbitraries.get(op, 0, () => drawnInteger(1, 4).map((steps) => ({ op, steps }))),
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
      arbitraries.get(op, config.ticksPerSecond, () =>
        drawnOneof(
          { arbitrary: drawnInteger(0, 2 * config.ticksPerSecond), weight: 1 },
          { arbitrary: drawnInteger(0, 70 * config.ticksPerSecond), weight: 1 },
        ).map((ticks) => ({ op, ticks })),
      ),
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
      return arbitraries.get(op, totalBytes, () =>
        drawnTuple(
          drawnOneof(
            { arbitrary: drawnConstant(0), weight: 1 },
            { arbitrary: drawnInteger(20, 150), weight: 1 },
          ),
          drawnInteger(0, 25),
        ).map(([localPercent, nonLocalPercent]) => ({
          op,
          localBytes: Math.floor((totalBytes * localPercent) / 100),
          nonLocalBytes: Math.floor((totalBytes * nonLocalPercent) / 100),
        })),
      );
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
    arbitrary: (_config, op) =>
      arbitraries.get(op, 0, () => drawnBoolean().map((on) => ({ op, on }))),
    apply: (s, command) => {
      s.manager.setBackground(command.on);
      return {};
    },
  }),
  failNext: op({
    fields: { call: OneOf(DEVICE_CALL_KINDS) },
    weight: 1,
    arbitrary: (_config, op) =>
      arbitraries.get(op, 0, () =>
        drawnConstantFrom(...DEVICE_CALL_KINDS).map((call) => ({ op, call })),
      ),
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
    arbitrary: (config, op) =>
      arbitraries.get(op, config.objectSizesBytes.length, () =>
        drawnTuple(objectArb(config), drawnBoolean()).map(([obj, nonLocal]) => ({
          op,
          obj,
          nonLocal,
        })),
      ),
    apply: (s, command) => {
      const object = objectOf(s, command.obj);
      const moved = s.manager.gpu.moveToSegment(object, command.nonLocal);
      if (moved && s.manager.gpu.isNonLocal(object) && s.manager.gpu.isResident(object))
        s.env.probe('resident-moved-to-non-local');
      return { moved };
    },
  }),
};
