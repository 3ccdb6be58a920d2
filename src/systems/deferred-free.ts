/**
 * System `deferred-free`: fence-delayed frees and a reusable-object pool in front of a
 * sub-allocator (buddy, best fit or first fit, chosen by the config), behind a frame fence
 * (docs/spec/allocators.md#al-fence; docs/spec/engine.md#mem-8-1; docs/spec/engine.md#life-pool).
 * The model side wraps the sub-allocator's reference model, the implementation side the shipped
 * sub-allocator.
 *
 * Commands are plain data. `index` picks the k-th live allocation (hand-out order) modulo the
 * live count, so every subsequence of a program is still a program.
 *
 * The GPU side is explicit (src/gpu/queue-timeline.ts): `use` records GPU work of the current
 * frame that reads an allocation; `endFrame` signals the frame's fence value and lets the
 * allocator return completed releases; `gpuProgress` is the only thing that moves the completed
 * value. The judge invariant asks the timeline which bytes are in flight and the sub-allocator
 * which bytes are still allocated, not the deferred layer's own bookkeeping.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Int, Nat } from '../harness/schema.js';
import { isPowerOfTwo } from '../alloc/allocator.js';
import { subAllocatorConfigProblem } from '../alloc/config.js';
import { createSubAllocatorModel } from '../../models/alloc-index.js';
import { DeferredFreeModel } from '../../models/deferred-free.js';
import { pickLive, searchByOffset, SKIPPED } from './common.js';
export {
  createDeferredImpl,
  DEFERRED_KINDS,
  deferredSide,
  type DeferredConfig,
} from './deferred-free-side.js';
import { invariants } from './deferred-free-invariants.js';
import {
  DEFERRED_KINDS,
  DEFERRED_MISUSE_KINDS,
  type DeferredConfig,
  DeferredFreeConfigSchema,
  type DeferredHandout,
  type DeferredSide,
  createDeferredImpl,
  deferredSide,
} from './deferred-free-side.js';
import { deferredVisual } from './visuals.js';

function handOut(
  s: DeferredSide,
  offsetBytes: number,
  sizeBytes: number,
  alignBytes: number,
  pooled: boolean,
): void {
  const handout: DeferredHandout = {
    id: s.nextHandoutId++,
    offsetBytes,
    sizeBytes,
    alignBytes,
    pooled,
  };
  s.live.push(handout);
  // After every entry at or below its offset: a stable sort of `live` by offset would put it there.
  s.liveByOffset.splice(searchByOffset(s.liveByOffset, offsetBytes, true), 0, handout);
  s.timeline.judgeHandOut(pooled ? 'poolAcquire' : 'alloc', offsetBytes, sizeBytes, s.violations);
}

function forget(s: DeferredSide, offsetBytes: number): void {
  const index = s.live.findIndex((handout) => handout.offsetBytes === offsetBytes);
  if (index !== -1) {
    const handout = s.live[index]!;
    s.live.splice(index, 1);
    const at = s.liveByOffset.indexOf(handout);
    if (at !== -1) s.liveByOffset.splice(at, 1);
  }
  s.lastReleasedOffset = offsetBytes;
}

/** The k-th (modulo their count) live handout with `pooled` as given, like pickLive over that filter of `live`. */
function pickLiveWhere(
  s: DeferredSide,
  pooled: boolean,
  handle: number,
): DeferredHandout | undefined {
  let count = 0;
  for (let i = 0; i < s.live.length; i++) if (s.live[i]!.pooled === pooled) count++;
  if (count === 0) return undefined;
  let k = handle % count;
  for (let i = 0; i < s.live.length; i++) {
    const handout = s.live[i]!;
    if (handout.pooled === pooled && k-- === 0) return handout;
  }
  return undefined;
}

/**
 * The frame that releases an allocation may have used it: the GPU reads a released allocation
 * until that frame's value completes (the worst case the frame fence exists for).
 */
function doRelease(s: DeferredSide, offsetBytes: number): Json {
  const inFlight = s.timeline.findInFlightOverlap(offsetBytes, 1) !== null;
  s.allocator.release(offsetBytes);
  if (inFlight) s.env.probe('release-after-earlier-use-in-flight');
  const handout = s.live.find((candidate) => candidate.offsetBytes === offsetBytes);
  if (handout !== undefined)
    s.timeline.submitRead(offsetBytes, handout.sizeBytes, s.timeline.nextValueToSignal, handout.id);
  forget(s, offsetBytes);
  probeHeld(s);
  return { pendingBytes: s.allocator.pendingBytes() };
}

/**
 * A pooled object is a per-frame GPU resource: the frame that hands it back to the pool is the
 * frame whose work used it last, so the GPU reads it until that frame's value completes.
 */
