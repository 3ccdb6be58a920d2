/**
 * The allocator contract shared by every sub-allocator here and by users' own allocators
 * (`npm run fuzz -- --allocator path/to/module`): spec/allocators.md, "Common contract".
 */

/** What a user's module must return from `createAllocator(capacityBytes)`. */
export interface Allocator {
  /** Returns the offset of a new allocation, or null when there is no room (an answer, not an error). */
  alloc(sizeBytes: number, alignBytes: number): number | null;
  /** Frees the allocation starting at `offsetBytes`. */
  free(offsetBytes: number): void;
}

/** Conformance a user's allocator declares (`export const policy`); 'any' checks only safety. */
export type AllocatorPolicy = 'first-fit' | 'best-fit' | 'buddy' | 'any';

/** Contract-error codes, identical in models and implementations. */
export const AllocErrors = {
  /** sizeBytes <= 0 or not an integer. */
  BAD_SIZE: 'BAD_SIZE',
  /** alignBytes not a positive power-of-two integer. */
  BAD_ALIGN: 'BAD_ALIGN',
  /** free of an offset that is not the start of a live allocation (double, interior, unknown). */
  BAD_FREE: 'BAD_FREE',
} as const;

export function isPowerOfTwo(value: number): boolean {
  // Math.log2 is exact for powers of two up to 2^53, the whole safe-integer range.
  return Number.isSafeInteger(value) && value > 0 && Number.isInteger(Math.log2(value));
}

export function alignUp(value: number, alignBytes: number): number {
  return Math.ceil(value / alignBytes) * alignBytes;
}

/** A live allocation as the caller sees it: bytes [offsetBytes, offsetBytes + sizeBytes). */
export interface LiveAllocation {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
}

/**
 * What the invariants need from our own allocators and models on top of the contract.
 * Users' allocators only implement `Allocator`; the harness tracks their live ranges itself.
 */
export interface InspectableAllocator extends Allocator {
  readonly capacityBytes: number;
  /** Live allocations, ascending by offset. */
  live(): LiveAllocation[];
  /** Bytes in free blocks. */
  freeBytes(): number;
  /** Bytes handed to callers (sum of live sizes). */
  usedBytes(): number;
  /** Bytes reserved but not handed out: alignment padding and internal fragmentation. */
  wasteBytes(): number;
  /** True when the allocator is back to its initial state: one free block of full size. */
  isPristine(): boolean;
}
