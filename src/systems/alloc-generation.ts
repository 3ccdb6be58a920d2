/**
 * Generation for the three sub-allocator systems (`alloc-buddy`, `alloc-best-fit`,
 * `alloc-first-fit`) and the user-allocator system: the op records (`allocOps`, written once),
 * the request size and alignment arbitraries and the weights rule (`allocOpWeights`, every
 * system's `weights`).
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
import type { GenerationPlan } from '../harness/system.js';
import { opsFor, type OpName } from '../harness/define-system.js';
import { Int, Nat } from '../harness/schema.js';
import { isPowerOfTwo } from '../alloc/allocator.js';
import { SKIPPED } from './common.js';
import { allocBurst, allocRequest, freeBurst, freeOffset, type AllocSide } from './alloc-side.js';

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
export function sizeArb(
  capacityBytes: number,
  grainsBytes: readonly number[],
): fc.Arbitrary<number> {
  const maxExponent = Math.ceil(Math.log2(capacityBytes)) + 1;
  const logScale = fc
    .tuple(fc.integer({ min: 0, max: maxExponent }), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([exponent, fraction]) => Math.max(1, Math.floor(2 ** exponent * (1 + fraction))));
  const boundaries = new Set<number>([
    1,
    capacityBytes,
    Math.max(1, Math.floor(capacityBytes / 2)),
    capacityBytes + 1,
  ]);
  for (const grain of grainsBytes)
    for (const value of [grain - 1, grain, grain + 1, 2 * grain])
      if (value >= 1) boundaries.add(value);
  return fc.oneof(
    { weight: 4, arbitrary: logScale },
    { weight: 1, arbitrary: fc.constantFrom(...[...boundaries].sort((a, b) => a - b)) },
  );
}

/** Alignments: mostly small powers of two, sometimes up to the capacity. */
export function alignArb(
  capacityBytes: number,
  extraBytes: readonly number[] = [],
): fc.Arbitrary<number> {
  const powers = powersOfTwoUpTo(Math.max(capacityBytes, ...extraBytes));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(1, 2, 4, 8, 16, 256) },
    { weight: 2, arbitrary: fc.constantFrom(...powers) },
    { weight: 1, arbitrary: fc.constantFrom(...(extraBytes.length > 0 ? extraBytes : [1])) },
  );
}

