/**
 * The residency-set pool interface shared by the reference model (models/residency-set.ts) and
 * the implementation (src/residency/residency-set.ts). Spec: docs/spec/residency-library.md#rl-2,
 * #rl-3; Unreal's variant (1024 slots) in docs/spec/engine.md#rs-4, #rs-6.
 */

/** HRESULTs the library returns on its defined paths. */
export type HResult = 'S_OK' | 'E_INVALIDARG' | 'E_OUTOFMEMORY' | 'E_FAIL';

/** The library's ResidencySet::InvalidIndex, reported as -1 here. */
export const INVALID_SLOT = -1;

/** Contract-error codes for the paths the C++ original leaves undefined. */
export const SetErrors = {
  /** Insert into a set that is not open: the original indexes slot 0xFFFFFFFF. */
  INSERT_CLOSED: 'INSERT_CLOSED',
  /** Insert of a new object into a set stuck after a failed growth: the original reallocs from a null array. */
  INSERT_OUT_OF_MEMORY: 'INSERT_OUT_OF_MEMORY',
  /** Destroy of an open set: the original leaks its slot and leaves its flags set forever. */
  DESTROY_OPEN: 'DESTROY_OPEN',
} as const;

export interface ResidencySetConfig {
  /** Size of the slot pool: 32 in the library, 1024 in Unreal; tiny pools reach exhaustion. */
  readonly slotCount: number;
  /** Entries of a set's first storage allocation (4096 in the library). */
  readonly initialCapacity: number;
  /** Size in bytes of each tracked object; object ids are the indices. */
  readonly objectSizesBytes: readonly number[];
}

export interface ExecuteResult {
  readonly hr: HResult;
  /** Unique objects of all sets in first-seen order (empty unless hr is S_OK). */
  readonly objects: number[];
  /** Sum of the unique objects' sizes, each counted once. */
  readonly totalSizeBytes: number;
}

export interface ResidencySetPool {
  /** CreateResidencySet: a closed set with no storage. Returns its id. */
  createSet(): number;
  /** DestroyResidencySet. Throws DESTROY_OPEN for an open set. */
  destroySet(set: number): void;
  open(set: number): HResult;
  /** Returns true if the object was added, false for a duplicate or a failed growth. */
  insert(set: number, object: number): boolean;
  close(set: number): HResult;
  /** The master-set merge of ExecuteCommandLists, docs/spec/residency-library.md#rl-7-2 to #rl-7-4; null entries are untracked lists. */
  execute(sets: readonly (number | null)[]): ExecuteResult;
  /** Fault injection: the next storage growth of any set fails (Realloc returns null). */
  failNextGrowth(): void;

  // Inspection, used by the invariants.
  /** Slot held by the set, or INVALID_SLOT. */
  slotOf(set: number): number;
  isOpen(set: number): boolean;
  isOutOfMemory(set: number): boolean;
  contents(set: number): number[];
  /** Entries stored (the set's CurrentSetSize). */
  size(set: number): number;
  /** Entries the set's storage holds (0 before the first insert). */
  capacity(set: number): number;
  /** Taken slots, ascending. */
  takenSlots(): number[];
  /** Slots whose flag is set on the object, ascending. */
  flaggedSlots(object: number): number[];
}

/**
 * The spec's growth rule: first allocation `initialCapacity`, then `int32(float(cap) +
 * float(cap)/2.0f)`, computed in float32 and truncated.
 */
export function nextCapacity(capacity: number, initialCapacity: number): number {
  if (capacity === 0) return initialCapacity;
  const asFloat = Math.fround(capacity);
  return Math.trunc(Math.fround(asFloat + Math.fround(asFloat / 2)));
}
