/**
 * The native-residency system's ops (src/native/native-residency.ts): the residency manager
 * system's commands that a native manager's API can take (objects tracked and untracked, sets
 * recorded, command lists executed with their sets, the paging thread let run) and the GPU-side
 * commands the harness keeps to itself (GPU and paging progress, the clock, budgets, segment
 * moves). Handles resolve modulo what exists, as in the residency manager system.
 *
 * Each op applies to either side: the spec model (policy `spec`; a stand-in with no opinion under
 * `any`) or the native run. Both sides guard alike, each from its own state: tracking a tracked
 * object, or ending the tracking of an object a set holds or pending GPU work references, is
 * skipped; a set is recorded with the tracked objects only.
 */
import type { Json, JsonObject } from '../harness/json.js';
import { opsFor, type OpDef, type OpName } from '../harness/define-system.js';
import { ops as managerOps } from '../systems/residency-manager-ops.js';
import type {
  ManagerSide,
  ResidencyManagerSystemConfig,
} from '../systems/residency-manager-side.js';
import { Bool, Nat, OneOf, Type, type TProperties } from '../harness/schema.js';
import type { DeviceCallRecord, SimGpu } from '../gpu/sim-gpu.js';
import { DEVICE_CALL_KINDS } from '../gpu/sim-gpu-types.js';
import type { ResidencyManagerModel } from '../../models/residency-manager.js';
import type { HResult } from '../residency/residency-set-types.js';
import { assert, present } from '../assert.js';
import { DEVICE_CALL_CODES, RESIDENCY_OPS } from './residency-judge.js';
import { NATIVE_SETS, type NativeRun } from './native-residency-run.js';
import type { NativeResidencyConfig } from './native-residency-config.js';

export interface ModelSide {
  readonly kind: 'model';
  /** The spec model; null under policy `any`. */
  readonly manager: ResidencyManagerModel | null;
  readonly setIds: readonly number[];
  readonly config: NativeResidencyConfig;
}

export interface NativeSide {
  readonly kind: 'native';
  readonly run: NativeRun;
  readonly config: NativeResidencyConfig;
  /** Policy `any`, paging inline: the first submission that left usage over a budget its needs fit. */
  budgetFinding: string | null;
}

export type Side = ModelSide | NativeSide;

const SKIPPED: JsonObject = { skipped: true };

const HRESULTS: Readonly<Record<number, HResult>> = {
  0: 'S_OK',
  2147942487: 'E_INVALIDARG',
  2147942414: 'E_OUTOFMEMORY',
  2147500037: 'E_FAIL',
};

function hr(value: number | undefined): string {
  if (value === undefined) return 'none';
  return HRESULTS[value] ?? `0x${value.toString(16).padStart(8, '0')}`;
}

/** The device calls of a step without the make-resident reason (a native manager cannot tag its calls). */
function normalized(calls: DeviceCallRecord[]): DeviceCallRecord[] {
  for (const call of calls) {
    if (call[0] === 'makeResident' || call[0] === 'enqueueMakeResident') call.splice(1, 1);
  }
  return calls;
}

function gpuOf(side: Side): SimGpu | null {
  return side.kind === 'native' ? side.run.judge.gpu : (side.manager?.gpu ?? null);
}

/** The observation: under `spec` the result and the step's device calls; under `any` nothing (no model to agree with). */
function observe(side: Side, result: JsonObject): Json {
  const gpu = gpuOf(side);
  const calls = gpu === null ? [] : gpu.drainCalls();
  if (side.config.policy === 'any') return {};
  result.calls = normalized(calls);
  return result;
}

/** A model side's manager: every op returns before this under policy `any` (no manager). */
function managerOf(side: ModelSide): ResidencyManagerModel {
  const { manager } = side;
  assert(manager !== null, 'a residency op reached the model side under policy any');
  return manager;
}

/** The model's set behind a handle (setIds holds one per NATIVE_SETS under policy spec). */
function setIdOf(side: ModelSide, handle: number): number {
  return present(side.setIds[handle], 'a set handle past the model side setIds', handle);
}

/** What the native side last saw a set hold (setContents holds one list per NATIVE_SETS). */
function contentsOf(side: NativeSide, handle: number): number[] {
  return present(
    side.run.setContents[handle],
    'a set handle past the native run setContents',
    handle,
  );
}

function objectOf(side: Side, obj: number): number {
  return obj % side.config.objectSizesBytes.length;
}

function isTracked(side: Side, object: number): boolean {
  if (side.kind === 'native') return side.run.tracked[object] === 1;
  return managerOf(side).status(object) !== 'untracked';
}

function setHolds(side: Side, object: number): boolean {
  for (let s = 0; s < NATIVE_SETS; s++) {
    const contents =
      side.kind === 'native'
        ? contentsOf(side, s)
        : managerOf(side).sets.contents(setIdOf(side, s));
    if (contents.includes(object)) return true;
  }
  return false;
}

