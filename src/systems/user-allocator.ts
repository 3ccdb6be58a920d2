/**
 * System factory for a user's own allocator (`npm run fuzz -- --allocator <module>`; the module
 * contract is in src/user-allocator-module.ts).
 *
 * The implementation side wraps the user's allocator: the harness tracks the live ranges it
 * handed out itself (the user's allocator exposes nothing else), so every check works on what
 * a caller would see. A thrown exception (from createAllocator, alloc or free) surfaces as the
 * runner's impl-exception finding; a return that is neither an integer nor null is recorded and
 * reported by `honest-answers`. Neither crashes the harness.
 *
 * The model side is our model of the declared policy, compared offset for offset (observation)
 * and for false out-of-memory. For policy 'any' it is a bookkeeping stand-in that never
 * allocates: then observations carry nothing and only the safety invariants judge (in bounds,
 * aligned, no overlap, honest answers, frees of live allocations accepted) and liveness on an
 * empty pool: with nothing live, every request up to the capacity, at any power-of-two
 * alignment, gets an offset (`empty-pool-liveness`; for a named policy the request set its spec
 * promises). That check also counts the allocator's null answers and those given while an
 * aligned gap large enough existed (the false out-of-memory share of the fuzz summary).
 *
 * Only valid requests are generated (sizes >= 1, power-of-two alignments, frees of live
 * allocations): the user contract does not define answers to misuse.
 */
import fc from 'fast-check';
import path from 'node:path';
import { isPlainObject } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, type DefinedSystem } from '../harness/define-system.js';
import { Nat, OneOf, Str, Strict, type Static } from '../harness/schema.js';
import type { Allocator, AllocatorPolicy } from '../alloc/allocator.js';
import { subAllocatorConfigProblem, type SubAllocatorKind } from '../alloc/config.js';
import {
  ALLOCATOR_POLICIES,
  loadUserAllocator,
  UserAllocatorError,
  type UserAllocatorModule,
} from '../user-allocator-module.js';
import { createSubAllocatorModel } from '../../models/alloc-index.js';
import { allocOps, type AllocOps, allocOpWeights } from './alloc-generation.js';
import {
  honestAnswers,
  inBoundsAligned,
  noFalseOutOfMemory,
  noOverlap,
} from './alloc-invariants.js';
import {
  bestFitDeclaration,
  BUDDY_DECLARATION,
  DEFAULT_PROMISE,
  emptyPoolLiveness,
  emptyPoolPromiseOf,
  promiseText,
  type AllocatorPromise,
  type PromiseFunction,
} from './alloc-promise.js';
import { allocSide, type AllocSide, allocStep, allocTrace } from './alloc-side.js';
import { allocVisual } from './visuals.js';

/** The system name of every user allocator (regression files of it name their module in the config). */
export const USER_ALLOCATOR_SYSTEM = 'user-allocator';

/**
 * The module and policy ride along in every config, so a regression file names what it replays
 * against (userAllocatorSystemForConfig loads it back).
 */
export const UserAllocatorConfigSchema = Strict({
  capacityBytes: Nat({
    description:
      "bytes handed to the module's createAllocator: every offset lies in [0, capacityBytes)",
  }),
  allocatorModule: Str({
    description: 'the module exporting createAllocator, relative to the working directory',
  }),
  policy: OneOf(ALLOCATOR_POLICIES, {
    description: "the policy the allocator is checked against ('any': safety checks only)",
  }),
});
export type UserAllocatorConfig = Static<typeof UserAllocatorConfigSchema>;

export interface UserAllocatorOptions {
  /** Policy 'buddy': order-0 block size of our model (default 256). */
  readonly minBlockBytes?: number;
  /** Policy 'best-fit': pool alignment of our model (default 256). */
  readonly poolAlignBytes?: number;
  /**
   * What the allocator promises on an empty pool (default: its policy's promise; for 'any' and
   * 'first-fit' every size up to the capacity at any alignment). Policy 'any' and 'first-fit':
   * pools below its minPoolBytes are not generated.
   */
  readonly promise?: AllocatorPromise | PromiseFunction;
  /** Policy 'any' and 'first-fit': the largest heap the allocator supports (a 32-bit allocator: 2 ** 32 - 1). Default: 64 GiB. */
  readonly maxCapacityBytes?: number;
}

