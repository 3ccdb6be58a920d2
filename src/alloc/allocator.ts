/**
 * The allocator contract shared by every sub-allocator here and by users' own allocators
 * (`npm run fuzz -- --allocator path/to/module`): docs/spec/allocators.md#al-common.
 */

import { ContractError } from '../contract.js';

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
  // Fast path for 32-bit values (the hot path of every alloc); the same rule as the general one.
  if (value > 0 && value <= 0x40000000 && (value | 0) === value) return (value & (value - 1)) === 0;
  if (!Number.isSafeInteger(value) || value <= 0) return false;
  // Above 2^30 a power of two is 2^30 times a smaller one; the division is exact. (Math.log2 is
  // no test here: it rounds log2(2^49 - 1) and log2(2^49 + 1) to exactly 49.)
  return value % 0x40000000 === 0 && isPowerOfTwo(value / 0x40000000);
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
  /**
   * Optional: what live() returns, without the copy: a read-only array (its entries may be
   * reused objects) that is valid only until the next alloc or free. Invariants that read the
   * live list after every step read it through `inspectLive`.
   */
  liveView?(): readonly LiveAllocation[];
  /** Bytes in free blocks. */
  freeBytes(): number;
  /** Bytes handed to callers (sum of live sizes). */
  usedBytes(): number;
  /** Bytes reserved but not handed out: alignment padding and internal fragmentation. */
  wasteBytes(): number;
  /** True when the allocator is back to its initial state: one free block of full size. */
  isPristine(): boolean;
}

/**
 * The request checks every allocator here makes, in this order (so model and implementation
 * throw the same code for a request that is bad in two ways): size first, then alignment.
 */
export function validateRequest(sizeBytes: number, alignBytes: number): void {
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) {
    throw new ContractError(
      AllocErrors.BAD_SIZE,
      `sizeBytes must be a positive integer, got ${sizeBytes}`,
    );
  }
  if (!isPowerOfTwo(alignBytes)) {
    throw new ContractError(
      AllocErrors.BAD_ALIGN,
      `alignBytes must be a power of two, got ${alignBytes}`,
    );
  }
}

/** The BAD_FREE error for `offsetBytes` (double free, interior offset, never allocated). */
export function badFree(offsetBytes: number): ContractError {
  return new ContractError(
    AllocErrors.BAD_FREE,
    `offset ${offsetBytes} is not the start of a live allocation`,
  );
}

/** One block of an allocator's tiling of [0, capacity), for structure invariants and tests. */
export interface BlockInfo {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  readonly free: boolean;
}

/**
 * Our own allocators and models also expose their block tiling and a self-check of their
 * internal indexes (free lists, size-sorted arrays, bitmaps) against it.
 */
export interface BlockAllocator extends InspectableAllocator {
  /** Every block, free or allocated, ascending by offset; together they tile [0, capacity). */
  blocks(): BlockInfo[];
  /**
   * Optional: the blocks blocks() returns, without the copy: a read-only array (its entries may
   * be reused objects) that is valid only until the next alloc or free. Invariants that check
   * the blocks after every step read it through `inspectBlocks`.
   */
  blocksView?(): readonly BlockInfo[];
  /** Null when the internal indexes agree with the blocks, otherwise what disagrees. */
  checkIndexes(): string | null;
}

/** The allocator's blocks as blocks() returns them, through blocksView() when it has one. */
export function inspectBlocks(allocator: BlockAllocator): readonly BlockInfo[] {
  return allocator.blocksView !== undefined ? allocator.blocksView() : allocator.blocks();
}

/** The allocator's live allocations as live() returns them, through liveView() when it has one. */
export function inspectLive(allocator: InspectableAllocator): readonly LiveAllocation[] {
  return allocator.liveView !== undefined ? allocator.liveView() : allocator.live();
}

/** Sets entry `index` of a reusable live view (reusing its record when there is one). */
export function setLiveEntry(
  view: { offsetBytes: number; sizeBytes: number }[],
  index: number,
  offsetBytes: number,
  sizeBytes: number,
): void {
  const entry = view[index];
  if (entry === undefined) {
    view.push({ offsetBytes, sizeBytes });
  } else {
    entry.offsetBytes = offsetBytes;
    entry.sizeBytes = sizeBytes;
  }
}

/** Sets entry `index` of a reusable block view (reusing its record when there is one). */
export function setBlockEntry(
  view: { offsetBytes: number; sizeBytes: number; free: boolean }[],
  index: number,
  offsetBytes: number,
  sizeBytes: number,
  free: boolean,
): void {
  const entry = view[index];
  if (entry === undefined) {
    view.push({ offsetBytes, sizeBytes, free });
  } else {
    entry.offsetBytes = offsetBytes;
    entry.sizeBytes = sizeBytes;
    entry.free = free;
  }
}

/** Fresh copies of a live view (`live()` of allocators whose views reuse their records). */
export function copyLive(view: readonly LiveAllocation[]): LiveAllocation[] {
  const out: LiveAllocation[] = new Array(view.length);
  for (let i = 0; i < view.length; i++)
    out[i] = { offsetBytes: view[i]!.offsetBytes, sizeBytes: view[i]!.sizeBytes };
  return out;
}

/** Fresh copies of a block view (`blocks()` of allocators whose views reuse their records). */
export function copyBlocks(view: readonly BlockInfo[]): BlockInfo[] {
  const out: BlockInfo[] = new Array(view.length);
  for (let i = 0; i < view.length; i++)
    out[i] = {
      offsetBytes: view[i]!.offsetBytes,
      sizeBytes: view[i]!.sizeBytes,
      free: view[i]!.free,
    };
  return out;
}
