/**
 * What the three sub-allocator systems (`alloc-buddy`, `alloc-best-fit`, `alloc-first-fit`) and
 * the user-allocator system share: the op records (`allocOps`, written once), the side (an
 * allocator plus the live allocations as its caller sees them), the per-command bookkeeping
 * (`allocStep`, every system's `around`), the weights rule (`allocOpWeights`, every system's
 * `weights`) and the invariants of the common contract (spec/allocators.md "Common contract").
 *
 * Commands are plain data:
 *   {op:'alloc', sizeBytes, alignBytes}   sizes may be 0 or negative and alignments not powers
 *                                         of two: those are bad requests (typed errors), drawn
 *                                         by the alloc op's variant 'badAlloc'
 *   {op:'free', index}                    frees the live allocation number `index` modulo the
 *                                         live count, in allocation order (skipped when none)
 *   {op:'freeAgain'}                      frees the offset freed last once more (double free,
 *                                         unless it was handed out again meanwhile)
 *   {op:'freeInterior', index, deltaBytes} frees live.offset + 1 + deltaBytes % live.size
 *   {op:'freeUnknown', offsetBytes}       frees a raw offset
 *   {op:'allocBurst', count, sizeBytes, spreadBytes, alignBytes}
 *                                         up to `count` allocs in one step (it stops at the
 *                                         first null), request i of size
 *                                         sizeBytes + (i * 37) % (spreadBytes + 1)
 *   {op:'freeBurst', index, count, stride} frees up to `count` live allocations, number
 *                                         (index + k * stride) modulo the live count each time
 * so every subsequence of a program is still a program. The bursts are the scale plan: they are
 * generated only for scale configs (a small share of configs with thousands of grains, see
 * `isScaleConfig` of each system), where one run reaches thousands of live blocks and the
 * allocators' internal tables grow several times; elsewhere their weight is 0. Raw frees go to the allocator as they
 * are; whether they are errors is the model's answer, not the generator's.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import type { GenerationPlan, Invariant, RunEnv } from '../harness/system.js';
import { opsFor, type OpName } from '../harness/define-system.js';
import { Int, Nat } from '../harness/schema.js';
import { alignUp, inspectBlocks, inspectLive, isPowerOfTwo, type Allocator, type BlockAllocator, type BlockInfo } from '../alloc/allocator.js';
import { contractErrorObservation } from '../contract.js';
import { bothSides, searchByOffset, SKIPPED } from './common.js';

export { bothSides };

/** A live allocation as the caller tracks it. */
export interface TrackedAllocation {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  readonly alignBytes: number;
}

export interface AllocSide<A extends Allocator = Allocator> {
  readonly allocator: A;
  readonly capacityBytes: number;
  readonly env: RunEnv;
  /** True for the reference model (reports probes and drains model events). */
  readonly isModel: boolean;
  /** Live allocations in allocation order; `free` handles index into it. */
  readonly live: TrackedAllocation[];
  /**
   * `live` sorted by offset (ties in allocation order, as a stable sort of `live` would put
   * them), kept in step by binary-search insert and remove (several invariants need it).
   */
  readonly sortedLive: TrackedAllocation[];
  /** The offset the last successful free released, for `freeAgain`. */
  lastFreedOffsetBytes: number | null;
  /** Result of the last alloc command of the current step; undefined when the step was no alloc. */
  lastAllocResult: number | null | undefined;
  /** The contract-error code the current step's command threw, or null when it returned (see `matchesModel`). */
  lastErrorCode: string | null;
  /** Broken promises of the allocator the side saw (a non-integer return, a free of nothing live). */
  readonly violations: string[];
  /** Commands applied so far (the sampled checks read it). */
  steps: number;
  /** The size and alignment of the last alloc request (valid or not). */
  lastSizeBytes: number;
  lastAlignBytes: number;
  /** The most live allocations at once so far (growth probes fire when it crosses a threshold). */
  peakLive: number;
  /** The most free blocks seen at once (counted only past 128 live allocations, on the model). */
  peakFreeBlocks: number;
}

/** Reports only (SystemDef.trace): the offset the step's alloc returned, when the step was an alloc. */
export function allocTrace<A extends Allocator>(s: AllocSide<A>): Json {
  return s.lastAllocResult === undefined ? null : { offsetBytes: s.lastAllocResult };
}

export function allocSide<A extends Allocator>(allocator: A, capacityBytes: number, env: RunEnv, isModel: boolean): AllocSide<A> {
  return {
    allocator,
    capacityBytes,
    env,
    isModel,
    live: [],
    sortedLive: [],
    lastFreedOffsetBytes: null,
    lastAllocResult: undefined,
    lastErrorCode: null,
    violations: [],
    steps: 0,
    lastSizeBytes: 0,
    lastAlignBytes: 0,
    peakLive: 0,
    peakFreeBlocks: 0,
  };
}

/** Models report what their policy did (splits, merges, padding) as events; probes count them. */
export interface EventSource {
  drainEvents(): string[];
}

function hasEvents<A extends Allocator>(allocator: A): allocator is A & EventSource {
  return 'drainEvents' in allocator && typeof allocator.drainEvents === 'function';
}

/** Adds a new live allocation to both tracked lists (sorted: after every equal offset). */
function trackAllocation(s: AllocSide, allocation: TrackedAllocation): void {
  s.live.push(allocation);
  const sorted = s.sortedLive;
  const at = searchByOffset(sorted, allocation.offsetBytes, true);
  if (at === sorted.length) sorted.push(allocation);
  else sorted.splice(at, 0, allocation);
}

/** Removes the tracked allocation (an element of `live`) from the sorted list. */
function untrackSorted(s: AllocSide, allocation: TrackedAllocation): void {
  const sorted = s.sortedLive;
  for (let i = searchByOffset(sorted, allocation.offsetBytes, false); i < sorted.length; i++) {
    if (sorted[i] === allocation) {
      sorted.splice(i, 1);
      return;
    }
  }
  throw new Error('allocator system: the sorted live list lost an allocation');
}

