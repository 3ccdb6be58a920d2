/**
 * The `residency-set` system's config and its side: the slot pool (model or implementation) and the
 * sets the commands opened, by handle.
 */
import type { RunEnv } from '../harness/system.js';
import { Nat, Strict, Type, type Static } from '../harness/schema.js';
import type { ResidencySetPool } from '../residency/residency-set-types.js';
import { pickLive } from './common.js';

export const ResidencySetConfigSchema = Strict({
  slotCount: Nat({ description: 'slots in the pool: 32 in the library, 1024 in Unreal' }),
  initialCapacity: Nat({
    description: "entries of a set's first storage allocation (4096 in the library)",
  }),
  objectSizesBytes: Type.Array(Nat(), {
    description: 'size of each tracked object; object ids are the indices',
  }),
});
export type ResidencySetSystemConfig = Static<typeof ResidencySetConfigSchema>;

/** One side of a run: the pool, the live handles, and the Open/Close protocol monitor. */
export interface SetSide {
  readonly pool: ResidencySetPool;
  readonly config: ResidencySetSystemConfig;
  readonly env: RunEnv;
  /** Live set ids in creation order; handles index into it. */
  readonly live: number[];
  /** Protocol monitor: sets whose last successful Open has not yet been matched by a Close. */
  readonly openedNotClosed: Set<number>;
  readonly protocolViolations: string[];
}

export function side(
  pool: ResidencySetPool,
  config: ResidencySetSystemConfig,
  env: RunEnv,
): SetSide {
  return { pool, config, env, live: [], openedNotClosed: new Set(), protocolViolations: [] };
}

export function pick(s: SetSide, handle: number): number | undefined {
  return pickLive(s.live, handle);
}
/** Object count and slot counts the ordinary configs stay within; a scale config goes past one. */
export const ORDINARY_MAX_OBJECTS = 12;
export const ORDINARY_SLOT_COUNTS = new Set([1, 2, 3, 4, 5, 8, 32, 33, 1024]);
