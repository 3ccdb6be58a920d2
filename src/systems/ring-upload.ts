/**
 * System `ring-upload`: the ring upload allocator with three states
 * (docs/spec/allocators.md#al-ring; docs/spec/engine.md#life-ring) against a simulated GPU queue
 * (src/gpu/queue-timeline.ts).
 *
 * Commands are plain data. `index` picks the k-th outstanding reservation (reservation order)
 * or the k-th submitted range (submission order) modulo how many there are, so every
 * subsequence of a program is still a program. Several reservations are usually outstanding at
 * once: they are the seed's "two recording threads" that both reserve before either submits.
 *
 * The GPU side is explicit: `submit` records GPU work that reads the range at the queue's next
 * fence value; `signal` closes the batch; `gpuProgress` moves the completed value; `collect`
 * hands the completed value to the ring. The invariants ask the timeline which bytes are in
 * flight, independent of the ring's own bookkeeping.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Bool, Int, Nat } from '../harness/schema.js';
import { RingUploadModel } from '../../models/ring-upload.js';
import { INITIAL_SLOTS, RingUploadAllocatorImpl } from '../alloc/ring-upload.js';
import { alignUp } from '../alloc/allocator.js';
import { pickLive, SKIPPED } from './common.js';
export { ringSide } from './ring-upload-side.js';
import { invariants } from './ring-upload-invariants.js';
import {
  RING_MAX_CAPACITY_BYTES,
  RING_MISUSE_KINDS,
  type RingSide,
  type RingUploadConfig,
  RingUploadConfigSchema,
  ringSide,
} from './ring-upload-side.js';
import { ringVisual } from './visuals.js';

function removeFrom(list: number[], offsetBytes: number): void {
  const at = list.indexOf(offsetBytes);
  if (at !== -1) list.splice(at, 1);
}

function liveCount(s: RingSide): number {
  return s.reserved.length + s.submitted.length;
}

function forget(s: RingSide, offsetBytes: number): void {
  removeFrom(s.reserved, offsetBytes);
  removeFrom(s.submitted, offsetBytes);
  s.handouts.delete(offsetBytes);
  s.lastFreedOffset = offsetBytes;
}

/** True if `offsetBytes` is not the oldest live handout (freeing it leaves a hole). */
function isOutOfOrder(s: RingSide, offsetBytes: number): boolean {
  const id = s.handouts.get(offsetBytes)?.id;
  if (id === undefined) return false;
  for (const other of s.handouts.values()) if (other.id < id) return true;
  return false;
}

function doCancel(s: RingSide, offsetBytes: number): Json {
  const outOfOrder = isOutOfOrder(s, offsetBytes);
  s.ring.cancel(offsetBytes);
  if (outOfOrder) s.env.probe('out-of-order-free');
  forget(s, offsetBytes);
  return {};
}

function doSubmit(s: RingSide, offsetBytes: number, fenceValue: number, endBatch: boolean): Json {
  s.ring.submit(offsetBytes, fenceValue);
  removeFrom(s.reserved, offsetBytes);
  if (!s.submitted.includes(offsetBytes)) {
    s.submitted.push(offsetBytes);
    if (s.submitted.length > INITIAL_SLOTS) s.env.probe('ring-in-flight-queue-grown');
  }
  s.lastSubmittedValue = Math.max(s.lastSubmittedValue, fenceValue);
  const handout = s.handouts.get(offsetBytes);
  if (handout !== undefined)
    s.timeline.submitRead(offsetBytes, handout.sizeBytes, fenceValue, handout.id);
  if (endBatch) s.timeline.signal();
  return { fenceValue };
}