/** Frees `offsetBytes` and keeps the tracked live list in step. */
function freeOffset(s: AllocSide, offsetBytes: number): Json {
  s.allocator.free(offsetBytes);
  const live = s.live;
  let index = -1;
  for (let i = 0; i < live.length; i++) {
    if (live[i]!.offsetBytes === offsetBytes) {
      index = i;
      break;
    }
  }
  if (index === -1) {
    s.violations.push(`free(${offsetBytes}) was accepted but nothing live starts there`);
  } else {
    untrackSorted(s, live[index]!);
    live.splice(index, 1);
  }
  s.lastFreedOffsetBytes = offsetBytes;
  if (s.isModel && s.live.length === 0) s.env.probe('freed-everything');
  return {};
}

/** Asks the allocator for a block and tracks what it answers (an answer that is no offset is recorded as a violation). */
function allocRequest(s: AllocSide, sizeBytes: number, alignBytes: number): Json {
  s.lastSizeBytes = sizeBytes;
  s.lastAlignBytes = alignBytes;
  return { offsetBytes: allocOne(s, sizeBytes, alignBytes) };
}

/** One alloc call, tracked; its answer (null for no room or an answer that is no offset). */
function allocOne(s: AllocSide, sizeBytes: number, alignBytes: number): number | null {
  const result: unknown = s.allocator.alloc(sizeBytes, alignBytes);
  let offsetBytes: number | null;
  if (result === null) {
    offsetBytes = null;
  } else if (typeof result === 'number' && Number.isSafeInteger(result)) {
    offsetBytes = result;
  } else {
    s.violations.push(`alloc(${sizeBytes}, ${alignBytes}) returned ${typeof result === 'number' ? result : JSON.stringify(result) ?? String(result)}, neither an integer offset nor null`);
    offsetBytes = null;
  }
  s.lastAllocResult = offsetBytes;
  if (offsetBytes !== null) trackAllocation(s, { offsetBytes, sizeBytes, alignBytes });
  else if (s.isModel) {
    s.env.probe(s.live.length === 0 ? 'too-large-for-empty' : 'out-of-memory');
    countNullAnswer(s, s.env, sizeBytes, alignBytes);
  }
  return offsetBytes;
}

/** Multiplier of the size spread inside a burst (request i adds (i * 37) % (spread + 1) bytes). */
const BURST_SPREAD_STEP = 37;

/**
 * Up to `count` allocs in one step, stopping after the first null answer (a caller filling a
 * pool stops when it is full; a model scan of a full pool per further request would make a scale
 * run's cost quadratic for nothing); the observation lists every answer.
 */
function allocBurst(s: AllocSide, count: number, sizeBytes: number, spreadBytes: number, alignBytes: number): Json {
  const offsets: (number | null)[] = [];
  for (let i = 0; i < count; i++) {
    const size = sizeBytes + ((i * BURST_SPREAD_STEP) % (spreadBytes + 1));
    s.lastSizeBytes = size;
    s.lastAlignBytes = alignBytes;
    const offsetBytes = allocOne(s, size, alignBytes);
    offsets.push(offsetBytes);
    if (offsetBytes === null) break;
  }
  return { offsetBytes: offsets };
}

/** Frees up to `count` live allocations, number (index + k * stride) modulo the live count each. */
function freeBurst(s: AllocSide, index: number, count: number, stride: number): Json {
  if (s.live.length === 0) return SKIPPED;
  let freed = 0;
  for (let k = 0; k < count && s.live.length > 0; k++) {
    const at = (index + k * stride) % s.live.length;
    const allocation = s.live[at]!;
    s.allocator.free(allocation.offsetBytes);
    untrackSorted(s, allocation);
    s.live.splice(at, 1);
    s.lastFreedOffsetBytes = allocation.offsetBytes;
    freed++;
  }
  if (s.isModel && s.live.length === 0) s.env.probe('freed-everything');
  return { freed };
}

/**
 * Growth probes: the allocators' node tables start at 16 entries and double, so 64 live
 * allocations mean at least two doublings, 1024 at least six and 2048 at least seven; the model
 * reports each threshold once per run, when its live count first crosses it. Free blocks beyond
 * 256 grow the per-size and per-offset indexes and their scratch arrays.
 */
export const GROWTH_PROBES = ['live-over-64', 'live-over-1024', 'live-over-2048', 'free-blocks-over-256'] as const;

function growthProbes(s: AllocSide): void {
  const live = s.live.length;
  if (live > s.peakLive) {
    const before = s.peakLive;
    s.peakLive = live;
    if (before <= 64 && live > 64) s.env.probe('live-over-64');
    if (before <= 1024 && live > 1024) s.env.probe('live-over-1024');
    if (before <= 2048 && live > 2048) s.env.probe('live-over-2048');
  }
  const allocator = s.allocator;
  if (live >= 128 && s.peakFreeBlocks <= 256 && isBlockAllocator(allocator)) {
    // The model's block view is its list: its length costs nothing.
    const freeBlocks = inspectBlocks(allocator).length - live;
    if (freeBlocks > 256) s.env.probe('free-blocks-over-256');
    if (freeBlocks > s.peakFreeBlocks) s.peakFreeBlocks = freeBlocks;
  }
}

function isBlockAllocator(allocator: Allocator): allocator is BlockAllocator {
  return 'blocksView' in allocator || 'blocks' in allocator;
}

/** The probe name of each contract-error code (built once, not per error). */
const ERROR_PROBES = new Map<string, string>();

function errorProbe(code: string): string {
  let probe = ERROR_PROBES.get(code);
  if (probe === undefined) {
    probe = `error-${code}`;
    ERROR_PROBES.set(code, probe);
  }
  return probe;
}

/**
 * The `around` of every allocator system: the per-command bookkeeping. It clears the step's alloc
 * result and error code, applies the command with `dispatch`, answers a contract error as the
 * observation the runner makes of it, `{ error: code }` (`contractErrorObservation`, without a
 * second unwind), records its code and counts its probe, and drains the model's events. Any other
 * exception is thrown on (its code: 'exception'). Called once per command; builds nothing.
 */
