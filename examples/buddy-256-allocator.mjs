// A correct buddy allocator whose smallest block is 256 bytes, declaring its promise:
//   npm run fuzz -- --allocator examples/buddy-256-allocator.mjs --budget 30s
//
// It manages the largest block of 256 * 2^k bytes that fits the capacity (the rest of the pool
// stays unused) and rounds every request up to a power-of-two block of at least 256 bytes, at
// least as large as the alignment (a block is aligned to its own size). So it refuses, by
// design, requests on small pools (alloc(1, 1) on a pool of 255 bytes) and requests whose block
// outgrows the pool (alloc(600, 1) on a pool of 1000 bytes: its block is 1024). It says so:

export const promise = { minPoolBytes: 256, minBlockBytes: 256, roundsTo: 'power-of-two' };

const MIN_BLOCK_BYTES = 256;

export function createAllocator(capacityBytes) {
  /** The top block: 256 * 2^topOrder bytes at offset 0 (none when the pool is under 256 bytes). */
  let topOrder = -1;
  while (MIN_BLOCK_BYTES * 2 ** (topOrder + 1) <= capacityBytes) topOrder++;
  /** freeLists[order]: offsets of the free blocks of that order. */
  const freeLists = [];
  for (let order = 0; order <= topOrder; order++) freeLists.push(new Set());
  if (topOrder >= 0) freeLists[topOrder].add(0);
  /** offset -> order of the live blocks. */
  const live = new Map();
  const blockBytes = (order) => MIN_BLOCK_BYTES * 2 ** order;
  // Offsets reach 2^36 on GPU-sized heaps: the buddy is found by division, not by XOR (32 bits).
  const buddyOf = (offset, order) =>
    Math.floor(offset / blockBytes(order)) % 2 === 0
      ? offset + blockBytes(order)
      : offset - blockBytes(order);
  return {
    alloc(sizeBytes, alignBytes) {
      let want = 0;
      while (blockBytes(want) < Math.max(sizeBytes, alignBytes)) want++;
      let order = want;
      while (order <= topOrder && freeLists[order].size === 0) order++;
      if (order > topOrder) return null;
      const offset = freeLists[order].values().next().value;
      freeLists[order].delete(offset);
      while (order > want) {
        order--;
        freeLists[order].add(offset + blockBytes(order));
      }
      live.set(offset, want);
      return offset;
    },
    free(offsetBytes) {
      let order = live.get(offsetBytes);
      if (order === undefined) throw new Error(`free(${offsetBytes}): not a live allocation`);
      live.delete(offsetBytes);
      let offset = offsetBytes;
      while (order < topOrder && freeLists[order].has(buddyOf(offset, order))) {
        freeLists[order].delete(buddyOf(offset, order));
        offset = Math.min(offset, buddyOf(offset, order));
        order++;
      }
      freeLists[order].add(offset);
    },
  };
}