interface ResolvedOptions {
  readonly minBlockBytes: number;
  readonly poolAlignBytes: number;
  readonly heap: HeapRange;
}

/** The stand-in model of policy 'any': it has no opinion, so it never allocates. */
class NoOpinionModel implements Allocator {
  alloc(): number | null {
    return null;
  }
  free(): void {}
}

/** Whether what a user's createAllocator returned is an object with alloc and free methods. */
function isAllocator(value: unknown): value is Allocator {
  return (
    typeof value === 'object' &&
    value !== null &&
    'alloc' in value &&
    typeof value.alloc === 'function' &&
    'free' in value &&
    typeof value.free === 'function'
  );
}

/** Calls into the user's allocator; a failed createAllocator turns every call into that error. */
class UserAllocatorAdapter implements Allocator {
  private readonly inner: Allocator | null;
  private readonly creationError: unknown;

  constructor(
    createAllocator: (capacityBytes: number) => unknown,
    capacityBytes: number,
    label: string,
  ) {
    let inner: Allocator | null = null;
    let creationError: unknown = null;
    try {
      const made = createAllocator(capacityBytes);
      if (isAllocator(made)) {
        inner = made;
      } else {
        creationError = new Error(
          `${label}: createAllocator(${capacityBytes}) returned ${made === null ? 'null' : typeof made}, not an object with alloc and free methods`,
        );
      }
    } catch (error) {
      creationError = error;
    }
    this.inner = inner;
    this.creationError = creationError;
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    if (this.inner === null) throw this.creationError;
    return this.inner.alloc(sizeBytes, alignBytes);
  }

  free(offsetBytes: number): void {
    if (this.inner === null) throw this.creationError;
    this.inner.free(offsetBytes);
  }
}

/** One config in SCALE_CONFIG_ODDS is a scale config (bursts, thousands of live allocations). */
const SCALE_CONFIG_ODDS = 400;
/** Scale configs: at least this many grains (ordinary ones have at most 4096 for policy any). */
const SCALE_MIN_GRAINS = 8192;
/** Policy 'any' and 'first-fit': the scale branch's capacities (4 - 16 MiB). */
const SCALE_MIN_BYTES = 1 << 22;
const SCALE_MAX_BYTES = 1 << 24;
/**
 * GPU-sized heaps (policy 'any' and 'first-fit'): 256 MiB to 64 GiB, offsets and sizes past 2^31
 * and 2^32 (32-bit offset arithmetic is the classic bug of allocator code ported from C).
 * GPU_HEAP_WEIGHT of every 2000 + GPU_HEAP_WEIGHT configs (about 9 %): a run on one costs what
 * an ordinary run costs (no bursts: the allocator's answers, not its tables, are what these
 * sizes test).
 */
export const GPU_HEAP_MIN_BYTES = 2 ** 28;
export const GPU_HEAP_MAX_BYTES = 2 ** 36;
const GPU_HEAP_WEIGHT = 200;
/** Heaps every GPU driver hands out in these sizes; drawn beside the log-uniform ones. */
const GPU_HEAP_ROUND_SIZES = [2 ** 28, 2 ** 30, 2 ** 31, 2 ** 32, 2 ** 33, 2 ** 34, 2 ** 36];

/** The capacities a module accepts: [minPoolBytes of its promise, its maxCapacityBytes]. */
interface HeapRange {
  readonly minBytes: number;
  readonly maxBytes: number;
}

/** Log-uniform capacities in [minBytes, maxBytes], plus the round GPU sizes inside it. */
function gpuHeapArb(minBytes: number, maxBytes: number): fc.Arbitrary<number> {
  const logMin = Math.log2(minBytes);
  const logMax = Math.log2(maxBytes);
  const logUniform = fc
    .double({ min: logMin, max: logMax, noNaN: true })
    .map((exponent) => Math.min(maxBytes, Math.max(minBytes, Math.floor(2 ** exponent))));
  const round = GPU_HEAP_ROUND_SIZES.filter((size) => size >= minBytes && size <= maxBytes);
  return round.length === 0
    ? logUniform
    : fc.oneof(
        { weight: 3, arbitrary: logUniform },
        { weight: 1, arbitrary: fc.constantFrom(...round) },
      );
}

