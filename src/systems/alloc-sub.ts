/**
 * Builds the SystemDef of one of our sub-allocators from its policy-specific parts; the command
 * language, the side and the common invariants live in alloc-common.ts.
 */
import type fc from 'fast-check';
import type { FieldSchema, JsonObject } from '../harness/json';
import type { Invariant, RunEnv, SystemDef } from '../harness/system';
import type { BlockAllocator } from '../alloc/allocator';
import { subAllocatorConfigProblem, type SubAllocatorConfig, type SubAllocatorKind } from '../alloc/config';
import {
  allocCommandArb,
  allocOps,
  allocSide,
  applyAllocCommandCaught,
  COMMON_ALLOC_PROBES,
  subAllocatorInvariants,
  type AllocSide,
} from './alloc-common';

export interface SubAllocatorSystemParts {
  readonly name: string;
  readonly summary: string;
  readonly configSchema: FieldSchema;
  /** The allocator kind whose config rules (src/alloc/config.ts) validate this system's configs. */
  readonly kind: SubAllocatorKind;
  configArb(): fc.Arbitrary<JsonObject>;
  /** Sizes the generator puts boundaries around (block grains, pool alignment). */
  grainsBytes(config: SubAllocatorConfig): number[];
  createModel(config: SubAllocatorConfig): BlockAllocator;
  createImpl(config: SubAllocatorConfig): BlockAllocator;
  readonly structure: Invariant<AllocSide<BlockAllocator>>;
  readonly policyProbes: readonly string[];
}

export function toSubAllocatorConfig(config: JsonObject): SubAllocatorConfig {
  return config as unknown as SubAllocatorConfig;
}

export function subAllocatorSystem(parts: SubAllocatorSystemParts): SystemDef<AllocSide<BlockAllocator>> {
  return {
    name: parts.name,
    summary: parts.summary,
    configSchema: parts.configSchema,
    ops: allocOps,
    validateConfig: (config) => subAllocatorConfigProblem(parts.kind, toSubAllocatorConfig(config)),
    configArb: parts.configArb,
    commandArb: (config, plan) => {
      const c = toSubAllocatorConfig(config);
      return allocCommandArb(c.capacityBytes, parts.grainsBytes(c), plan);
    },
    sequence: { minLength: 1, maxLength: 200 },
    createModel: (config, env) => allocSide(parts.createModel(toSubAllocatorConfig(config)), toSubAllocatorConfig(config).capacityBytes, env, true),
    createImpl: (config, env) => allocSide(parts.createImpl(toSubAllocatorConfig(config)), toSubAllocatorConfig(config).capacityBytes, env, false),
    apply: (side, command) => applyAllocCommandCaught(side, command),
    invariants: subAllocatorInvariants(parts.structure),
    probes: [...COMMON_ALLOC_PROBES, ...parts.policyProbes],
  };
}

/** Wraps any allocator of ours as an implementation side (mutants use it). */
export function subAllocatorSide(allocator: BlockAllocator, config: JsonObject, env: RunEnv): AllocSide<BlockAllocator> {
  return allocSide(allocator, toSubAllocatorConfig(config).capacityBytes, env, false);
}
