/**
 * One configuration type for the three sub-allocators (docs/spec/allocators.md). Each allocator
 * reads the fields it needs and ignores the others, so callers that wrap "some sub-allocator" (the
 * fence-delayed free queue, benchmarks, the fuzz CLI) pass one object.
 */
import { isPowerOfTwo } from './allocator.js';

export type SubAllocatorKind = 'buddy' | 'best-fit' | 'first-fit';

export interface SubAllocatorConfig {
  /**
   * Bytes managed: every offset lies in [0, capacityBytes). Buddy: `minBlockBytes` times a power
   * of two. Best fit: a multiple of `poolAlignBytes` (the pool size). First fit: any positive
   * integer.
   */
  readonly capacityBytes: number;
  /** Buddy only: size of an order-0 block, a power of two. Default 256. */
  readonly minBlockBytes?: number;
  /**
   * Best fit only: granularity of every block offset and size, a power of two: 256 for buffer
   * pools, 65536 for placed-resource pools. Default 256.
   */
  readonly poolAlignBytes?: number;
  /**
   * Best fit only: the single-allocation limit. A request with `sizeBytes` above it belongs to the
   * engine's committed path: the pool answers null without looking at its blocks. Default
   * `capacityBytes` (no limit); Unreal uses half the pool for DEFAULT buffers.
   */
  readonly maxAllocationBytes?: number;
}

export const DEFAULT_MIN_BLOCK_BYTES = 256;
export const DEFAULT_POOL_ALIGN_BYTES = 256;

/** Throws a plain Error naming the field when a config cannot describe an allocator of `kind`. */
export function checkSubAllocatorConfig(kind: SubAllocatorKind, config: SubAllocatorConfig): void {
  const capacityBytes = config.capacityBytes;
  if (!Number.isSafeInteger(capacityBytes) || capacityBytes <= 0) {
    throw new Error(`${kind}: capacityBytes must be a positive integer, got ${capacityBytes}`);
  }
  if (kind === 'buddy') {
    const minBlockBytes = config.minBlockBytes ?? DEFAULT_MIN_BLOCK_BYTES;
    if (!isPowerOfTwo(minBlockBytes))
      throw new Error(`buddy: minBlockBytes must be a power of two, got ${minBlockBytes}`);
    if (capacityBytes % minBlockBytes !== 0 || !isPowerOfTwo(capacityBytes / minBlockBytes)) {
      throw new Error(
        `buddy: capacityBytes ${capacityBytes} must be minBlockBytes ${minBlockBytes} times a power of two`,
      );
    }
    if (capacityBytes / minBlockBytes > 2 ** 30)
      throw new Error(`buddy: at most 2^30 order-0 blocks`);
  } else if (kind === 'best-fit') {
    const poolAlignBytes = config.poolAlignBytes ?? DEFAULT_POOL_ALIGN_BYTES;
    if (!isPowerOfTwo(poolAlignBytes))
      throw new Error(`best-fit: poolAlignBytes must be a power of two, got ${poolAlignBytes}`);
    if (capacityBytes % poolAlignBytes !== 0) {
      throw new Error(
        `best-fit: capacityBytes ${capacityBytes} must be a multiple of poolAlignBytes ${poolAlignBytes}`,
      );
    }
    if (capacityBytes / poolAlignBytes > 2 ** 30)
      throw new Error(`best-fit: at most 2^30 pool-alignment units`);
    const maxAllocationBytes = config.maxAllocationBytes ?? capacityBytes;
    if (!Number.isSafeInteger(maxAllocationBytes) || maxAllocationBytes <= 0) {
      throw new Error(
        `best-fit: maxAllocationBytes must be a positive integer, got ${maxAllocationBytes}`,
      );
    }
  }
}

/** The config check as an answer instead of a throw: null when fine, else the message naming the field. */
export function subAllocatorConfigProblem(
  kind: SubAllocatorKind,
  config: SubAllocatorConfig,
): string | null {
  try {
    checkSubAllocatorConfig(kind, config);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Order-0 blocks in a buddy allocator: the k with minBlockBytes * 2^k = capacityBytes. */
export function buddyMaxOrder(config: SubAllocatorConfig): number {
  return Math.round(
    Math.log2(config.capacityBytes / (config.minBlockBytes ?? DEFAULT_MIN_BLOCK_BYTES)),
  );
}
