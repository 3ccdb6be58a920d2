// A segregated-fit allocator with a classic liveness bug, to show the empty-pool-liveness check:
//   npm run fuzz -- --allocator examples/size-class-allocator.mjs --runs 300 --out /tmp/findings
//
// Free blocks sit in lists by size class, class k holding sizes in [2^k, 2^(k+1)). A request
// reserves its worst-case alignment padding and is rounded UP to its class (ceil(log2)), so any
// block of that class or above holds it; a free block is filed DOWN (floor(log2)). The two
// roundings disagree: on an empty pool of 1000 bytes the one free block sits in class 9
// (512..1023), a request of 600 bytes looks in class 10 and above, finds nothing, and answers
// null though offset 0 holds it. Everything it hands out is in bounds, aligned and disjoint,
// and frees coalesce with both neighbours: only liveness is broken. Policy 'any'.

export const policy = 'any';

export function createAllocator(capacityBytes) {
  /** start -> size and end -> start of the free blocks; starts per size class. */
  const freeSize = new Map();
  const freeEnd = new Map();
  const classes = [];
  /** offset handed out -> { start, size } of the reserved range. */
  const live = new Map();
  const classDown = (size) => Math.floor(Math.log2(size));
  const classUp = (size) => Math.ceil(Math.log2(size));

  function addFree(start, size) {
    freeSize.set(start, size);
    freeEnd.set(start + size, start);
    const down = classDown(size);
    classes[down] ??= [];
    classes[down].push(start);
  }
  function removeFree(start) {
    const size = freeSize.get(start);
    freeSize.delete(start);
    freeEnd.delete(start + size);
    const list = classes[classDown(size)];
    list.splice(list.indexOf(start), 1);
    return size;
  }

  addFree(0, capacityBytes);
  return {
    alloc(sizeBytes, alignBytes) {
      const needBytes = sizeBytes + alignBytes - 1;
      for (let k = classUp(needBytes); k < classes.length; k++) {
        const list = classes[k];
        if (list === undefined || list.length === 0) continue;
        const start = Math.min(...list);
        const size = removeFree(start);
        const offset = Math.ceil(start / alignBytes) * alignBytes;
        if (offset > start) addFree(start, offset - start);
        if (offset + sizeBytes < start + size)
          addFree(offset + sizeBytes, start + size - offset - sizeBytes);
        live.set(offset, sizeBytes);
        return offset;
      }
      return null;
    },
    free(offsetBytes) {
      const sizeBytes = live.get(offsetBytes);
      if (sizeBytes === undefined) throw new Error(`free(${offsetBytes}): not a live allocation`);
      live.delete(offsetBytes);
      let start = offsetBytes;
      let end = offsetBytes + sizeBytes;
      if (freeSize.has(end)) end += removeFree(end);
      const before = freeEnd.get(start);
      if (before !== undefined) {
        removeFree(before);
        start = before;
      }
      addFree(start, end - start);
    },
  };
}
