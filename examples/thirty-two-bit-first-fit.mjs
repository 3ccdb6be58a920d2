// A first fit with a planted bug of C-derived code: its alignUp is 32-bit arithmetic,
//   const alignUp = (v, a) => (v + a - 1) & ~(a - 1);
// right on every heap under 2 GiB, wrong past 2^31 (the & works on 32-bit integers, so an
// offset of 3 GiB comes back negative). GPU heaps are 256 MiB to 64 GiB; the default campaign
// generates a share of configs that size and finds it:
//   npm run fuzz -- --allocator examples/thirty-two-bit-first-fit.mjs --budget 30s
// A 32-bit allocator that knows it would say so instead: export const maxCapacityBytes = 2 ** 31.

export const policy = 'any';

const alignUp = (value, align) => (value + align - 1) & ~(align - 1);


export function createAllocator(capacityBytes) {
  /** Free ranges [start, end), ascending, never adjacent. */
  const free = [{ start: 0, end: capacityBytes }];
  /** offset -> size of the live allocations. */
  const live = new Map();
  return {
    alloc(sizeBytes, alignBytes) {
      for (let i = 0; i < free.length; i++) {
        const range = free[i];
        const start = alignUp(range.start, alignBytes);
        if (start + sizeBytes > range.end) continue;
        const pieces = [];
        if (start > range.start) pieces.push({ start: range.start, end: start });
        if (start + sizeBytes < range.end) pieces.push({ start: start + sizeBytes, end: range.end });
        free.splice(i, 1, ...pieces);
        live.set(start, sizeBytes);
        return start;
      }
      return null;
    },
    free(offsetBytes) {
      const sizeBytes = live.get(offsetBytes);
      if (sizeBytes === undefined) throw new Error(`free(${offsetBytes}): not a live allocation`);
      live.delete(offsetBytes);
      let start = offsetBytes;
      let end = offsetBytes + sizeBytes;
      let i = free.findIndex((range) => range.start > start);
      if (i === -1) i = free.length;
      if (i < free.length && free[i].start === end) {
        end = free[i].end;
        free.splice(i, 1);
      }
      if (i > 0 && free[i - 1].end === start) {
        start = free[i - 1].start;
        free.splice(i - 1, 1);
        i--;
      }
      free.splice(i, 0, { start, end });
    },
  };
}