export function allocStep<S extends AllocSide, Cmd>(s: S, command: Cmd, dispatch: (s: S, command: Cmd) => Json): Json {
  s.lastAllocResult = undefined;
  s.lastErrorCode = null;
  s.steps++;
  try {
    return dispatch(s, command);
  } catch (error) {
    const observation = contractErrorObservation(error);
    if (observation === undefined) {
      s.lastErrorCode = 'exception';
      throw error;
    }
    s.lastErrorCode = observation.error;
    if (s.isModel) s.env.probe(errorProbe(observation.error));
    return observation;
  } finally {
    const allocator = s.allocator;
    if (s.isModel) {
      if (hasEvents(allocator)) {
        const events = allocator.drainEvents();
        for (let i = 0; i < events.length; i++) s.env.probe(events[i]!);
      }
      if (s.live.length > s.peakLive || s.live.length >= 128) growthProbes(s);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Generation

/** Powers of two from 1 up to and including the first one >= limit. */
function powersOfTwoUpTo(limit: number): number[] {
  const powers = [1];
  while (powers[powers.length - 1]! < limit) powers.push(powers[powers.length - 1]! * 2);
  return powers;
}

/**
 * Request sizes on a log scale relative to the capacity (so both tiny and exhausting requests
 * are common), plus boundaries: the grains the allocator rounds to and their neighbours, the
 * capacity and half of it.
 */
export function sizeArb(capacityBytes: number, grainsBytes: readonly number[]): fc.Arbitrary<number> {
  const maxExponent = Math.ceil(Math.log2(capacityBytes)) + 1;
  const logScale = fc
    .tuple(fc.integer({ min: 0, max: maxExponent }), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([exponent, fraction]) => Math.max(1, Math.floor(2 ** exponent * (1 + fraction))));
  const boundaries = new Set<number>([1, capacityBytes, Math.max(1, Math.floor(capacityBytes / 2)), capacityBytes + 1]);
  for (const grain of grainsBytes) for (const value of [grain - 1, grain, grain + 1, 2 * grain]) if (value >= 1) boundaries.add(value);
  return fc.oneof({ weight: 4, arbitrary: logScale }, { weight: 1, arbitrary: fc.constantFrom(...[...boundaries].sort((a, b) => a - b)) });
}

/** Alignments: mostly small powers of two, sometimes up to the capacity. */
export function alignArb(capacityBytes: number, extraBytes: readonly number[] = []): fc.Arbitrary<number> {
  const powers = powersOfTwoUpTo(Math.max(capacityBytes, ...extraBytes));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(1, 2, 4, 8, 16, 256) },
    { weight: 2, arbitrary: fc.constantFrom(...powers) },
    { weight: 1, arbitrary: fc.constantFrom(...extraBytes.length > 0 ? extraBytes : [1]) },
  );
}

/** Bad requests: size 0 or negative, or an alignment that is no power of two. */
function badAllocArb(capacityBytes: number, op: OpName): fc.Arbitrary<{ op: OpName; sizeBytes: number; alignBytes: number }> {
  return fc.oneof(
    fc.record({ op: fc.constant(op), sizeBytes: fc.integer({ min: -2, max: 0 }), alignBytes: fc.constantFrom(1, 16, 3) }),
    // 2^49 - 1 and 2^50 + 1: Math.log2 rounds both to integers, a trap for a power-of-two test.
    fc.record({ op: fc.constant(op), sizeBytes: fc.integer({ min: 1, max: capacityBytes }), alignBytes: fc.constantFrom(0, 3, 6, 24, 768, 2 ** 49 - 1, 2 ** 50 + 1) }),
  );
}

/** Probes every sub-allocator system reports (plus its policy's own). */
export const COMMON_ALLOC_PROBES = [
  'out-of-memory',
  'too-large-for-empty',
  'freed-everything',
  'double-free',
  'free-merged',
  'error-BAD_SIZE',
  'error-BAD_ALIGN',
  'error-BAD_FREE',
] as const;

/** The default weight of each generator entry (op or variant) of the alloc ops. */
export const DEFAULT_ALLOC_WEIGHTS = {
  alloc: 10,
  badAlloc: 1,
  free: 7,
  freeAgain: 1,
  freeInterior: 1,
  freeUnknown: 1,
  allocBurst: 0,
  freeBurst: 0,
};

/** The weights of the bursts in a scale config (whatever the plan says: the plan is a swarm draw of ordinary ops). */
export const SCALE_BURST_WEIGHTS = { allocBurst: 3, freeBurst: 1 } as const;

/** Most requests of one burst. */
export const MAX_BURST = 512;

/** The generator entries of the scale plan. */
const BURST_ENTRIES: ReadonlySet<string> = new Set(['allocBurst', 'freeBurst']);

/** The generator entries that misuse the allocator (off for a user's allocator). */
const MISUSE_ENTRIES: ReadonlySet<string> = new Set(['badAlloc', 'freeAgain', 'freeInterior', 'freeUnknown']);

/**
 * The entry weights of one generated command (the `weights` hook of the allocator systems): the
 * defaults, overridden by the plan. Bad requests are alloc commands, so unless the plan names
 * 'badAlloc' itself they scale with the plan's 'alloc' weight, keeping the default ratio rounded
 * to an integer (at least 1 while alloc is on). Without misuse every misuse entry has weight 0.
 * The bursts follow the config, not the plan: SCALE_BURST_WEIGHTS in a scale config, 0 in any
 * other (a plan that enabled nothing else then gets alloc at weight 1).
 */
export function allocOpWeights(defaults: Readonly<Record<string, number>>, plan?: GenerationPlan, misuse = true, scale = false): Record<string, number> {
  const base: Record<string, number> = { ...defaults };
  if (!misuse) for (const entry of Object.keys(base)) if (MISUSE_ENTRIES.has(entry)) base[entry] = 0;
  const planned = plan?.weights;
  const weights = { ...base };
  if (planned !== undefined) {
    for (const entry of Object.keys(weights)) {
      const value = planned[entry];
      if (value !== undefined) weights[entry] = misuse || base[entry]! > 0 ? value : 0;
    }
    if (planned.badAlloc === undefined && misuse && planned.alloc !== undefined && Object.hasOwn(base, 'badAlloc')) {
      weights.badAlloc = planned.alloc === 0 ? 0 : Math.max(1, Math.round((planned.alloc * base.badAlloc!) / base.alloc!));
    }
  }
  let ordinary = 0;
  for (const entry of Object.keys(weights)) {
    if (BURST_ENTRIES.has(entry)) weights[entry] = scale ? SCALE_BURST_WEIGHTS[entry as keyof typeof SCALE_BURST_WEIGHTS] : 0;
    else ordinary += weights[entry]!;
  }
  if (ordinary === 0 && !scale && Object.hasOwn(weights, 'alloc')) weights.alloc = 1;
  return weights;
}

/** What the alloc ops read of a system's config. */
export interface AllocOpsConfig {
  readonly capacityBytes: number;
}

/**
 * Sizes of a burst's requests: log-uniform up to capacity / 4096 (at least 1), so that a few
 * bursts fill a scale config with thousands of live blocks.
 */
function burstSizeArb(capacityBytes: number): fc.Arbitrary<number> {
  const maxExponent = Math.max(0, Math.floor(Math.log2(capacityBytes / 4096)));
  return fc
    .tuple(fc.integer({ min: 0, max: maxExponent }), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([exponent, fraction]) => Math.max(1, Math.floor(2 ** exponent * (1 + fraction))));
}

/**
 * The five alloc ops, written once: every allocator system builds its ops from these records
 * (a user's allocator takes `alloc` and `free`). `grainsBytes` names the sizes the generator
 * puts boundaries around (block grains, pool alignment). Observations: `{ offsetBytes }` for an
 * alloc, `{}` for a free, SKIPPED when a handle resolves to nothing.
 */
export function allocOps<C extends AllocOpsConfig>(grainsBytes: (config: C) => readonly number[]) {
  const op = opsFor<C, AllocSide>();
  /** Handles: the k-th live allocation modulo the live count. */
  const index = fc.nat({ max: 255 });
  return {
    alloc: op({
      fields: { sizeBytes: Int(), alignBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.alloc,
      arbitrary: (config, op) => {
        const grains = grainsBytes(config);
        return fc.tuple(sizeArb(config.capacityBytes, grains), alignArb(config.capacityBytes, grains)).map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes }));
      },
      variants: { badAlloc: { weight: DEFAULT_ALLOC_WEIGHTS.badAlloc, arbitrary: (config, op) => badAllocArb(config.capacityBytes, op) } },
      apply: (s, command) => allocRequest(s, command.sizeBytes, command.alignBytes),
    }),
    free: op({
      fields: { index: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.free,
      arbitrary: (_config, op) => index.map((i) => ({ op, index: i })),
      apply: (s, command) => {
        if (s.live.length === 0) return SKIPPED;
        return freeOffset(s, s.live[command.index % s.live.length]!.offsetBytes);
      },
    }),
    freeAgain: op({
      fields: {},
      weight: DEFAULT_ALLOC_WEIGHTS.freeAgain,
      apply: (s) => {
        const offsetBytes = s.lastFreedOffsetBytes;
        if (offsetBytes === null) return SKIPPED;
        if (s.isModel && !s.live.some((allocation) => allocation.offsetBytes === offsetBytes)) s.env.probe('double-free');
        return freeOffset(s, offsetBytes);
      },
    }),
    freeInterior: op({
      fields: { index: Nat(), deltaBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeInterior,
      arbitrary: (config, op) => fc.tuple(index, fc.nat({ max: config.capacityBytes })).map(([i, deltaBytes]) => ({ op, index: i, deltaBytes })),
      apply: (s, command) => {
        if (s.live.length === 0) return SKIPPED;
        const target = s.live[command.index % s.live.length]!;
        return freeOffset(s, target.offsetBytes + 1 + (command.deltaBytes % target.sizeBytes));
      },
    }),
    freeUnknown: op({
      fields: { offsetBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeUnknown,
      arbitrary: (config, op) => fc.nat({ max: config.capacityBytes + 1 }).map((offsetBytes) => ({ op, offsetBytes })),
      apply: (s, command) => freeOffset(s, command.offsetBytes),
    }),
    allocBurst: op({
      fields: { count: Nat(), sizeBytes: Nat(), spreadBytes: Nat(), alignBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.allocBurst,
      arbitrary: (config, op) => {
        const grains = grainsBytes(config);
        const sizes = burstSizeArb(config.capacityBytes);
        return fc
          .tuple(fc.integer({ min: 1, max: MAX_BURST }), sizes, sizes, fc.constantFrom(1, 1, 8, 16, 256, ...grains))
          .map(([count, sizeBytes, spreadBytes, alignBytes]) => ({ op, count, sizeBytes, spreadBytes, alignBytes: isPowerOfTwo(alignBytes) ? alignBytes : 1 }));
      },
      // A bad request in a burst (from a file) throws its contract error at the first call.
      apply: (s, command) => allocBurst(s, Math.min(command.count, MAX_BURST), command.sizeBytes, command.spreadBytes, command.alignBytes),
    }),
    freeBurst: op({
      fields: { index: Nat(), count: Nat(), stride: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeBurst,
      arbitrary: (_config, op) =>
        fc.tuple(index, fc.integer({ min: 1, max: MAX_BURST }), fc.constantFrom(0, 1, 2, 3, 7)).map(([i, count, stride]) => ({ op, index: i, count, stride })),
      apply: (s, command) => freeBurst(s, command.index, Math.min(command.count, MAX_BURST), command.stride),
    }),
  };
}

/** The op records of an allocator system with config `C`. */
export type AllocOps<C extends AllocOpsConfig> = ReturnType<typeof allocOps<C>>;

// ---------------------------------------------------------------------------------------------
// Invariants

function sortedByOffset(s: AllocSide): TrackedAllocation[] {
  return s.sortedLive;
}

/**
 * offsetBytes % alignBytes !== 0 for a power-of-two alignment, by a bit mask when both fit 31
 * bits (the same answer for every integer offset).
 */
function misaligned(offsetBytes: number, alignBytes: number): boolean {
  if ((offsetBytes | 0) === offsetBytes && alignBytes <= 0x40000000) return (offsetBytes & (alignBytes - 1)) !== 0;
  return offsetBytes % alignBytes !== 0;
}

export const inBoundsAligned: Invariant<AllocSide, unknown> = {
  name: 'in-bounds-aligned',
  description: 'every live allocation lies inside [0, capacity) and starts at a multiple of its alignment',
  check: bothSides((s) => {
    for (const allocation of s.live) {
      const { offsetBytes, sizeBytes, alignBytes } = allocation;
      if (offsetBytes < 0 || offsetBytes + sizeBytes > s.capacityBytes) {
        return `[${offsetBytes}, ${offsetBytes + sizeBytes}) leaves [0, ${s.capacityBytes})`;
      }
      // A non-power-of-two alignment was a bad request: if an allocator accepted it, the
      // observation (error against offset) reports that, not this invariant.
      if (isPowerOfTwo(alignBytes) && misaligned(offsetBytes, alignBytes)) return `offset ${offsetBytes} is not aligned to ${alignBytes}`;
    }
    return null;
  }),
};

export const noOverlap: Invariant<AllocSide, unknown> = {
  name: 'no-overlap',
  description: 'no two live allocations share a byte',
  check: bothSides((s) => {
    const sorted = sortedByOffset(s);
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted[i - 1]!;
      const after = sorted[i]!;
      if (before.offsetBytes + before.sizeBytes > after.offsetBytes) {
        return `[${before.offsetBytes}, ${before.offsetBytes + before.sizeBytes}) overlaps [${after.offsetBytes}, ${after.offsetBytes + after.sizeBytes})`;
      }
    }
    return null;
  }),
};

export const honestAnswers: Invariant<AllocSide, unknown> = {
  name: 'honest-answers',
  description: 'alloc returns an integer offset or null; a free is accepted only for the start of a live allocation',
  check: bothSides((s) => (s.violations.length === 0 ? null : s.violations[0]!)),
};

/** The caller's live sizes, summed. */
function trackedBytes(s: AllocSide): number {
  let total = 0;
  for (const allocation of s.live) total += allocation.sizeBytes;
  return total;
}

/**
 * One side's byte counts against what they count: free bytes are the free blocks' bytes, used
 * bytes the caller's live sizes, waste the allocated blocks' bytes beyond the caller's sizes;
 * the allocator's live list is the caller's.
 */
function ownAccounting(s: AllocSide<BlockAllocator>): string | null {
  const a = s.allocator;
  const freeBytes = a.freeBytes();
  const usedBytes = a.usedBytes();
  const wasteBytes = a.wasteBytes();
  if (freeBytes < 0 || usedBytes < 0 || wasteBytes < 0) return `negative count: free ${freeBytes}, used ${usedBytes}, waste ${wasteBytes}`;
  const heldBytes = trackedBytes(s);
  if (usedBytes !== heldBytes) return `usedBytes ${usedBytes} but the caller holds ${heldBytes} bytes`;
  let freeBlockBytes = 0;
  let allocatedBlockBytes = 0;
  for (const block of inspectBlocks(a)) {
    if (block.free) freeBlockBytes += block.sizeBytes;
    else allocatedBlockBytes += block.sizeBytes;
  }
  if (freeBytes !== freeBlockBytes) return `freeBytes() says ${freeBytes}, the free blocks hold ${freeBlockBytes}`;
  if (wasteBytes !== allocatedBlockBytes - heldBytes) {
    return `wasteBytes() says ${wasteBytes}, the allocated blocks hold ${allocatedBlockBytes} bytes for ${heldBytes} live bytes`;
  }
  if (freeBytes + usedBytes + wasteBytes !== s.capacityBytes) {
    return `free ${freeBytes} + used ${usedBytes} + waste ${wasteBytes} != capacity ${s.capacityBytes}`;
  }
  const reported = inspectLive(a);
  const tracked = sortedByOffset(s);
  if (reported.length !== tracked.length) return `the allocator reports ${reported.length} live allocations, the caller holds ${tracked.length}`;
  for (let i = 0; i < tracked.length; i++) {
    if (reported[i]!.offsetBytes !== tracked[i]!.offsetBytes || reported[i]!.sizeBytes !== tracked[i]!.sizeBytes) {
      return `live allocation #${i} is ${JSON.stringify(reported[i])}, the caller holds ${JSON.stringify(tracked[i])}`;
    }
  }
  return null;
}

export const accounting: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'accounting',
  description:
    "free + used + waste = capacity, where freeBytes() must be the free blocks' bytes, usedBytes() the caller's live sizes and wasteBytes() the allocated blocks' bytes beyond them; the allocator's live list is the caller's",
  check: bothSides(ownAccounting),
};

/**
 * The cross-side half of the byte counts: both sides' counts are checked against their own
 * blocks by `accounting`, this compares them with each other. It runs after
 * no-false-out-of-memory (a request only the model placed is that check's finding) and skips a
 * step one side refused with a contract error and the other did not: the observation reports
 * that, and the bytes after two different answers would only restate it.
 */
export const matchesModel: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'matches-model',
  description: 'after every step both sides accepted or refused alike, the implementation reports the free and waste bytes the model reports',
  check: (model, impl) => {
    if (model.lastErrorCode !== impl.lastErrorCode) return null;
    const modelFree = model.allocator.freeBytes();
    const implFree = impl.allocator.freeBytes();
    const modelWaste = model.allocator.wasteBytes();
    const implWaste = impl.allocator.wasteBytes();
    if (modelFree !== implFree || modelWaste !== implWaste) {
      return `implementation free ${implFree} / waste ${implWaste} bytes, model free ${modelFree} / waste ${modelWaste}`;
    }
    return null;
  },
};

/** Reads only `lastAllocResult`, so the ring-upload and deferred-free sides (which hold it with the same meaning) use it too. */
export const noFalseOutOfMemory: Invariant<Pick<AllocSide, 'lastAllocResult'>, unknown> = {
  name: 'no-false-out-of-memory',
  description: 'when the model finds room for a request, the implementation does too',
  check: (model, impl) =>
    model.lastAllocResult !== undefined && model.lastAllocResult !== null && impl.lastAllocResult === null
      ? `the model placed the request at ${model.lastAllocResult}, the implementation answered null`
      : null,
};

// ---------------------------------------------------------------------------------------------
// Liveness on an empty pool, and the false out-of-memory share

/**
 * Probes the liveness check counts on every run (reported in the summary's probe counts, not
 * declared: a good allocator never reaches the second): the null answers of the allocator under
 * test to valid requests, and those given while an aligned free gap large enough existed
 * between the live allocations the harness tracks.
 */
export const NULL_ANSWER_PROBE = 'null-answers';
export const FALSE_OOM_PROBE = 'null-answers-with-fitting-gap';

/**
 * The false out-of-memory share of a campaign's probe counts: the share of null answers given
 * while an aligned free gap large enough existed, or null when the allocator never answered null.
 */
export function falseOutOfMemoryShare(probes: Readonly<Record<string, number>>): { readonly nullAnswers: number; readonly withGap: number; readonly share: number } | null {
  const nullAnswers = probes[NULL_ANSWER_PROBE] ?? 0;
  if (nullAnswers === 0) return null;
  const withGap = probes[FALSE_OOM_PROBE] ?? 0;
  return { nullAnswers, withGap, share: withGap / nullAnswers };
}

/**
 * One line per system of a summary whose false out-of-memory share exceeds `maxShare` (what
 * `--max-false-oom-share` turns into a failure); empty when none does.
 */
export function falseOutOfMemoryFailures(systems: Readonly<Record<string, { readonly probes: Readonly<Record<string, number>> }>>, maxShare: number): string[] {
  const lines: string[] = [];
  for (const [name, system] of Object.entries(systems)) {
    const stats = falseOutOfMemoryShare(system.probes);
    if (stats !== null && stats.share > maxShare) {
      lines.push(`${name}: ${stats.withGap} of ${stats.nullAnswers} null answers (${(100 * stats.share).toFixed(1)} %) were given while an aligned free gap large enough existed; the limit is ${(100 * maxShare).toFixed(1)} %`);
    }
  }
  return lines;
}

/**
 * Whether some gap between the live ranges (sorted by offset) holds `sizeBytes` at an offset
 * aligned to `alignBytes` inside [0, capacity). O(live).
 */
export function fittingGapExists(sortedLive: readonly TrackedAllocation[], capacityBytes: number, sizeBytes: number, alignBytes: number): boolean {
  let cursor = 0;
  for (let i = 0; i < sortedLive.length; i++) {
    const allocation = sortedLive[i]!;
    if (alignUp(cursor, alignBytes) + sizeBytes <= allocation.offsetBytes) return true;
    cursor = Math.max(cursor, allocation.offsetBytes + allocation.sizeBytes);
  }
  return alignUp(cursor, alignBytes) + sizeBytes <= capacityBytes;
}

/**
 * Which valid requests a policy promises to place when nothing is live, from the request and
 * the config: 'first-fit' and 'any' every size up to the capacity at any alignment (offset 0 is
 * aligned to every power of two); 'buddy' and 'best-fit' narrow it by their spec (see
 * `emptyPoolPromiseOf`).
 */
export type EmptyPoolPromise<C> = (config: C, capacityBytes: number, sizeBytes: number, alignBytes: number) => boolean;

/** The promise of first fit and of policy 'any': any size up to the capacity, any alignment. */
export const FITS_CAPACITY: EmptyPoolPromise<unknown> = (_config, capacityBytes, sizeBytes) => sizeBytes <= capacityBytes;

/**
 * The promise of a buddy allocator: the request's order (from max(size, align)) is at most the
 * top order, i.e. size and alignment both at most the capacity (spec "Buddy": the order counts
 * the alignment).
 */
export const BUDDY_PROMISE: EmptyPoolPromise<unknown> = (_config, capacityBytes, sizeBytes, alignBytes) => sizeBytes <= capacityBytes && alignBytes <= capacityBytes;

/**
 * The promise of a best-fit pool: the size is within the single-allocation limit (a larger one
 * takes the committed path) and the spec's reservation (alignUp(size, poolAlign), or
 * alignUp(size + align, poolAlign) for an alignment the pool alignment is no multiple of) fits
 * the pool.
 */
export function bestFitPromise(poolAlignBytes: number, maxAllocationBytes: number | undefined): EmptyPoolPromise<unknown> {
  return (_config, capacityBytes, sizeBytes, alignBytes) => {
    if (sizeBytes > (maxAllocationBytes ?? capacityBytes)) return false;
    const reservationBytes = poolAlignBytes % alignBytes === 0 ? alignUp(sizeBytes, poolAlignBytes) : alignUp(sizeBytes + alignBytes, poolAlignBytes);
    return reservationBytes <= capacityBytes;
  };
}

function emptyPoolRefusal<C>(s: AllocSide, config: C, promise: EmptyPoolPromise<C>): string | null {
  if (s.lastAllocResult !== null || s.lastErrorCode !== null || s.live.length !== 0) return null;
  const sizeBytes = s.lastSizeBytes;
  const alignBytes = s.lastAlignBytes;
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 1 || !isPowerOfTwo(alignBytes) || !promise(config, s.capacityBytes, sizeBytes, alignBytes)) return null;
  return `nothing is live, yet alloc(${sizeBytes}, ${alignBytes}) answered null on an empty pool of ${s.capacityBytes} bytes (offset 0 is aligned and the request fits)`;
}