function allocate(s: RingSide, sizeBytes: number, alignBytes: number): Json {
  const liveBefore = liveCount(s);
  const reservedBefore = s.reserved.length;
  const cursorBytes = liveBefore === 0 ? 0 : s.lastEndBytes;
  const wraps =
    Number.isSafeInteger(sizeBytes) &&
    sizeBytes > 0 &&
    alignBytes > 0 &&
    sizeBytes <= s.capacityBytes &&
    alignUp(cursorBytes, alignBytes) + sizeBytes > s.capacityBytes;
  const offsetBytes = s.ring.allocate(sizeBytes, alignBytes);
  s.lastAllocResult = offsetBytes;
  if (offsetBytes === null) {
    if (liveBefore > 0 && wraps) {
      s.env.probe('wrap-refused');
      const blocking = s.timeline.findInFlightOverlap(0, sizeBytes);
      if (blocking !== null) {
        s.env.probe('wrap-refused-by-in-flight');
        if (
          s.capacityBytes === 1024 &&
          sizeBytes === 256 &&
          blocking.offsetBytes === 0 &&
          blocking.sizeBytes === 512
        ) {
          s.env.probe('seed-1024-example');
        }
      }
    } else if (liveBefore > 0 && sizeBytes <= s.capacityBytes) {
      s.env.probe('tail-refused');
    }
    if (liveBefore > 0 && s.ring.freeBytes() === 0) s.env.probe('ring-full');
    return { offsetBytes: null };
  }
  const handoutId = s.nextHandoutId++;
  s.reserved.push(offsetBytes);
  s.handouts.set(offsetBytes, { id: handoutId, sizeBytes, alignBytes });
  s.lastEndBytes = offsetBytes + sizeBytes;
  if (liveBefore > 0 && wraps) s.env.probe('wrap-taken');
  if (liveBefore === 0 && cursorBytes === 0 && s.nextHandoutId > 2)
    s.env.probe('idle-ring-restarts-at-zero');
  if (reservedBefore >= 1) s.env.probe('two-reservations-outstanding');
  if (liveBefore + 1 > INITIAL_SLOTS) {
    s.env.probe('ring-records-grown');
    if (liveBefore + 1 > 4 * INITIAL_SLOTS) s.env.probe('ring-records-grown-three-times');
  }
  s.timeline.judgeHandOut('allocate', offsetBytes, sizeBytes, s.violations);
  return { offsetBytes };
}

function misuse(s: RingSide, kind: number, index: number): Json {
  const unknownOffset = s.capacityBytes + index;
  switch (RING_MISUSE_KINDS[kind % RING_MISUSE_KINDS.length]) {
    case 'cancel-submitted':
      return doCancel(s, pickLive(s.submitted, index) ?? unknownOffset);
    case 'submit-twice':
      return doSubmit(
        s,
        pickLive(s.submitted, index) ?? unknownOffset,
        s.timeline.nextValueToSignal,
        false,
      );
    case 'interior-offset': {
      const offsetBytes = pickLive([...s.reserved, ...s.submitted], index);
      const range = offsetBytes === undefined ? null : s.ring.rangeAt(offsetBytes);
      const target =
        range !== null && range.sizeBytes > 1
          ? range.offsetBytes + 1 + (index % (range.sizeBytes - 1))
          : unknownOffset;
      return index % 2 === 0
        ? doCancel(s, target)
        : doSubmit(s, target, s.timeline.nextValueToSignal, false);
    }
    case 'double-free':
      return doCancel(s, s.lastFreedOffset >= 0 ? s.lastFreedOffset : unknownOffset);
    case 'unknown-offset':
      return index % 2 === 0
        ? doCancel(s, unknownOffset)
        : doSubmit(s, unknownOffset, s.timeline.nextValueToSignal, false);
    case 'stale-fence': {
      const offsetBytes = pickLive(s.reserved, index);
      if (offsetBytes === undefined) return SKIPPED;
      return doSubmit(s, offsetBytes, s.lastSubmittedValue - 1, false);
    }
    default:
      throw new Error(`ring-upload: unknown misuse kind ${kind}`);
  }
}

/** Capacity of the largest ordinary config; a scale config is larger (and asks for small ranges). */
const ORDINARY_MAX_CAPACITY_BYTES = 4096;

/** A scale config: a ring of 8 to 64 KiB with mostly tiny requests, so dozens of ranges are in flight. */
export function isScaleConfig(config: RingUploadConfig): boolean {
  return config.capacityBytes > ORDINARY_MAX_CAPACITY_BYTES;
}