function doPoolRelease(s: DeferredSide, offsetBytes: number): Json {
  s.allocator.poolRelease(offsetBytes);
  const handout = s.live.find((candidate) => candidate.offsetBytes === offsetBytes);
  if (handout !== undefined)
    s.timeline.submitRead(offsetBytes, handout.sizeBytes, s.timeline.nextValueToSignal, handout.id);
  forget(s, offsetBytes);
  probeHeld(s);
  return { pooledBytes: s.allocator.pooledBytes() };
}

/** Growth probes: more releases and pooled objects held than a queue's first storage (see GROWTH_PROBES). */
function probeHeld(s: DeferredSide): void {
  const held = s.allocator.heldCount();
  if (held > DEQUE_INITIAL_ENTRIES) {
    s.env.probe('held-queues-grown');
    if (held > 4 * DEQUE_INITIAL_ENTRIES) s.env.probe('held-queues-grown-three-times');
  }
}

/** Entries of a NumberDeque's first storage (src/alloc/number-deque.ts): the deferred queues grow past it. */
const DEQUE_INITIAL_ENTRIES = 16;

/**
 * Probes of the growth paths of the deferred layer's queues, reached by the scale configs:
 * counted in campaign summaries, not listed in `probes` (too rare a share for every
 * property-suite run to meet them); properties/deferred-free.test.ts runs the scale configs alone
 * and requires them.
 */
export const GROWTH_PROBES = ['held-queues-grown', 'held-queues-grown-three-times'] as const;

/** Units (capacity / grain) of the largest ordinary config; a scale config has more. */
const ORDINARY_MAX_UNITS = 32;

/** A scale config: 256 to 1024 grains, so dozens of small allocations are released or pooled at once. */
export function isScaleConfig(config: DeferredConfig): boolean {
  return config.capacityBytes > ORDINARY_MAX_UNITS * config.minBlockBytes;
}

/** Most allocations one burst makes. */
const BURST_ALLOCATIONS = 80;

function doPoolAcquire(s: DeferredSide, sizeClass: number): Json {
  const heldBefore = s.allocator.heldCount();
  const result = s.allocator.poolAcquire(sizeClass);
  s.lastAllocResult = result === null ? null : result.offsetBytes;
  if (result === null) return { offsetBytes: null };
  const sizeBytes = s.config.objectSizesBytes[sizeClass]!;
  handOut(s, result.offsetBytes, sizeBytes, s.config.objectAlignBytes, true);
  if (result.hit) s.env.probe('pool-hit');
  else if (heldBefore > 0 && s.allocator.heldCount() < heldBefore)
    s.env.probe('reclaimed-on-failure');
  if (!result.hit && s.allocator.pooledBytes() > 0) s.env.probe('pool-miss-while-pooled');
  return { offsetBytes: result.offsetBytes, hit: result.hit };
}

function alloc(s: DeferredSide, sizeBytes: number, alignBytes: number): Json {
  const heldBefore = s.allocator.heldCount();
  const offsetBytes = s.allocator.alloc(sizeBytes, alignBytes);
  s.lastAllocResult = offsetBytes;
  if (offsetBytes === null) {
    s.env.probe('alloc-null');
    return { offsetBytes: null };
  }
  if (heldBefore > 0 && s.allocator.heldCount() < heldBefore) s.env.probe('reclaimed-on-failure');
  handOut(s, offsetBytes, sizeBytes, alignBytes, false);
  return { offsetBytes };
}

function misuse(s: DeferredSide, kind: number, index: number): Json {
  const unknownOffset = s.config.capacityBytes + index;
  switch (DEFERRED_MISUSE_KINDS[kind % DEFERRED_MISUSE_KINDS.length]) {
    case 'double-release':
      return doRelease(s, s.lastReleasedOffset >= 0 ? s.lastReleasedOffset : unknownOffset);
    case 'interior-offset': {
      const handout = pickLive(s.live, index);
      const target =
        handout !== undefined && handout.sizeBytes > 1
          ? handout.offsetBytes + 1 + (index % (handout.sizeBytes - 1))
          : unknownOffset;
      return index % 2 === 0 ? doRelease(s, target) : doPoolRelease(s, target);
    }
    case 'unknown-offset':
      return index % 2 === 0 ? doRelease(s, unknownOffset) : doPoolRelease(s, unknownOffset);
    case 'pool-release-plain':
      return doPoolRelease(s, pickLiveWhere(s, false, index)?.offsetBytes ?? unknownOffset);
    case 'bad-size-class':
      return doPoolAcquire(s, s.config.objectSizesBytes.length + index);
    default:
      throw new Error(`deferred-free: unknown misuse kind ${kind}`);
  }
}

