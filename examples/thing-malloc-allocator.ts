/**
 * Adapter: @thi.ng/malloc's MemPool (a real third-party first-fit allocator over an ArrayBuffer)
 * behind the harness's allocator contract.
 *
 *   npm run fuzz -- --allocator examples/thing-malloc-allocator.ts --seed 1 --budget 30s
 *
 * How MemPool is mapped:
 * - MemPool keeps its state (28 bytes) at the start of its buffer and an 8-byte header in front
 *   of every block, and aligns blocks to the pool alignment (8 here). The adapter gives it a
 *   buffer of capacityBytes plus the space before the first data address, and reports offsets
 *   relative to that first data address, so every offset lies in [0, capacityBytes). The block
 *   headers live inside that range, so MemPool fits less than capacityBytes of callers' data.
 * - MemPool has no per-request alignment: for alignBytes > 8 the adapter asks for
 *   sizeBytes + alignBytes - 8 bytes, hands out the aligned address inside, and remembers the
 *   address MemPool returned so free() can give that back.
 * - malloc answers 0 for "no room"; free answers false for an address it does not know: the
 *   adapter turns 0 into null and false into a thrown Error (a finding).
 *
 * Policy: MemPool is first fit by address, but its headers and 8-byte rounding shift every
 * offset, so offset-for-offset conformance with our first-fit model cannot hold; this adapter
 * declares 'any' (safety only). See README for the outcome under both policies.
 */
import { MemPool } from '@thi.ng/malloc';
import type { Allocator, AllocatorPolicy } from '../src/alloc/allocator.js';

export const policy: AllocatorPolicy = 'any';

/**
 * MemPool backs every pool with an ArrayBuffer of its size and addresses it with u32 words: the
 * heaps it is given stay at most 16 MiB (no GPU-sized ones, which would allocate gigabytes).
 */
export const maxCapacityBytes = 2 ** 24;

/** MemPool's state block (7 u32) plus the first block header: data starts here. */
const STATE_BYTES = 28;
const HEADER_BYTES = 8;
const POOL_ALIGN_BYTES = 8;

export function createAllocator(capacityBytes: number): Allocator {
  // initialTop = align(STATE + HEADER, 8) - HEADER; the first data address is initialTop + HEADER.
  const firstDataBytes =
    Math.ceil((STATE_BYTES + HEADER_BYTES) / POOL_ALIGN_BYTES) * POOL_ALIGN_BYTES;
  const bufferBytes = Math.ceil((firstDataBytes + capacityBytes) / 4) * 4;
  const pool = new MemPool({
    size: bufferBytes,
    align: POOL_ALIGN_BYTES,
    end: firstDataBytes + capacityBytes,
  });
  /** Our offset -> the address MemPool returned. */
  const rawByOffset = new Map<number, number>();
  return {
    alloc(sizeBytes: number, alignBytes: number): number | null {
      const extraBytes = alignBytes > POOL_ALIGN_BYTES ? alignBytes - POOL_ALIGN_BYTES : 0;
      const raw = pool.malloc(sizeBytes + extraBytes);
      if (raw === 0) return null;
      const relative = raw - firstDataBytes;
      const offsetBytes = Math.ceil(relative / alignBytes) * alignBytes;
      rawByOffset.set(offsetBytes, raw);
      return offsetBytes;
    },
    free(offsetBytes: number): void {
      const raw = rawByOffset.get(offsetBytes);
      if (raw === undefined)
        throw new Error(
          `thing-malloc adapter: free(${offsetBytes}) of an offset it never handed out`,
        );
      rawByOffset.delete(offsetBytes);
      if (!pool.free(raw))
        throw new Error(`@thi.ng/malloc: free(${raw}) returned false for a live block`);
    },
  };
}