/** The scale configs (a share of about 1 in 2000 of the generated ones: measured, a larger one cost more than 5 % of a campaign's commands/s). */
export function scaleConfigArb(): fc.Arbitrary<RingUploadConfig> {
  return fc.record({
    capacityBytes: fc.integer({
      min: 2 * ORDINARY_MAX_CAPACITY_BYTES,
      max: 16 * ORDINARY_MAX_CAPACITY_BYTES,
    }),
  });
}

/**
 * Probes of the growth paths of the ring's record table and queues, reached by the scale configs:
 * counted in campaign summaries, not listed in `probes` (too rare a share for every property-suite
 * run to meet them); properties/ring-upload.test.ts runs the scale configs alone and requires them.
 */
export const GROWTH_PROBES = [
  'ring-records-grown',
  'ring-records-grown-three-times',
  'ring-in-flight-queue-grown',
] as const;

/** Scale requests: mostly a few bytes, so a burst puts dozens of ranges in flight. */
function scaleSizeArb(capacityBytes: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 64 }) },
    { weight: 1, arbitrary: sizeArb(capacityBytes) },
  );
}

function sizeArb(capacityBytes: number): fc.Arbitrary<number> {
  const third = Math.max(1, Math.floor(capacityBytes / 3));
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .constantFrom(capacityBytes / 2, capacityBytes / 4, capacityBytes / 8)
        .map((size) => Math.max(1, Math.floor(size))),
    },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: third }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: capacityBytes }) },
    { weight: 1, arbitrary: fc.constantFrom(0, -1, capacityBytes + 1) },
  );
}

const alignArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(1, 1, 4, 16, 256) },
  { weight: 1, arbitrary: fc.constantFrom(0, 3, 48, -4) },
);

/** Handles: the k-th outstanding reservation or submitted range modulo how many there are. */
const handle = fc.nat({ max: 7 });
const op = opsFor<RingUploadConfig, RingSide>();

/** Most ranges one burst reserves. */
const BURST_RANGES = 80;