/**
 * Policy 'any' and 'first-fit': small pools, the three round ones, the scale branch and GPU-sized
 * heaps, each branch cut to the module's heap range (a branch outside it is not drawn; the
 * branches of an undeclared range are drawn as before the range existed, plus the GPU heaps).
 */
function anyPolicyCapacityArb(range: HeapRange): fc.Arbitrary<number> {
  const { minBytes, maxBytes } = range;
  const branches: fc.WeightedArbitrary<number>[] = [];
  const integers = (weight: number, min: number, max: number) => {
    const low = Math.max(min, minBytes);
    const high = Math.min(max, maxBytes);
    if (low <= high) branches.push({ weight, arbitrary: fc.integer({ min: low, max: high }) });
  };
  integers(4 * SCALE_CONFIG_ODDS - 4, 1, 4096);
  const round = [65536, 65537, 1 << 20].filter((size) => size >= minBytes && size <= maxBytes);
  if (round.length > 0)
    branches.push({ weight: SCALE_CONFIG_ODDS - 1, arbitrary: fc.constantFrom(...round) });
  integers(5, SCALE_MIN_BYTES, SCALE_MAX_BYTES);
  const gpuMin = Math.max(GPU_HEAP_MIN_BYTES, minBytes);
  const gpuMax = Math.min(GPU_HEAP_MAX_BYTES, maxBytes);
  if (gpuMin <= gpuMax)
    branches.push({ weight: GPU_HEAP_WEIGHT, arbitrary: gpuHeapArb(gpuMin, gpuMax) });
  // A range between the branches (say 5 - 200 MiB): its own log-uniform draw.
  return branches.length === 0 ? gpuHeapArb(minBytes, maxBytes) : fc.oneof(...branches);
}

function capacityArb(policy: AllocatorPolicy, options: ResolvedOptions): fc.Arbitrary<number> {
  switch (policy) {
    case 'buddy':
      return fc
        .oneof(
          { weight: SCALE_CONFIG_ODDS - 1, arbitrary: fc.integer({ min: 0, max: 10 }) },
          { weight: 1, arbitrary: fc.integer({ min: 13, max: 15 }) },
        )
        .map((order) => options.minBlockBytes * 2 ** order);
    case 'best-fit':
      return fc
        .oneof(
          { weight: SCALE_CONFIG_ODDS, arbitrary: fc.integer({ min: 1, max: 24 }) },
          { weight: SCALE_CONFIG_ODDS, arbitrary: fc.integer({ min: 25, max: 256 }) },
          {
            weight: 2,
            arbitrary: fc.integer({ min: SCALE_MIN_GRAINS, max: 4 * SCALE_MIN_GRAINS }),
          },
        )
        .map((units) => options.poolAlignBytes * units);
    default:
      return anyPolicyCapacityArb(options.heap);
  }
}

/** Whether a capacity is one of the scale branch's (the bursts are generated only there). */
function isScaleCapacity(
  policy: AllocatorPolicy,
  capacityBytes: number,
  options: ResolvedOptions,
): boolean {
  switch (policy) {
    case 'buddy':
      return capacityBytes / options.minBlockBytes >= SCALE_MIN_GRAINS;
    case 'best-fit':
      return capacityBytes / options.poolAlignBytes >= SCALE_MIN_GRAINS;
    default:
      return capacityBytes >= SCALE_MIN_BYTES && capacityBytes <= SCALE_MAX_BYTES;
  }
}