/**
 * `empty-pool-liveness` (spec "Common contract", liveness; issue 13): with nothing live, a
 * valid request the policy promises to place must get an offset. Checks the allocator under
 * test, and the model when the side is one. It also counts the metric of every null answer of
 * the allocator under test (NULL_ANSWER_PROBE, FALSE_OOM_PROBE) into the run's probes.
 */
export function emptyPoolLiveness<C>(promise: EmptyPoolPromise<C>, countsImplNulls = false): Invariant<AllocSide, C> {
  return {
    name: 'empty-pool-liveness',
    description: 'with nothing live, every valid request the policy promises to place on an empty pool (any size up to the capacity at any alignment for first fit and policy any) gets an offset',
    check: (model, impl, config) => {
      if (impl.lastAllocResult === null && impl.lastErrorCode === null) {
        if (countsImplNulls) countNullAnswer(impl, model.env, impl.lastSizeBytes, impl.lastAlignBytes);
        const refusal = emptyPoolRefusal(impl, config, promise);
        if (refusal !== null) return `implementation: ${refusal}`;
      }
      if (model.lastAllocResult !== null || !model.isModel) return null;
      const fromModel = emptyPoolRefusal(model, config, promise);
      return fromModel === null ? null : `model: ${fromModel}`;
    },
  };
}

