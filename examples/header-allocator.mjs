// A correct first-fit allocator that keeps bookkeeping inside the pool, declaring its promise:
//   npm run fuzz -- --allocator examples/header-allocator.mjs --budget 30s
//
// Like a C heap (dlmalloc, TLSF): the first 64 bytes of the pool hold its state, every block
// starts with a 16-byte header in front of the data, and blocks are multiples of 16 bytes. So an
// empty pool of C bytes does not place every request up to C (alloc(C, 1) never fits), by
// design. The promise states exactly what an empty pool places: a request whose data, behind
// the pool state and its header and aligned, ends within the pool once its block is rounded up
// to 16. Pools under 128 bytes hold almost nothing and are not worth testing.

export const promise = { minPoolBytes: 128, overheadBytes: 64, headerBytes: 16, roundsTo: 16 };

const STATE_BYTES = 64;
const HEADER_BYTES = 16;
const GRAIN_BYTES = 16;

const alignUp = (value, align) => Math.ceil(value / align) * align;

export function createAllocator(capacityBytes) {
  const end = Math.floor(capacityBytes / GRAIN_BYTES) * GRAIN_BYTES;
  /** Free blocks [start, end), ascending by start, never adjacent; starts and ends multiples of 16. */
  const free = end > STATE_BYTES ? [{ start: STATE_BYTES, end }] : [];
  /** data offset -> its block { start, end }. */
  const live = new Map();
  return {
    alloc(sizeBytes, alignBytes) {
      for (let i = 0; i < free.length; i++) {
        const block = free[i];
        const data = alignUp(block.start + HEADER_BYTES, alignBytes);
        const blockEnd = alignUp(data + sizeBytes, GRAIN_BYTES);
        if (blockEnd > block.end) continue;
        // The header sits at data - 16; any padding in front of it belongs to the block.
        if (blockEnd < block.end) free[i] = { start: blockEnd, end: block.end };
        else free.splice(i, 1);
        live.set(data, { start: block.start, end: blockEnd });
        return data;
      }
      return null;
    },
    free(offsetBytes) {
      const block = live.get(offsetBytes);
      if (block === undefined) throw new Error(`free(${offsetBytes}): not a live allocation`);
      live.delete(offsetBytes);
      let { start, end: blockEnd } = block;
      let i = free.findIndex((range) => range.start > start);
      if (i === -1) i = free.length;
      if (i < free.length && free[i].start === blockEnd) {
        blockEnd = free[i].end;
        free.splice(i, 1);
      }
      if (i > 0 && free[i - 1].end === start) {
        start = free[i - 1].start;
        free.splice(i - 1, 1);
        i--;
      }
      free.splice(i, 0, { start, end: blockEnd });
    },
  };
}