/** The declaration a policy promises by its spec (see alloc-promise.ts), when the module declares none. */
function policyPromise(
  policy: AllocatorPolicy,
  options: Pick<ResolvedOptions, 'poolAlignBytes'>,
): AllocatorPromise {
  switch (policy) {
    case 'buddy':
      return BUDDY_DECLARATION;
    case 'best-fit':
      return bestFitDeclaration(options.poolAlignBytes, undefined);
    default:
      return DEFAULT_PROMISE;
  }
}

/** One line for an empty-pool-liveness finding: how to state the promise when the refusal is by design. */
export const NARROWER_PROMISE_HINT =
  'if the allocator refuses this by design, declare what it promises in its module, e.g. export const promise = { overheadBytes, headerBytes, minBlockBytes, roundsTo, minPoolBytes } (docs/user-allocators.md)';

/** The ops of a user's allocator: valid requests and frees of live allocations only, what its contract promises (bursts of them in scale configs). */
type UserAllocatorOps = Pick<
  AllocOps<UserAllocatorConfig>,
  'alloc' | 'free' | 'allocBurst' | 'freeBurst'
>;

export type UserAllocatorSystem = DefinedSystem<UserAllocatorConfig, AllocSide, UserAllocatorOps>;

export function userAllocatorSystem(
  modulePath: string,
  createAllocator: (capacityBytes: number) => Allocator,
  policy: AllocatorPolicy,
  options: UserAllocatorOptions = {},
): UserAllocatorSystem {
  const declared = options.promise;
  const minPoolBytes =
    declared === undefined || typeof declared === 'function' ? 1 : (declared.minPoolBytes ?? 1);
  const resolved: ResolvedOptions = {
    minBlockBytes: options.minBlockBytes ?? 256,
    poolAlignBytes: options.poolAlignBytes ?? 256,
    heap: { minBytes: minPoolBytes, maxBytes: options.maxCapacityBytes ?? GPU_HEAP_MAX_BYTES },
  };
  const promise = declared ?? policyPromise(policy, resolved);
  const kind: SubAllocatorKind | null = policy === 'any' ? null : policy;
  const modelConfig = (capacityBytes: number) => ({
    capacityBytes,
    minBlockBytes: resolved.minBlockBytes,
    poolAlignBytes: resolved.poolAlignBytes,
  });
  const compareOffsets = kind !== null;
  // A named policy's false out-of-memory is the model comparison's finding (it names the offset
  // the model chose), so empty-pool-liveness comes after it.
  const invariants: Invariant<AllocSide, unknown>[] = [noOverlap, inBoundsAligned, honestAnswers];
  if (compareOffsets) invariants.push(noFalseOutOfMemory);
  invariants.push(
    emptyPoolLiveness(emptyPoolPromiseOf(promise), {
      countsImplNulls: true,
      report: {
        promise:
          declared === undefined
            ? `the default promise of policy '${policy}', ${promiseText(promise)}`
            : `its declared promise ${promiseText(promise)}`,
        hint: NARROWER_PROMISE_HINT,
      },
    }),
  );
  const grains =
    kind === 'buddy'
      ? [resolved.minBlockBytes]
      : kind === 'best-fit'
        ? [resolved.poolAlignBytes]
        : [8, 16, 256, 4096];
  const label = modulePath;
  const { alloc, free, allocBurst, freeBurst } = allocOps<UserAllocatorConfig>(() => grains);
  return defineSystem({
    name: USER_ALLOCATOR_SYSTEM,
    summary: `the allocator in ${label} (policy ${policy})`,
    config: {
      schema: UserAllocatorConfigSchema,
      check: (config: UserAllocatorConfig) => {
        const { capacityBytes } = config;
        if (capacityBytes < 1)
          return `capacityBytes must be a positive integer, got ${capacityBytes}`;
        if (config.policy !== policy)
          return `this system checks policy '${policy}', the config names '${config.policy}'`;
        return kind === null ? null : subAllocatorConfigProblem(kind, modelConfig(capacityBytes));
      },
      arbitrary: () =>
        capacityArb(policy, resolved).map(
          (capacityBytes): UserAllocatorConfig => ({
            capacityBytes,
            allocatorModule: modulePath,
            policy,
          }),
        ),
    },
    ops: { alloc, free, allocBurst, freeBurst },
    // No misuse: bad requests (the alloc op's badAlloc entry) are never generated.
    weights: (defaults, plan, config) =>
      allocOpWeights(
        defaults,
        plan,
        false,
        isScaleCapacity(policy, config.capacityBytes, resolved),
      ),
    // Policy 'any': the stand-in model allocates nothing, so its frees are skipped; nothing of
    // either side's answer is compared but a contract error.
    around: compareOffsets
      ? allocStep
      : (s, command, dispatch) => {
          const observation = allocStep(s, command, dispatch);
          return s.lastErrorCode === null ? {} : observation;
        },
    sequence: { minLength: 1, maxLength: 200 },
    createModel: (config: UserAllocatorConfig, env: RunEnv): AllocSide => {
      const { capacityBytes } = config;
      return kind === null
        ? allocSide(new NoOpinionModel(), capacityBytes, env, false)
        : allocSide(
            createSubAllocatorModel(kind, modelConfig(capacityBytes)),
            capacityBytes,
            env,
            true,
          );
    },
    createImpl: (config: UserAllocatorConfig, env: RunEnv): AllocSide =>
      allocSide(
        new UserAllocatorAdapter(createAllocator, config.capacityBytes, label),
        config.capacityBytes,
        env,
        false,
      ),
    invariants,
    probes: compareOffsets ? ['out-of-memory', 'freed-everything'] : [],
    // Reports show the offsets the module returned (policy 'any' compares none of them).
    visual: allocVisual,
    trace: (s: AllocSide) => (s.allocator instanceof NoOpinionModel ? null : allocTrace(s)),
    // Policy 'any': the stand-in model has no answers, so reports print the implementation's only.
    ...(compareOffsets ? {} : { modelless: true }),
  });
}