/**
 * Counts a null answer of `s` to a valid request into `env`: NULL_ANSWER_PROBE, and
 * FALSE_OOM_PROBE when a gap between its live ranges held the request. Our own systems count
 * the model's answers (which the implementation's equal in a passing run); a user's allocator's
 * are counted by its empty-pool-liveness check, which sees both sides.
 */
function countNullAnswer(s: AllocSide, env: RunEnv, sizeBytes: number, alignBytes: number): void {
  env.probe(NULL_ANSWER_PROBE);
  if (fittingGapExists(s.sortedLive, s.capacityBytes, sizeBytes, alignBytes)) env.probe(FALSE_OOM_PROBE);
}

// ---------------------------------------------------------------------------------------------
// The public inspection answers

/** Best fit's size-ordered free blocks (the spec's FreeBlocks), on model and implementation. */
export interface FreeBlocksBySize {
  freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[];
}

function hasFreeBlocksBySize(allocator: Allocator): allocator is Allocator & FreeBlocksBySize {
  return 'freeBlocksBySize' in allocator && typeof allocator.freeBlocksBySize === 'function';
}

function entryText(entry: { readonly offsetBytes: number; readonly sizeBytes: number; readonly free?: boolean } | undefined): string {
  if (entry === undefined) return 'nothing';
  return `${entry.free === undefined ? '' : entry.free ? 'free' : 'used'}[${entry.offsetBytes}+${entry.sizeBytes}]`;
}

