// A tiny, correct allocator in plain JavaScript, showing the contract for
//   npm run fuzz -- --allocator examples/simple-first-fit-allocator.mjs --seed 1 --budget 30s
//
// First fit over free ranges sorted by offset, padding in front of an aligned start kept free,
// coalescing on free: the same choices as our first-fit model (models/alloc-first-fit.ts), so
// it declares policy 'first-fit' and is compared with that model offset for offset.
// O(n) per call: fine for an example, not for an engine.

export const policy = 'first-fit';

export function createAllocator(capacityBytes) {
  return createFirstFit(capacityBytes, (value, align) => Math.ceil(value / align) * align);
}

/** The first fit over `capacityBytes`, rounding a start up to an alignment with `alignUp(value, align)`. */
export function createFirstFit(capacityBytes, alignUp) {
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
        if (start + sizeBytes < range.end)
          pieces.push({ start: start + sizeBytes, end: range.end });
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
