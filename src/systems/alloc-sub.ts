/**
 * Builds the system of one of our sub-allocators from its policy-specific parts; the op records
 * (alloc-generation.ts), the side and its per-command bookkeeping (alloc-side.ts) and the common
 * invariants (alloc-invariants.ts) are shared with the other allocator systems.
 */
import type fc from 'fast-check';
import type { JsonObject } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, type DefinedSystem } from '../harness/define-system.js';
import { Nat, type TObject } from '../harness/schema.js';
import type { BlockAllocator } from '../alloc/allocator.js';
import {
  subAllocatorConfigProblem,
  type SubAllocatorConfig,
  type SubAllocatorKind,
} from '../alloc/config.js';
import {
  allocOps,
  type AllocOps,
  type AllocOpsConfig,
  allocOpWeights,
  COMMON_ALLOC_PROBES,
} from './alloc-generation.js';
import { subAllocatorInvariants } from './alloc-invariants.js';
import type { EmptyPoolPromise } from './alloc-promise.js';
import { allocSide, type AllocSide, allocStep, allocTrace } from './alloc-side.js';
import { allocVisual } from './visuals.js';

/** The config fields of the sub-allocators (src/alloc/config.ts); each system's schema takes the ones its allocator reads. */
export const SubAllocatorFields = {
  capacityBytes: Nat({ description: 'bytes managed: every offset lies in [0, capacityBytes)' }),
  minBlockBytes: Nat({
    description:
      'buddy: size of an order-0 block, a power of two; capacityBytes is minBlockBytes times a power of two',
  }),
  poolAlignBytes: Nat({
    description:
      'best fit: granularity of every block offset and size, a power of two; capacityBytes is a multiple of it',
  }),
  maxAllocationBytes: Nat({
    description:
      'best fit: the single-allocation limit; a larger request takes the committed path (null)',
  }),
};

export interface SubAllocatorSystemParts<C extends SubAllocatorConfig & JsonObject> {
  readonly name: string;
  readonly summary: string;
  /** The config's schema (its `Static` type is `C`) and arbitrary. */
  readonly config: {
    readonly schema: TObject & { readonly static: C };
    readonly arbitrary: () => fc.Arbitrary<C>;
  };
  /** The allocator kind whose config rules (src/alloc/config.ts) validate this system's configs. */
  readonly kind: SubAllocatorKind;
  /** Sizes the generator puts boundaries around (block grains, pool alignment). */
  grainsBytes(config: C): readonly number[];
  createModel(config: C): BlockAllocator;
  createImpl(config: C): BlockAllocator;
  readonly structure: Invariant<AllocSide<BlockAllocator>, C>;
  /** Which valid requests the policy places on an empty pool (the empty-pool-liveness check). */
  readonly emptyPoolPromise: EmptyPoolPromise<C>;
  /**
   * Whether a config is a scale config (drawn by a low-weight branch of the config arbitrary):
   * only there are bursts generated, reaching thousands of live blocks.
   */
  isScaleConfig(config: C): boolean;
  readonly policyProbes: readonly string[];
}

export type SubAllocatorSystem<C extends SubAllocatorConfig & JsonObject> = DefinedSystem<
  C,
  AllocSide<BlockAllocator>,
  AllocOps<C>
>;

export function subAllocatorSystem<C extends SubAllocatorConfig & JsonObject>(
  parts: SubAllocatorSystemParts<C>,
): SubAllocatorSystem<C> {
  return defineSystem({
    name: parts.name,
    summary: parts.summary,
    config: {
      schema: parts.config.schema,
      check: (config: C) => subAllocatorConfigProblem(parts.kind, config),
      arbitrary: parts.config.arbitrary,
    },
    ops: allocOps<C>((config) => parts.grainsBytes(config)),
    weights: (defaults, plan, config) =>
      allocOpWeights(defaults, plan, true, parts.isScaleConfig(config)),
    around: allocStep,
    sequence: { minLength: 1, maxLength: 200 },
    createModel: (config: C, env: RunEnv): AllocSide<BlockAllocator> =>
      allocSide(parts.createModel(config), config.capacityBytes, env, true),
    createImpl: (config: C, env: RunEnv): AllocSide<BlockAllocator> =>
      allocSide(parts.createImpl(config), config.capacityBytes, env, false),
    invariants: subAllocatorInvariants(parts.structure, parts.emptyPoolPromise),
    // GROWTH_PROBES are reported too, but only scale runs reach them (too rare for the probe
    // check of the ordinary property suite): properties/alloc.test.ts runs scale configs for them.
    probes: [...COMMON_ALLOC_PROBES, ...parts.policyProbes],
    trace: allocTrace,
    visual: allocVisual,
  });
}

/** Wraps any allocator of ours as an implementation side (mutants use it). */
export function subAllocatorSide(
  allocator: BlockAllocator,
  config: AllocOpsConfig,
  env: RunEnv,
): AllocSide<BlockAllocator> {
  return allocSide(allocator, config.capacityBytes, env, false);
}