/**
 * Whether the implementation's public inspection answers are checked after this step: at each
 * of a run's first INSPECTION_FULL_STEPS steps (so a shrunk counterexample, which is short, is
 * checked at every step), then every INSPECTION_PERIOD-th step, and with many allocations live
 * every live/4-th: the cost per step stays a small constant share of the other checks
 * (measured on buddy: checking every step cost about 14 % of a campaign's commands/s, this
 * sample about 3 %).
 */
const INSPECTION_FULL_STEPS = 5;
const INSPECTION_PERIOD = 16;

function inspectsAt(s: AllocSide): boolean {
  const steps = s.steps;
  if (steps <= INSPECTION_FULL_STEPS) return true;
  const period = Math.max(INSPECTION_PERIOD, s.live.length >> 2);
  return steps % period === 1;
}

/**
 * The implementation's public answers against the truth, on a sample of steps (`inspectsAt`):
 * live() against the caller's live ranges (ascending by offset), blocks() against its view twin
 * blocksView() (which block-structure holds to the spec), best fit's freeBlocksBySize() against
 * the free blocks of that view in the spec's FreeBlocks order; and live() and blocks() hand the
 * caller its own array of its own records, not the view twin or its reused records, which the
 * allocator rewrites under the caller at its next call. (Compared with the implementation's own
 * view rather than the model's blocks, so a wrong choice of block stays the observation's
 * finding.)
 */