const op = opsFor<NativeResidencyConfig, Side>();

/**
 * The residency manager system's generator of an op (the same fields): it reads only
 * objectSizesBytes, queueCount and ticksPerSecond of the config, which a native config has too.
 */
function drawnAs<F extends TProperties>(def: OpDef<ResidencyManagerSystemConfig, ManagerSide, F>) {
  const arbitrary = present(def.arbitrary, 'a residency manager op without a generator');
  return (config: NativeResidencyConfig, op: OpName) =>
    arbitrary(config as unknown as ResidencyManagerSystemConfig, op);
}

/** Ops of both sides that only move the simulated GPU (the driver hears of them with its next command). */
function onGpu(side: Side, change: (gpu: SimGpu) => JsonObject): Json {
  const gpu = gpuOf(side);
  return observe(side, gpu === null ? {} : change(gpu));
}

export const ops = {
  track: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: drawnAs(managerOps.track),
    apply: (side, command) => {
      if (side.kind === 'model' && side.manager === null) return {};
      const object = objectOf(side, command.obj);
      if (isTracked(side, object)) return observe(side, { ...SKIPPED });
      if (side.kind === 'model') managerOf(side).beginTracking(object);
      else {
        side.run.judge.gpu.createObject(object, !side.config.startEvicted);
        side.run.tracked[object] = 1;
        side.run.exchange(RESIDENCY_OPS.track, [object]);
      }
      return observe(side, {});
    },
  }),
  untrack: op({
    fields: { obj: Nat() },
    weight: 2,
    arbitrary: drawnAs(managerOps.untrack),
    apply: (side, command) => {
      if (side.kind === 'model' && side.manager === null) return {};
      const object = objectOf(side, command.obj);
      const gpu = gpuOf(side);
      assert(gpu !== null, 'a residency op reached the model side under policy any');
      if (
        !isTracked(side, object) ||
        setHolds(side, object) ||
        gpu.isReferencedByPendingWork(object)
      )
        return observe(side, { ...SKIPPED });
      if (side.kind === 'model') managerOf(side).endTracking(object);
      else {
        side.run.exchange(RESIDENCY_OPS.untrack, [object]);
        gpu.destroyObject(object);
        side.run.tracked[object] = 0;
      }
      return observe(side, {});
    },
  }),
  record: op({
    fields: { set: Nat(), objs: Type.Array(Nat()) },
    weight: 10,
    arbitrary: drawnAs(managerOps.record),
    apply: (side, command) => {
      if (side.kind === 'model' && side.manager === null) return {};
      const set = command.set % NATIVE_SETS;
      const objects = command.objs
        .map((obj) => objectOf(side, obj))
        .filter((o) => isTracked(side, o));
      if (side.kind === 'model') {
        const sets = managerOf(side).sets;
        const id = setIdOf(side, set);
        const open = sets.open(id);
        if (open !== 'S_OK') return observe(side, { open });
        let inserted = 0;
        for (const object of objects) if (sets.insert(id, object)) inserted++;
        return observe(side, { open, inserted, close: sets.close(id) });
      }
      const run = side.run;
      const values = run.exchange(RESIDENCY_OPS.record, [set, ...objects]);
      if (values === null) return observe(side, { fault: true });
      const open = hr(values[0]);
      if (open !== 'S_OK') return observe(side, { open });
      const contents: number[] = [];
      objects.forEach((object, i) => {
        if (values[1 + i] === 1) contents.push(object);
      });
      run.setContents[set] = contents;
      const close = hr(values[1 + objects.length]);
      run.setOpen[set] = close !== 'S_OK';
      return observe(side, { open, inserted: contents.length, close });
    },
  }),
  execute: op({
    fields: { queue: Nat(), sets: Type.Array(Type.Union([Nat(), Type.Null()])) },
    weight: 12,
    arbitrary: drawnAs(managerOps.execute),
    apply: (side, command) => {
      if (side.kind === 'model' && side.manager === null) return {};
      const queue = command.queue % side.config.queueCount;
      const handles = command.sets.map((h) => (h === null ? null : h % NATIVE_SETS));
      if (side.kind === 'model') {
        const m = managerOf(side);
        const ids = handles.map((h) => (h === null ? null : setIdOf(side, h)));
        const lists = ids.map((id) => (id === null ? [] : m.sets.contents(id)));
        return observe(side, { hr: m.executeCommandLists(queue, lists, ids) });
      }
      const run = side.run;
      const args: number[] = [queue, handles.length];
      const needs = new Set<number>();
      for (const h of handles) {
        const refs = h === null ? [] : contentsOf(side, h);
        args.push(h === null ? -1 : h, refs.length, ...refs);
        for (const object of refs) needs.add(object);
      }
      const watch = watchesBudget(side);
      run.judge.budgetWatch = watch ? needs : null;
      const values = run.exchange(RESIDENCY_OPS.execute, args);
      run.judge.budgetWatch = null;
      if (values === null) return observe(side, { fault: true });
      if (watch) judgeBudget(side, needs);
      return observe(side, { hr: hr(values[0]) });
    },
  }),
  gpuProgress: op({
    fields: { queue: Nat(), steps: Nat() },
    weight: 10,
    arbitrary: drawnAs(managerOps.gpuProgress),
    apply: (side, command) =>
      onGpu(side, (gpu) => ({
        ran: gpu.progress(command.queue % side.config.queueCount, command.steps),
      })),
  }),
  pagingProgress: op({
    fields: { steps: Nat() },
    // ID3D12Device3 only: the paging queue runs the queued make-resident operations.
    weight: (config) => (config.deviceVersion === 3 ? 4 : 0),
    arbitrary: drawnAs(managerOps.pagingProgress),
    apply: (side, command) => onGpu(side, (gpu) => ({ ran: gpu.pagingProgress(command.steps) })),
  }),
  pagingWorkerStep: op({
    fields: {},
    // Without ID3D12Device3: the manager's paging thread runs until it blocks (the model's worker
    // processes every queued work: a native thread drains its queue once it runs).
    weight: (config) => (config.deviceVersion === 3 ? 0 : 6),
    apply: (side) => {
      if (side.kind === 'native') {
        side.run.exchange(RESIDENCY_OPS.quiesce, []);
        return observe(side, {});
      }
      if (side.manager !== null) while (side.manager.pagingWorkerStep());
      return observe(side, {});
    },
  }),
  tick: op({
    fields: { ticks: Nat() },
    weight: 5,
    arbitrary: drawnAs(managerOps.tick),
    apply: (side, command) =>
      onGpu(side, (gpu) => {
        gpu.advanceClock(command.ticks);
        return {};
      }),
  }),
  setBudget: op({
    fields: { localBytes: Nat(), nonLocalBytes: Nat() },
    weight: 2,
    arbitrary: drawnAs(managerOps.setBudget),
    apply: (side, command) =>
      onGpu(side, (gpu) => {
        gpu.setBudgets(command.localBytes, command.nonLocalBytes);
        return {};
      }),
  }),
  failNext: op({
    // The next device call of this kind fails with E_OUTOFMEMORY and changes nothing: armed on
    // the side's simulated GPU and, on the native side, in the driver's port (the Fail command),
    // so both take it at the same call. Only for drivers whose hello says failures=1.
    fields: { call: OneOf(DEVICE_CALL_KINDS) },
    weight: 1,
    arbitrary: drawnAs(managerOps.failNext),
    apply: (side, command) => {
      const gpu = gpuOf(side);
      if (gpu === null) return {};
      gpu.failNext(command.call);
      if (side.kind === 'native') {
        const values = side.run.exchange(RESIDENCY_OPS.fail, [DEVICE_CALL_CODES[command.call]]);
        if (values === null) return observe(side, { fault: true });
      }
      return observe(side, {});
    },
  }),
  relocate: op({
    fields: { obj: Nat(), nonLocal: Bool() },
    weight: 2,
    arbitrary: drawnAs(managerOps.relocate),
    apply: (side, command) =>
      onGpu(side, (gpu) => ({
        moved: gpu.moveToSegment(objectOf(side, command.obj), command.nonLocal),
      })),
  }),
};