/**
 * The system for a module loaded with loadUserAllocator. `modulePath` is what configs (and so
 * regression files) record; default: the path as loaded, relative to the working directory.
 */
export function userAllocatorSystemFromModule(
  loaded: UserAllocatorModule,
  policy: AllocatorPolicy = loaded.policy,
  modulePath: string = path.relative(process.cwd(), loaded.modulePath) || loaded.modulePath,
): UserAllocatorSystem {
  return userAllocatorSystem(modulePath, loaded.createAllocator, policy, {
    minBlockBytes: loaded.minBlockBytes,
    poolAlignBytes: loaded.poolAlignBytes,
    ...(loaded.promise === undefined ? {} : { promise: loaded.promise }),
    ...(loaded.maxCapacityBytes === undefined ? {} : { maxCapacityBytes: loaded.maxCapacityBytes }),
  });
}

/**
 * For replaying a regression file of system 'user-allocator': loads the module its config names
 * (relative to the working directory) and builds the system for the policy it names. The config
 * itself is validated afterwards by the system (its schema and policy).
 */
export async function userAllocatorSystemForConfig(
  rawConfig: unknown,
): Promise<UserAllocatorSystem> {
  const modulePath = isPlainObject(rawConfig) ? rawConfig.allocatorModule : undefined;
  const named = isPlainObject(rawConfig) ? rawConfig.policy : undefined;
  if (typeof modulePath !== 'string')
    throw new Error(
      `user-allocator config: allocatorModule must be a string, got ${JSON.stringify(modulePath)}`,
    );
  const policy = ALLOCATOR_POLICIES.find((known) => known === named);
  if (policy === undefined)
    throw new UserAllocatorError(
      modulePath,
      `the config names an unknown policy ${JSON.stringify(named)}`,
    );
  return userAllocatorSystemFromModule(await loadUserAllocator(modulePath), policy, modulePath);
}

/** The schemas of the user-allocator system's files (its config and commands do not depend on the module). */
export const userAllocatorSchemas: Pick<
  UserAllocatorSystem,
  'name' | 'configSchema' | 'commandSchemas'
> = (() => {
  const { name, configSchema, commandSchemas } = userAllocatorSystem(
    '<module>',
    () => new NoOpinionModel(),
    'any',
  );
  return { name, configSchema, commandSchemas };
})();