export const inspectionAnswers: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'inspection-answers',
  description:
    "the implementation's live(), blocks(), isPristine() and (best fit) freeBlocksBySize() agree with the caller's live ranges, its blocksView() and that view's free blocks by size then offset, in fresh arrays of fresh records (sampled: each of a run's first 5 steps, then every 16th, or every live/4-th)",
  check: (model, impl) => {
    if (!inspectsAt(impl)) return null;
    const allocator = impl.allocator;
    const live = allocator.live();
    const tracked = impl.sortedLive;
    for (let i = 0; i < Math.max(live.length, tracked.length); i++) {
      const reported = live[i];
      const expected = tracked[i];
      if (reported === undefined || expected === undefined || reported.offsetBytes !== expected.offsetBytes || reported.sizeBytes !== expected.sizeBytes) {
        return `live() entry #${i} is ${entryText(reported)}, the caller holds ${entryText(expected)} (${live.length} entries for ${tracked.length} live)`;
      }
    }
    if (allocator.liveView !== undefined) {
      const view = allocator.liveView();
      if (view === live) return 'live() returned its view (liveView()), which the allocator rewrites at its next call, not a copy';
      for (let i = 0; i < live.length; i++) if (live[i] === view[i]) return `live() entry #${i} is the view's reused record, which the allocator rewrites at its next call`;
    }
    const blocks = allocator.blocks();
    const twin = inspectBlocks(allocator);
    if (twin === blocks) return 'blocks() returned its view (blocksView()), which the allocator rewrites at its next call, not a copy';
    for (let i = 0; i < Math.max(blocks.length, twin.length); i++) {
      const reported = blocks[i];
      const expected = twin[i];
      if (reported === undefined || expected === undefined || reported.offsetBytes !== expected.offsetBytes || reported.sizeBytes !== expected.sizeBytes || reported.free !== expected.free) {
        return `blocks() entry #${i} is ${entryText(reported)}, blocksView() has ${entryText(expected)} (${blocks.length} blocks, the view ${twin.length})`;
      }
      if (reported === expected) return `blocks() entry #${i} is the view's reused record, which the allocator rewrites at its next call`;
    }
    // isPristine(): back to the initial state, one free block of full size, exactly when nothing is live.
    const pristine = tracked.length === 0 && twin.length === 1 && twin[0]!.free && twin[0]!.sizeBytes === impl.capacityBytes;
    if (allocator.isPristine() !== pristine) {
      return `isPristine() answers ${!pristine} with ${tracked.length} allocations live and ${twin.length} blocks`;
    }
    if (hasFreeBlocksBySize(allocator)) {
      // The spec's FreeBlocks order (size ascending, ties by lower offset) of the free blocks the
      // view shows; the model keeps the same order (models/alloc-best-fit.ts).
      const bySize = allocator.freeBlocksBySize();
      let free = 0;
      for (let i = 0; i < twin.length; i++) if (twin[i]!.free) free++;
      if (bySize.length !== free) return `freeBlocksBySize() lists ${bySize.length} free blocks, blocksView() has ${free}`;
      for (let i = 0; i < bySize.length; i++) {
        const entry = bySize[i]!;
        const at = searchByOffset(twin, entry.offsetBytes, false);
        const block = twin[at];
        if (block === undefined || !block.free || block.offsetBytes !== entry.offsetBytes || block.sizeBytes !== entry.sizeBytes) {
          return `freeBlocksBySize() entry #${i} is ${entryText(entry)}, which is no free block of blocksView()`;
        }
        const before = bySize[i - 1];
        if (before !== undefined && (before.sizeBytes > entry.sizeBytes || (before.sizeBytes === entry.sizeBytes && before.offsetBytes >= entry.offsetBytes))) {
          return `freeBlocksBySize() lists ${entryText(before)} before ${entryText(entry)}: not by size ascending, then offset ascending`;
        }
      }
    }
    return null;
  },
};