function sizeArb(capacityBytes: number, grainBytes: number): fc.Arbitrary<number> {
  const quarter = Math.max(1, Math.floor(capacityBytes / 4));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .integer({ min: 1, max: 4 })
        .map((units) => Math.min(capacityBytes, units * grainBytes)),
    },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: quarter }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: capacityBytes }) },
    { weight: 1, arbitrary: fc.constantFrom(0, -1) },
  );
}

/** Handles: the k-th live allocation (or pooled one) modulo how many there are. */
const handle = fc.nat({ max: 7 });
const alignArb = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(1, 4, 16, 64) },
  { weight: 1, arbitrary: fc.constantFrom(0, 3, 24) },
);
const op = opsFor<DeferredConfig, DeferredSide>();

const ops = {
  alloc: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    weight: 8,
    arbitrary: (config, op) =>
      fc
        .tuple(
          sizeArb(
            config.capacityBytes,
            config.kind === 'buddy' ? config.minBlockBytes : config.poolAlignBytes,
          ),
          alignArb,
        )
        .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => alloc(s, command.sizeBytes, command.alignBytes),
  }),
  burst: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    // Scale configs only: up to BURST_ALLOCATIONS allocations of this size (until one fails), each
    // used by this frame's GPU work, then all released: dozens of releases wait for one value.
    weight: (config) => (isScaleConfig(config) ? 3 : 0),
    arbitrary: (config, op) =>
      fc
        .tuple(fc.integer({ min: 1, max: 2 * config.minBlockBytes }), alignArb)
        .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => {
      const offsets: (number | null)[] = [];
      for (let i = 0; i < BURST_ALLOCATIONS; i++) {
        const observed = alloc(s, command.sizeBytes, command.alignBytes) as {
          offsetBytes: number | null;
        };
        offsets.push(observed.offsetBytes);
        if (observed.offsetBytes === null) break;
        const handout = s.live[s.live.length - 1]!;
        s.timeline.submitRead(
          handout.offsetBytes,
          handout.sizeBytes,
          s.timeline.nextValueToSignal,
          handout.id,
        );
      }
      for (const offsetBytes of offsets) if (offsetBytes !== null) doRelease(s, offsetBytes);
      return { offsets, pendingBytes: s.allocator.pendingBytes() };
    },
  }),
  release: op({
    fields: { index: Nat() },
    weight: 6,
    arbitrary: (_config, op) => handle.map((i) => ({ op, index: i })),
    apply: (s, command) => {
      const handout = pickLive(s.live, command.index);
      return handout === undefined ? SKIPPED : doRelease(s, handout.offsetBytes);
    },
  }),
  use: op({
    fields: { index: Nat() },
    weight: 6,
    arbitrary: (_config, op) => handle.map((i) => ({ op, index: i })),
    apply: (s, command) => {
      const handout = pickLive(s.live, command.index);
      if (handout === undefined) return SKIPPED;
      const fenceValue = s.timeline.nextValueToSignal;
      s.timeline.submitRead(handout.offsetBytes, handout.sizeBytes, fenceValue, handout.id);
      return { fenceValue };
    },
  }),
  endFrame: op({
    fields: {},
    weight: 4,
    apply: (s) => {
      s.timeline.signal();
      const returned = s.allocator.endFrame();
      if (returned.length > 0) s.env.probe('release-returned');
      if (s.allocator.pendingBytes() > 0) s.env.probe('release-waits-for-gpu');
      if (s.live.length === 0 && s.allocator.heldCount() === 0 && s.nextHandoutId > 1)
        s.env.probe('everything-returned');
      return { returned };
    },
  }),
  gpuProgress: op({
    fields: { steps: Nat() },
    weight: 4,
    arbitrary: (_config, op) =>
      fc
        .oneof(
          { weight: 5, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.constantFrom(0, 2, 4) },
        )
        .map((steps) => ({ op, steps })),
    apply: (s, command) => ({ completedValue: s.timeline.advance(command.steps) }),
  }),
  poolAcquire: op({
    fields: { sizeClass: Nat() },
    weight: 6,
    arbitrary: (config, op) =>
      fc.nat({ max: config.objectSizesBytes.length - 1 }).map((sizeClass) => ({ op, sizeClass })),
    apply: (s, command) => doPoolAcquire(s, command.sizeClass % s.config.objectSizesBytes.length),
  }),
  poolRelease: op({
    fields: { index: Nat() },
    weight: 5,
    arbitrary: (_config, op) => handle.map((i) => ({ op, index: i })),
    apply: (s, command) => {
      const handout = pickLiveWhere(s, true, command.index);
      return handout === undefined ? SKIPPED : doPoolRelease(s, handout.offsetBytes);
    },
  }),
  poolTrim: op({
    fields: {},
    weight: 1,
    apply: (s) => {
      const returned = s.allocator.poolTrim();
      if (returned.length > 0) s.env.probe('pool-trim-returned');
      return { returned };
    },
  }),
  misuse: op({
    fields: { kind: Nat(), index: Nat() },
    weight: 1,
    arbitrary: (_config, op) =>
      fc
        .tuple(fc.nat({ max: DEFERRED_MISUSE_KINDS.length - 1 }), handle)
        .map(([kind, i]) => ({ op, kind, index: i })),
    apply: (s, command) => misuse(s, command.kind, command.index),
  }),
};

