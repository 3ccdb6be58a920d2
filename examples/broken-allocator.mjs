// A deliberately broken allocator, to show what a finding looks like:
//   npm run fuzz -- --allocator examples/broken-allocator.mjs --runs 200 --out /tmp/findings
//
// A bump allocator with a free list of exact-size holes. The bug: a hole is reused when it is
// at least as large as the request, but the rest of the hole is also kept in the list, so the
// same bytes can be handed out twice. Policy 'any': only safety is checked.

export const policy = 'any';

export function createAllocator(capacityBytes) {
  let topBytes = 0;
  const holes = []; // { offset, size }
  const live = new Map(); // offset -> size
  return {
    alloc(sizeBytes, alignBytes) {
      const hole = holes.find(
        (candidate) => candidate.size >= sizeBytes && candidate.offset % alignBytes === 0,
      );
      if (hole !== undefined) {
        // Bug: the hole should be removed (or shrunk); it stays listed whole.
        live.set(hole.offset, sizeBytes);
        return hole.offset;
      }
      const offset = Math.ceil(topBytes / alignBytes) * alignBytes;
      if (offset + sizeBytes > capacityBytes) return null;
      topBytes = offset + sizeBytes;
      live.set(offset, sizeBytes);
      return offset;
    },
    free(offsetBytes) {
      const size = live.get(offsetBytes);
      if (size === undefined) throw new Error(`free of unknown offset ${offsetBytes}`);
      live.delete(offsetBytes);
      holes.push({ offset: offsetBytes, size });
    },
  };
}