/** The fault site of the injected device-call failures (a campaign switches it on per run). */
export const FAULT_OPS = { 'device-call-failure': ['failNext'] } as const;

/** The ops of a driver without the Fail command (hello without failures=1). */
const { failNext: _failNext, ...withoutFailNext } = ops;
export const opsWithoutFailures = withoutFailNext;

/** Policy `any` with paging inline: the make-resident calls of a submission happen in its execute. */
function watchesBudget(side: NativeSide): boolean {
  if (side.config.policy !== 'any' || side.budgetFinding !== null) return false;
  return (
    side.config.deviceVersion === 3 ||
    side.run.session.driver.hello.fields.get('pagingThread') !== '1'
  );
}

/**
 * The budget rule of policy `any` (see ResidencyJudge.watchBudget): a submission whose
 * make-resident call went past the budget while the manager could have waited and trimmed is a
 * finding when what the submission needs fits the budget.
 */
function judgeBudget(side: NativeSide, needs: ReadonlySet<number>): void {
  const judge = side.run.judge;
  const candidate = judge.budgetCandidate;
  if (candidate === null) return;
  judge.budgetCandidate = null;
  const gpu = judge.gpu;
  const budget = gpu.localBudgetBytes + gpu.nonLocalBudgetBytes;
  let needBytes = 0;
  const sizes = side.config.objectSizesBytes;
  for (const object of needs)
    needBytes += present(sizes[object], 'a needed object past objectSizesBytes', object);
  if (needBytes <= budget)
    side.budgetFinding = `${candidate}; what the submission needs (${needBytes} bytes) fits`;
}