/** Bad requests: size 0 or negative, or an alignment that is no power of two. */
function badAllocArb(
  capacityBytes: number,
  op: OpName,
): fc.Arbitrary<{ op: OpName; sizeBytes: number; alignBytes: number }> {
  return fc.oneof(
    fc.record({
      op: fc.constant(op),
      sizeBytes: fc.integer({ min: -2, max: 0 }),
      alignBytes: fc.constantFrom(1, 16, 3),
    }),
    // 2^49 - 1 and 2^50 + 1: Math.log2 rounds both to integers, a trap for a power-of-two test.
    fc.record({
      op: fc.constant(op),
      sizeBytes: fc.integer({ min: 1, max: capacityBytes }),
      alignBytes: fc.constantFrom(0, 3, 6, 24, 768, 2 ** 49 - 1, 2 ** 50 + 1),
    }),
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
const MISUSE_ENTRIES: ReadonlySet<string> = new Set([
  'badAlloc',
  'freeAgain',
  'freeInterior',
  'freeUnknown',
]);

/**
 * The entry weights of one generated command (the `weights` hook of the allocator systems): the
 * defaults, overridden by the plan. Bad requests are alloc commands, so unless the plan names
 * 'badAlloc' itself they scale with the plan's 'alloc' weight, keeping the default ratio rounded
 * to an integer (at least 1 while alloc is on). Without misuse every misuse entry has weight 0.
 * The bursts follow the config, not the plan: SCALE_BURST_WEIGHTS in a scale config, 0 in any
 * other (a plan that enabled nothing else then gets alloc at weight 1).
 */
export function allocOpWeights(
  defaults: Readonly<Record<string, number>>,
  plan?: GenerationPlan,
  misuse = true,
  scale = false,
): Record<string, number> {
  const base: Record<string, number> = { ...defaults };
  if (!misuse)
    for (const entry of Object.keys(base)) if (MISUSE_ENTRIES.has(entry)) base[entry] = 0;
  const planned = plan?.weights;
  const weights = { ...base };
  if (planned !== undefined) {
    for (const entry of Object.keys(weights)) {
      const value = planned[entry];
      if (value !== undefined) weights[entry] = misuse || base[entry]! > 0 ? value : 0;
    }
    if (
      planned.badAlloc === undefined &&
      misuse &&
      planned.alloc !== undefined &&
      Object.hasOwn(base, 'badAlloc')
    ) {
      weights.badAlloc =
        planned.alloc === 0
          ? 0
          : Math.max(1, Math.round((planned.alloc * base.badAlloc!) / base.alloc!));
    }
  }
  let ordinary = 0;
  for (const entry of Object.keys(weights)) {
    if (BURST_ENTRIES.has(entry))
      weights[entry] = scale ? SCALE_BURST_WEIGHTS[entry as keyof typeof SCALE_BURST_WEIGHTS] : 0;
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
        return fc
          .tuple(sizeArb(config.capacityBytes, grains), alignArb(config.capacityBytes, grains))
          .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes }));
      },
      variants: {
        badAlloc: {
          weight: DEFAULT_ALLOC_WEIGHTS.badAlloc,
          arbitrary: (config, op) => badAllocArb(config.capacityBytes, op),
        },
      },
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
        if (s.isModel && !s.live.some((allocation) => allocation.offsetBytes === offsetBytes))
          s.env.probe('double-free');
        return freeOffset(s, offsetBytes);
      },
    }),
    freeInterior: op({
      fields: { index: Nat(), deltaBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeInterior,
      arbitrary: (config, op) =>
        fc
          .tuple(index, fc.nat({ max: config.capacityBytes }))
          .map(([i, deltaBytes]) => ({ op, index: i, deltaBytes })),
      apply: (s, command) => {
        if (s.live.length === 0) return SKIPPED;
        const target = s.live[command.index % s.live.length]!;
        return freeOffset(s, target.offsetBytes + 1 + (command.deltaBytes % target.sizeBytes));
      },
    }),
    freeUnknown: op({
      fields: { offsetBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeUnknown,
      arbitrary: (config, op) =>
        fc.nat({ max: config.capacityBytes + 1 }).map((offsetBytes) => ({ op, offsetBytes })),
      apply: (s, command) => freeOffset(s, command.offsetBytes),
    }),
    allocBurst: op({
      fields: { count: Nat(), sizeBytes: Nat(), spreadBytes: Nat(), alignBytes: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.allocBurst,
      arbitrary: (config, op) => {
        const grains = grainsBytes(config);
        const sizes = burstSizeArb(config.capacityBytes);
        return fc
          .tuple(
            fc.integer({ min: 1, max: MAX_BURST }),
            sizes,
            sizes,
            fc.constantFrom(1, 1, 8, 16, 256, ...grains),
          )
          .map(([count, sizeBytes, spreadBytes, alignBytes]) => ({
            op,
            count,
            sizeBytes,
            spreadBytes,
            alignBytes: isPowerOfTwo(alignBytes) ? alignBytes : 1,
          }));
      },
      // A bad request in a burst (from a file) throws its contract error at the first call.
      apply: (s, command) =>
        allocBurst(
          s,
          Math.min(command.count, MAX_BURST),
          command.sizeBytes,
          command.spreadBytes,
          command.alignBytes,
        ),
    }),
    freeBurst: op({
      fields: { index: Nat(), count: Nat(), stride: Nat() },
      weight: DEFAULT_ALLOC_WEIGHTS.freeBurst,
      arbitrary: (_config, op) =>
        fc
          .tuple(index, fc.integer({ min: 1, max: MAX_BURST }), fc.constantFrom(0, 1, 2, 3, 7))
          .map(([i, count, stride]) => ({ op, index: i, count, stride })),
      apply: (s, command) =>
        freeBurst(s, command.index, Math.min(command.count, MAX_BURST), command.stride),
    }),
  };
}

/** The op records of an allocator system with config `C`. */
export type AllocOps<C extends AllocOpsConfig> = ReturnType<typeof allocOps<C>>;