const ops = {
  allocate: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    weight: 12,
    arbitrary: (config, op) =>
      fc
        .tuple(
          isScaleConfig(config)
            ? scaleSizeArb(config.capacityBytes)
            : sizeArb(config.capacityBytes),
          alignArb,
        )
        .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => allocate(s, command.sizeBytes, command.alignBytes),
  }),
  burst: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    // Scale configs only: reserves up to BURST_RANGES ranges of this size (until the ring refuses
    // one) and submits each with the queue's next value, then signals: many small requests in flight.
    weight: (config) => (isScaleConfig(config) ? 3 : 0),
    arbitrary: (_config, op) =>
      fc
        .tuple(fc.integer({ min: 1, max: 64 }), alignArb)
        .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => {
      const offsets: (number | null)[] = [];
      for (let i = 0; i < BURST_RANGES; i++) {
        const observed = allocate(s, command.sizeBytes, command.alignBytes) as {
          offsetBytes: number | null;
        };
        offsets.push(observed.offsetBytes);
        if (observed.offsetBytes === null) break;
        doSubmit(s, observed.offsetBytes, s.timeline.nextValueToSignal, false);
      }
      s.timeline.signal();
      return { offsets };
    },
  }),
  submit: op({
    fields: { index: Nat(), endBatch: Bool() },
    weight: 7,
    // Mostly the oldest reservation (index 0), often another one: submit order != reservation order.
    arbitrary: (_config, op) =>
      fc
        .tuple(
          fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: handle }),
          fc.boolean(),
        )
        .map(([i, endBatch]) => ({ op, index: i, endBatch })),
    apply: (s, command) => {
      const offsetBytes = pickLive(s.reserved, command.index);
      if (offsetBytes === undefined) return SKIPPED;
      if (s.reserved.indexOf(offsetBytes) > 0) s.env.probe('submit-out-of-reservation-order');
      return doSubmit(s, offsetBytes, s.timeline.nextValueToSignal, command.endBatch);
    },
  }),
  cancel: op({
    fields: { index: Nat() },
    weight: 2,
    arbitrary: (_config, op) => handle.map((i) => ({ op, index: i })),
    apply: (s, command) => {
      const offsetBytes = pickLive(s.reserved, command.index);
      if (offsetBytes === undefined) return SKIPPED;
      return doCancel(s, offsetBytes);
    },
  }),
  signal: op({
    fields: {},
    weight: 2,
    apply: (s) => ({ signalled: s.timeline.signal() }),
  }),
  gpuProgress: op({
    fields: { steps: Nat() },
    weight: 4,
    arbitrary: (_config, op) =>
      fc
        .oneof(
          { weight: 5, arbitrary: fc.integer({ min: 1, max: 2 }) },
          { weight: 1, arbitrary: fc.constantFrom(0, 5) },
        )
        .map((steps) => ({ op, steps })),
    apply: (s, command) => ({ completedValue: s.timeline.advance(command.steps) }),
  }),
  collect: op({
    fields: {},
    weight: 4,
    apply: (s) => {
      const freed = s.ring.collect(s.timeline.completedValue);
      if (freed.length >= 2) s.env.probe('collect-several');
      if (freed.some((offsetBytes) => isOutOfOrder(s, offsetBytes)))
        s.env.probe('out-of-order-free');
      for (const offsetBytes of freed) forget(s, offsetBytes);
      return { freed };
    },
  }),
  misuse: op({
    fields: { kind: Nat(), index: Nat() },
    weight: 1,
    arbitrary: (_config, op) =>
      fc
        .tuple(fc.nat({ max: RING_MISUSE_KINDS.length - 1 }), handle)
        .map(([kind, i]) => ({ op, kind, index: i })),
    apply: (s, command) => misuse(s, command.kind, command.index),
  }),
};

export const ringUploadSystem = defineSystem({
  name: 'ring-upload',
  summary:
    'ring upload allocator: reserved -> submitted(value) -> completed, wrap-around, in-order collect, against a simulated GPU queue',
  config: {
    schema: RingUploadConfigSchema,
    check: ({ capacityBytes }) =>
      capacityBytes < 1 || capacityBytes > RING_MAX_CAPACITY_BYTES
        ? `capacityBytes must be 1..${RING_MAX_CAPACITY_BYTES}, got ${capacityBytes}`
        : null,
    arbitrary: () =>
      fc.oneof(
        {
          weight: 2000,
          arbitrary: fc.record({
            capacityBytes: fc.oneof(
              { weight: 4, arbitrary: fc.constant(1024) },
              { weight: 3, arbitrary: fc.constantFrom(64, 256, ORDINARY_MAX_CAPACITY_BYTES) },
              { weight: 2, arbitrary: fc.integer({ min: 1, max: 2048 }) },
            ),
          }),
        },
        { weight: 1, arbitrary: scaleConfigArb() },
      ),
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
  // Every command is a new step (the invariants' per-step cache) and no allocate until it is one;
  // a contract error is answered by the runner (measured: catching it here too, around the
  // dispatch, cost about 7 % of a side-by-side step).
  around: (s, command, dispatch) => {
    s.step++;
    s.lastAllocResult = undefined;
    return dispatch(s, command);
  },
  sequence: { minLength: 1, maxLength: 200 },
  createModel: (config, env) => ringSide(new RingUploadModel(config.capacityBytes), config, env),
  visual: ringVisual,
  createImpl: (config, env) =>
    ringSide(new RingUploadAllocatorImpl(config.capacityBytes), config, env),
  invariants,
  probes: [
    'two-reservations-outstanding',
    'submit-out-of-reservation-order',
    'wrap-taken',
    'wrap-refused',
    'wrap-refused-by-in-flight',
    'seed-1024-example',
    'tail-refused',
    'ring-full',
    'out-of-order-free',
    'collect-several',
    'idle-ring-restarts-at-zero',
  ],
});
