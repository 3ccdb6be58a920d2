/**
 * System `engine-frame`: the engine layer that composes the residency manager, the pool heaps'
 * sub-allocators behind fence-delayed frees, and the simulated GPU into one frame loop
 * (docs/spec/engine.md#rs-3, #rs-4, #rs-7, #rs-9; docs/spec/engine.md#mem-2 to #mem-4, #mem-6 to
 * #mem-9; docs/engine-frame.md). The model side is models/engine-frame.ts over the reference
 * models, the implementation side src/engine/engine-frame.ts over the shipped pieces.
 *
 * Judges owned by the side, not by the engine:
 * - the simulated GPU runs each list's true references (the resources its commands touch,
 *   indirect ones included, mapped to pageables at execution time) and reports any it touches
 *   while not resident;
 * - a watch on the set pool and on ExecuteCommandLists (the port the engine is given) logs an
 *   insert into a closed set, a second close, and a set that reaches ExecuteCommandLists open;
 * - the side's own record of what each executed list read (from the commands) and of the frame
 *   fence values flags a pool block handed out (created or defrag destination) over bytes a
 *   list whose frame has not completed on the GPU reads, and a defrag move of a block whose
 *   initial upload the commands never finished (`unlock`).
 *
 * Budgets are generated low, the way D3D12.ResidencyDebugBudgetMB forces paging, so missing
 * registrations surface as touches of evicted pageables.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Nat } from '../harness/schema.js';
import { CREATE_FLAG_MASK, objectLayout, RECORD_PATHS } from '../engine/engine-frame-types.js';
import { pickLive, SKIPPED } from './common.js';
export { engineSide, managerConfig } from './engine-frame-side.js';
import {
  completedFrames,
  created,
  flushJson,
  forgetList,
  judgeHandOut,
  noteExecuted,
  pruneCompleted,
  removeLive,
} from './engine-frame-judges.js';
import {
  EngineFrameConfigSchema,
  type EngineSide,
  type EngineSystemConfig,
  createEngineImpl,
  createEngineModel,
} from './engine-frame-side.js';
import { invariants } from './engine-frame-invariants.js';
import { managerVisual } from './visuals.js';
import { present } from '../assert.js';

const op = opsFor<EngineSystemConfig, EngineSide>();
const handle = fc.nat({ max: 31 });

const ops = {
  create: op({
    fields: { sizeBytes: Nat(), flags: Nat() },
    weight: 6,
    arbitrary: (config, op) =>
      fc
        .tuple(
          fc.oneof(
            fc.integer({ min: 1, max: config.poolMaxAllocBytes }),
            fc.integer({ min: 1, max: config.poolHeapBytes }),
          ),
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(0, 8) },
            { weight: 3, arbitrary: fc.nat({ max: CREATE_FLAG_MASK }) },
            { weight: 2, arbitrary: fc.constant(4) },
          ),
        )
        .map(([sizeBytes, flags]) => ({ op, sizeBytes, flags })),
    apply: (s, command) => {
      const r = s.engine.create(command.sizeBytes, command.flags & CREATE_FLAG_MASK);
      const observed = created(s, r, true);
      if (r !== null && (command.flags & 8) !== 0 && r.kind === 'placed')
        present(s.info[r.id], 'a created resource has its info', r.id).locked = true;
      return observed;
    },
  }),
  transient: op({
    fields: { sizeBytes: Nat(), firstPass: Nat(), passes: Nat() },
    weight: 3,
    arbitrary: (config, op) =>
      fc
        .tuple(
          fc.integer({ min: 1, max: Math.max(1, config.transientHeapBytes >> 1) }),
          fc.nat({ max: 5 }),
          fc.nat({ max: 3 }),
        )
        .map(([sizeBytes, firstPass, passes]) => ({ op, sizeBytes, firstPass, passes })),
    apply: (s, command) => {
      const lastPass = command.firstPass + command.passes;
      return created(
        s,
        s.engine.createTransient(command.sizeBytes, command.firstPass, lastPass),
        false,
        command.firstPass,
        lastPass,
      );
    },
  }),
  release: op({
    fields: { res: Nat() },
    weight: 3,
    arbitrary: (_config, op) => handle.map((res) => ({ op, res })),
    apply: (s, command) => {
      const id = pickLive(s.owned, command.res);
      if (id === undefined) return SKIPPED;
      s.engine.release(id);
      const info = present(s.info[id], 'an owned resource has its info', id);
      if (info.kind === 'placed')
        s.releases.push(info.object, info.offsetBytes, info.sizeBytes, s.frameValues.length + 1);
      s.owned.splice(s.owned.indexOf(id), 1);
      removeLive(s, id);
      return {};
    },
  }),
  unlock: op({
    fields: { res: Nat() },
    weight: 2,
    arbitrary: (_config, op) => handle.map((res) => ({ op, res })),
    apply: (s, command) => {
      const id = pickLive(s.owned, command.res);
      if (id === undefined) return SKIPPED;
      s.engine.unlock(id);
      present(s.info[id], 'an owned resource has its info', id).locked = false;
      return {};
    },
  }),
  open: op({
    fields: {},
    weight: 4,
    apply: (s) => {
      const list = s.engine.openList();
      if (list !== null) {
        s.recording.push(list);
        present(s.touchedBy[list], 'an open list is one of the configured lists', list).length = 0;
      }
      return { list };
    },
  }),
  record: op({
    fields: { list: Nat(), path: Nat(), res: Nat(), res2: Nat() },
    weight: 16,
    arbitrary: (_config, op) =>
      fc
        .tuple(handle, fc.nat({ max: RECORD_PATHS.length - 1 }), handle, handle)
        .map(([list, path, res, res2]) => ({ op, list, path, res, res2 })),
    apply: (s, command) => {
      const list = pickLive(s.recording, command.list);
      const res = pickLive(s.live, command.res);
      const res2 = pickLive(s.live, command.res2);
      if (list === undefined || res === undefined || res2 === undefined) return SKIPPED;
      const path = RECORD_PATHS[command.path % RECORD_PATHS.length]!;
      s.engine.record(list, path, res, res2);
      const touched = present(
        s.touchedBy[list],
        'a recording list is one of the configured lists',
        list,
      );
      if (path !== 'query') {
        touched.push(res);
        if (
          path !== 'barrier' &&
          path !== 'descriptorTable' &&
          path !== 'renderTarget' &&
          path !== 'clear'
        )
          touched.push(res2);
      }
      return {};
    },
  }),
  close: op({
    fields: { list: Nat() },
    weight: 4,
    arbitrary: (_config, op) => handle.map((list) => ({ op, list })),
    apply: (s, command) => {
      const list = pickLive(s.recording, command.list);
      if (list === undefined) return SKIPPED;
      s.engine.closeList(list);
      forgetList(s, list);
      s.closed.push(list);
      return {};
    },
  }),
  submit: op({
    fields: { list: Nat() },
    weight: 4,
    arbitrary: (_config, op) => handle.map((list) => ({ op, list })),
    apply: (s, command) => {
      const list = pickLive(s.closed, command.list);
      if (list === undefined) return SKIPPED;
      s.engine.submit(list);
      forgetList(s, list);
      return {};
    },
  }),
  commit: op({
    fields: { res: Nat(), tiles: Nat() },
    weight: 3,
    arbitrary: (config, op) =>
      fc
        .tuple(handle, fc.nat({ max: Math.min(3, config.backingHeapCount) }))
        .map(([res, tiles]) => ({ op, res, tiles })),
    apply: (s, command) => {
      const reserved = s.owned.filter(
        (id) => present(s.info[id], 'an owned resource has its info', id).kind === 'reserved',
      );
      const id = pickLive(reserved, command.res);
      if (id === undefined) return SKIPPED;
      s.engine.commitReserved(id, command.tiles);
      return {};
    },
  }),
  flush: op({
    fields: {},
    weight: 3,
    apply: (s) => {
      const result = s.engine.flush();
      noteExecuted(s, result);
      return flushJson(result);
    },
  }),
  defrag: op({
    fields: { heap: Nat() },
    weight: 2,
    arbitrary: (config, op) =>
      fc.nat({ max: config.poolHeapCount - 1 }).map((heap) => ({ op, heap })),
    apply: (s, command) => {
      const move = s.engine.defrag(command.heap);
      if (move === null) return { move: null };
      const observed = {
        id: move.id,
        fromBytes: move.fromBytes,
        toBytes: move.toBytes,
        moved: move.moved,
      };
      const info = s.info[move.id];
      if (info === undefined) return { move: observed };
      if (info.locked)
        s.defragLog.push(
          `defrag picked resource ${move.id} at ${move.fromBytes} (destination ${move.toBytes}) while its initial upload is still running (locked)`,
        );
      judgeHandOut(s, `defrag of resource ${move.id}`, info.object, move.toBytes, info.sizeBytes);
      const stamp = s.frameValues.length + 1;
      if (move.moved) {
        // The copy reads the old bytes in this frame, and the old block is released.
        s.reads.push(info.object, move.fromBytes, info.sizeBytes, stamp);
        s.releases.push(info.object, move.fromBytes, info.sizeBytes, stamp);
        info.offsetBytes = move.toBytes;
      } else {
        s.releases.push(info.object, move.toBytes, info.sizeBytes, stamp);
      }
      return { move: observed };
    },
  }),
  endFrame: op({
    fields: {},
    weight: 3,
    apply: (s) => {
      const { value, flush } = s.engine.endFrame();
      noteExecuted(s, flush);
      s.frameValues.push(value);
      s.recording.length = 0;
      s.closed.length = 0;
      for (const id of s.transients) removeLive(s, id);
      s.transients.length = 0;
      // Reads and releases of completed frames are over.
      const done = completedFrames(s);
      pruneCompleted(s.reads, done);
      pruneCompleted(s.releases, done);
      // The fence value is the judge's; the manager's own signals (splits, commits) decide it.
      return flushJson(flush);
    },
  }),
  gpuProgress: op({
    fields: { steps: Nat() },
    weight: 6,
    arbitrary: (_config, op) =>
      fc
        .oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 4, max: 32 }))
        .map((steps) => ({ op, steps })),
    apply: (s, command) => {
      // Not observed: how many items run depends on the manager's splits and paging decisions.
      s.manager.gpu.pagingProgress(command.steps);
      s.manager.gpu.progress(0, command.steps);
      return {};
    },
  }),
  tick: op({
    fields: { ticks: Nat() },
    weight: 1,
    arbitrary: (config, op) =>
      fc.integer({ min: 0, max: 3 * config.ticksPerSecond }).map((ticks) => ({ op, ticks })),
    apply: (s, command) => {
      s.manager.gpu.advanceClock(command.ticks);
      return {};
    },
  }),
};

export const ENGINE_PROBES = [
  'pressure-trim',
  'eviction',
  're-residency',
  'route-placed',
  'route-committed',
  'route-reserved',
  'close-path-a',
  'close-path-b',
  'reserved-grow',
  'reserved-shrink',
  'commit-flushes-earlier',
  'batch-split',
  'query-resolve',
  'list-reset',
  'deferred-delete',
  'transient-aliased',
  'defrag-move',
  'defrag-skip-locked',
] as const;

export const engineFrameSystem = defineSystem({
  name: 'engine-frame',
  summary:
    'the engine frame loop: resources, recording paths, residency sets, reserved commits, aliasing, deferred deletion and defrag over the residency manager',
  config: {
    schema: EngineFrameConfigSchema,
    check: (c) => {
      const pow2 = (n: number) => n > 0 && (n & (n - 1)) === 0;
      if (c.poolHeapCount < 1) return 'poolHeapCount must be >= 1';
      if (!pow2(c.poolAlignBytes))
        return `poolAlignBytes must be a power of two, got ${c.poolAlignBytes}`;
      if (c.poolHeapBytes < c.poolAlignBytes || c.poolHeapBytes % c.poolAlignBytes !== 0)
        return 'poolHeapBytes must be a positive multiple of poolAlignBytes';
      if (c.poolMaxAllocBytes < 1) return 'poolMaxAllocBytes must be >= 1';
      if (c.transientHeapBytes < 1 || c.tileBytes < 1 || c.untrackedBytes < 1)
        return 'heap, tile and untracked sizes must be >= 1';
      if (c.committedSlotBytes.some((b) => b < 1)) return 'committed slot sizes must be >= 1';
      if (c.listCount < 1) return 'listCount must be >= 1';
      if (c.maxCommandsPerBatch < 1) return 'maxCommandsPerBatch must be >= 1';
      if (c.maxLatency < 1) return 'maxLatency must be >= 1';
      if (c.ticksPerSecond < 1) return 'ticksPerSecond must be >= 1';
      if (c.listCount + 3 > 4096) return 'listCount must leave the set pool at most 4096 slots';
      return null;
    },
    arbitrary: (): fc.Arbitrary<EngineSystemConfig> =>
      fc
        .record({
          poolHeapCount: fc.integer({ min: 1, max: 2 }),
          poolHeapBytes: fc.constantFrom(32, 64),
          committedSlotBytes: fc.array(fc.integer({ min: 8, max: 48 }), {
            minLength: 1,
            maxLength: 3,
          }),
          transientHeapBytes: fc.constantFrom(16, 32),
          backingHeapCount: fc.integer({ min: 1, max: 4 }),
          tileBytes: fc.integer({ min: 4, max: 16 }),
          listCount: fc.integer({ min: 2, max: 3 }),
          maxCommandsPerBatch: fc.integer({ min: 1, max: 6 }),
          startEvicted: fc.boolean(),
          maxLatency: fc.integer({ min: 1, max: 6 }),
          ticksPerSecond: fc.integer({ min: 1, max: 10 }),
          budgetPercent: fc.integer({ min: 20, max: 120 }),
          debugPercent: fc.oneof(
            { weight: 1, arbitrary: fc.constant(-1) },
            { weight: 3, arbitrary: fc.integer({ min: 0, max: 60 }) },
          ),
        })
        .map(({ budgetPercent, debugPercent, ...rest }): EngineSystemConfig => {
          const base: EngineSystemConfig = {
            ...rest,
            poolAlignBytes: 4,
            poolMaxAllocBytes: rest.poolHeapBytes / 2,
            backBufferCount: 1,
            externalCount: 1,
            untrackedBytes: 4,
            localBudgetBytes: 0,
            debugBudgetBytes: -1,
          };
          const total = objectLayout(base).objectSizesBytes.reduce((a, b) => a + b, 0);
          return {
            ...base,
            localBudgetBytes: Math.floor((total * budgetPercent) / 100),
            debugBudgetBytes: debugPercent < 0 ? -1 : Math.floor((total * debugPercent) / 100),
          };
        }),
  },
  ops,
  // Every command: drain the manager's events and the GPU's call log (probes on the model side:
  // pressure, eviction, re-residency), even when the command threw.
  around: (s, command, dispatch) => {
    let result: Json = null;
    let failure: unknown;
    try {
      result = dispatch(s, command);
    } catch (error) {
      failure = error;
    }
    for (const event of s.manager.drainEvents()) s.env.probe(event);
    const calls = s.manager.gpu.drainCalls();
    for (const call of calls) {
      const objects =
        call[0] === 'evict'
          ? call[1]
          : call[0] === 'makeResident' || call[0] === 'enqueueMakeResident'
            ? call[2]
            : undefined;
      if (!Array.isArray(objects)) continue;
      if (call[0] === 'evict') {
        s.env.probe('eviction');
        for (const object of objects) s.everEvicted[object] = 1;
      } else if (objects.some((object) => s.everEvicted[object] === 1)) {
        s.env.probe('re-residency');
      }
    }
    if (failure !== undefined) throw failure;
    return result;
  },
  sequence: { minLength: 1, maxLength: 240 },
  createModel: createEngineModel,
  createImpl: createEngineImpl,
  visual: (s) => managerVisual(s.manager),
  invariants,
  probes: ENGINE_PROBES,
});