export function describeBlocks(blocks: readonly BlockInfo[], max = 12): string {
  const shown = blocks.slice(0, max).map((block) => `${block.free ? 'free' : 'used'}[${block.offsetBytes}+${block.sizeBytes}]`);
  return shown.join(' ') + (blocks.length > max ? ` ... (${blocks.length} blocks)` : '');
}

/** Checks that `blocks` tile [0, capacity) in offset order; returns the first gap or overlap. */
export function checkTiling(blocks: readonly BlockInfo[], capacityBytes: number): string | null {
  let expectedOffsetBytes = 0;
  for (const block of blocks) {
    if (block.sizeBytes <= 0) return `empty block at ${block.offsetBytes}`;
    if (block.offsetBytes !== expectedOffsetBytes) return `block at ${block.offsetBytes} where the tiling expects ${expectedOffsetBytes}`;
    expectedOffsetBytes += block.sizeBytes;
  }
  return expectedOffsetBytes === capacityBytes ? null : `blocks end at ${expectedOffsetBytes}, capacity is ${capacityBytes}`;
}

function rangeText(allocation: TrackedAllocation): string {
  return `[${allocation.offsetBytes}, ${allocation.offsetBytes + allocation.sizeBytes})`;
}

/**
 * Every live range as the caller holds it lies inside one allocated block, and every allocated
 * block holds exactly one: a range that spills into a free block (or a neighbour) is found at the
 * step that hands it out. `blocks` tile the capacity in offset order; O(live + blocks).
 */
export function checkLiveInBlocks(blocks: readonly BlockInfo[], sortedLive: readonly TrackedAllocation[]): string | null {
  let blockIndex = 0;
  let allocatedBlocks = 0;
  for (const block of blocks) if (!block.free) allocatedBlocks++;
  let previousBlock = -1;
  for (const allocation of sortedLive) {
    const { offsetBytes, sizeBytes } = allocation;
    while (blockIndex < blocks.length && blocks[blockIndex]!.offsetBytes + blocks[blockIndex]!.sizeBytes <= offsetBytes) blockIndex++;
    const block = blocks[blockIndex];
    if (block === undefined || block.offsetBytes > offsetBytes) return `live range ${rangeText(allocation)} starts in no block`;
    if (block.free) return `live range ${rangeText(allocation)} starts in the free block [${block.offsetBytes}+${block.sizeBytes}]`;
    if (offsetBytes + sizeBytes > block.offsetBytes + block.sizeBytes) {
      return `live range ${rangeText(allocation)} runs past its block [${block.offsetBytes}+${block.sizeBytes}]`;
    }
    if (blockIndex === previousBlock) return `live range ${rangeText(allocation)} shares the block [${block.offsetBytes}+${block.sizeBytes}] with another`;
    previousBlock = blockIndex;
  }
  return allocatedBlocks === sortedLive.length ? null : `${allocatedBlocks} allocated blocks for ${sortedLive.length} live ranges`;
}

/**
 * The `block-structure` invariant: the blocks tile the capacity, the caller's live ranges lie
 * one per allocated block, nothing live means one free block of full size (the spec's "back to
 * its initial state"), the policy's own rule (which reads the typed config), and the
 * allocator's self-check of its indexes.
 */
export function blockStructure<C>(
  description: string,
  policyRule: (blocks: readonly BlockInfo[], s: AllocSide<BlockAllocator>, config: C) => string | null,
): Invariant<AllocSide<BlockAllocator>, C> {
  return {
    name: 'block-structure',
    description,
    check: bothSides((s: AllocSide<BlockAllocator>, config: C) => {
      const blocks = inspectBlocks(s.allocator);
      const tiling = checkTiling(blocks, s.capacityBytes);
      if (tiling !== null) return tiling;
      const containment = checkLiveInBlocks(blocks, sortedByOffset(s));
      if (containment !== null) return containment;
      if (s.live.length === 0 && (blocks.length !== 1 || !blocks[0]!.free)) return `nothing is live but the blocks are ${describeBlocks(blocks)}`;
      return policyRule(blocks, s, config) ?? s.allocator.checkIndexes();
    }),
  };
}

/** No two free blocks are adjacent (best fit and first fit merge with both neighbours). */
export function noAdjacentFreeBlocks(blocks: readonly BlockInfo[]): string | null {
  for (let i = 1; i < blocks.length; i++) {
    if (blocks[i - 1]!.free && blocks[i]!.free) return `free blocks at ${blocks[i - 1]!.offsetBytes} and ${blocks[i]!.offsetBytes} are adjacent and unmerged`;
  }
  return null;
}

/** Past this many live allocations (only scale runs get there) the whole-state checks are sampled. */
export const SCALE_SAMPLE_LIVE = 512;
/** ... every SCALE_SAMPLE_PERIOD-th step (and after every burst, which is one step). */
const SCALE_SAMPLE_PERIOD = 8;

/**
 * A whole-state check (O(live + blocks) on both sides) run at every step while at most
 * SCALE_SAMPLE_LIVE allocations are live, and on every SCALE_SAMPLE_PERIOD-th step beyond: at
 * thousands of live blocks checking every step made a scale run cost about 300 ordinary ones,
 * and the states these checks read persist from step to step (a broken tiling stays broken).
 * Ordinary runs stay far below the threshold and are checked at every step as before.
 */
export function sampledAtScale<S extends AllocSide, C>(invariant: Invariant<S, C>): Invariant<S, C> {
  const check = invariant.check;
  return {
    name: invariant.name,
    description: invariant.description,
    check: (model, impl, config) => (impl.live.length > SCALE_SAMPLE_LIVE && impl.steps % SCALE_SAMPLE_PERIOD !== 1 ? null : check(model, impl, config)),
  };
}

/** The invariants of a sub-allocator system, in the order the runner checks them. */
export function subAllocatorInvariants<C>(structure: Invariant<AllocSide<BlockAllocator>, C>, promise: EmptyPoolPromise<C>): Invariant<AllocSide<BlockAllocator>, C>[] {
  return [
    sampledAtScale(noOverlap),
    sampledAtScale(inBoundsAligned),
    honestAnswers,
    sampledAtScale(accounting),
    emptyPoolLiveness(promise),
    noFalseOutOfMemory,
    matchesModel,
    sampledAtScale(structure),
    inspectionAnswers,
  ];
}
