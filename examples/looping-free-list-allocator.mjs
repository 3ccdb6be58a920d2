// An allocator with a bug that hangs rather than corrupts: a singly linked free list whose
// coalescing links a node to itself when a freed block closes the gap between two free
// neighbours. The next alloc or free that walks past that node loops forever,
// the way a corrupted free list hangs an engine's loading thread.
//
//   npm run fuzz -- --allocator examples/looping-free-list-allocator.mjs --timeout 1s
//
// ends with a 'hang' finding shrunk to a few commands (never a stuck campaign).

export function createAllocator(capacityBytes) {
  /** Free blocks in offset order: { start, end, next }. */
  let head = { start: 0, end: capacityBytes, next: null };
  const live = new Map();
  return {
    alloc(sizeBytes, alignBytes) {
      let previous = null;
      for (let node = head; node !== null; previous = node, node = node.next) {
        const start = Math.ceil(node.start / alignBytes) * alignBytes;
        if (start + sizeBytes > node.end) continue;
        // Padding in front of an aligned start stays free in this node; the rest is split off.
        const tail =
          start + sizeBytes < node.end
            ? { start: start + sizeBytes, end: node.end, next: node.next }
            : node.next;
        if (start > node.start) {
          node.end = start;
          node.next = tail;
        } else if (previous === null) head = tail;
        else previous.next = tail;
        live.set(start, sizeBytes);
        return start;
      }
      return null;
    },
    free(offsetBytes) {
      const sizeBytes = live.get(offsetBytes);
      if (sizeBytes === undefined) throw new Error(`free(${offsetBytes}): not a live allocation`);
      live.delete(offsetBytes);
      const block = { start: offsetBytes, end: offsetBytes + sizeBytes, next: null };
      let previous = null;
      let node = head;
      while (node !== null && node.start < block.start) {
        previous = node;
        node = node.next;
      }
      block.next = node;
      if (previous === null) head = block;
      else previous.next = block;
      if (node !== null && block.end === node.start) {
        block.end = node.end;
        block.next = node.next;
      }
      if (previous !== null && previous.end === block.start) {
        previous.end = block.end;
        // The bug: this should be `previous.next = block.next`.
        previous.next = block.next === null ? null : previous;
      }
    },
  };
}