const configArb = (): fc.Arbitrary<DeferredConfig> =>
  fc.oneof(
    { weight: 2000, arbitrary: configShapeArb(fc.constantFrom(4, 8, 16, ORDINARY_MAX_UNITS)) },
    { weight: 1, arbitrary: scaleConfigArb() },
  );

/** The scale configs (a share of about 1 in 2000 of the generated ones, as for ring-upload). */
export function scaleConfigArb(): fc.Arbitrary<DeferredConfig> {
  return configShapeArb(fc.constantFrom(256, 512, 1024));
}

function configShapeArb(unitsArb: fc.Arbitrary<number>): fc.Arbitrary<DeferredConfig> {
  return fc
    .record({
      kind: fc.constantFrom(...DEFERRED_KINDS),
      grainBytes: fc.constantFrom(16, 64, 256),
      units: unitsArb,
      objectUnits: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
      oddObject: fc.boolean(),
      halfLimit: fc.boolean(),
      objectAlignBytes: fc.constantFrom(1, 16, 64),
    })
    .map(({ kind, grainBytes, units, objectUnits, oddObject, halfLimit, objectAlignBytes }) => {
      const capacityBytes = grainBytes * units;
      const objectSizesBytes = objectUnits.map(
        (count, i) => count * grainBytes - (oddObject && i === 0 ? 3 : 0),
      );
      return {
        kind,
        capacityBytes,
        minBlockBytes: grainBytes,
        poolAlignBytes: grainBytes,
        // Best fit only: Unreal sends requests above half the pool to the committed path.
        maxAllocationBytes: halfLimit ? capacityBytes / 2 : capacityBytes,
        objectSizesBytes,
        objectAlignBytes,
      };
    });
}

export const deferredFreeSystem = defineSystem({
  name: 'deferred-free',
  summary:
    'fence-delayed frees and a reusable-object pool in front of a buddy, best-fit or first-fit sub-allocator, behind a frame fence',
  config: {
    schema: DeferredFreeConfigSchema,
    check: (c) => {
      const problem = subAllocatorConfigProblem(c.kind, c);
      if (problem !== null) return problem;
      if (c.capacityBytes > 1 << 30)
        return `capacityBytes must be at most 2^30, got ${c.capacityBytes}`;
      if (c.objectSizesBytes.length < 1 || c.objectSizesBytes.some((size) => size < 1))
        return 'objectSizesBytes must list at least one positive size';
      if (new Set(c.objectSizesBytes).size !== c.objectSizesBytes.length)
        return 'objectSizesBytes must be distinct (one size per class)';
      if (!isPowerOfTwo(c.objectAlignBytes))
        return `objectAlignBytes must be a power of two, got ${c.objectAlignBytes}`;
      return null;
    },
    arbitrary: configArb,
  },
  ops,
  // A plan's weight replaces an op's default, except that a burst stays off in ordinary configs.
  weights: (defaults, plan, config) => {
    const weights = { ...defaults, ...plan?.weights };
    if (!isScaleConfig(config)) weights.burst = 0;
    // A swarm plan that kept only bursts runs the defaults in an ordinary config.
    if (Object.values(weights).every((weight) => weight <= 0)) return { ...defaults, burst: 0 };
    return weights;
  },
  // Every command is a new step (the invariants' per-step reading) and no alloc until it is one;
  // a contract error is answered by the runner (measured: catching it here too, around the
  // dispatch, cost about 7 % of a side-by-side step).
  around: (s, command, dispatch) => {
    s.step++;
    s.lastAllocResult = undefined;
    return dispatch(s, command);
  },
  sequence: { minLength: 1, maxLength: 200 },
  createModel: (config, env) => {
    env.probe(`kind-${config.kind}`);
    return deferredSide(
      config,
      env,
      (c, fence) => new DeferredFreeModel(createSubAllocatorModel(c.kind, c), fence, c),
    );
  },
  visual: deferredVisual,
  createImpl: (config, env) => deferredSide(config, env, createDeferredImpl),
  invariants,
  probes: [
    'kind-buddy',
    'kind-best-fit',
    'kind-first-fit',
    'release-after-earlier-use-in-flight',
    'release-waits-for-gpu',
    'release-returned',
    'pool-hit',
    'pool-miss-while-pooled',
    'pool-trim-returned',
    'reclaimed-on-failure',
    'alloc-null',
    'everything-returned',
  ],
});
