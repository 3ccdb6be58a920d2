/**
 * The JavaScript port of examples/native/first_fit.cpp (the same blocks, free list and choices)
 * as an allocator module: `npm run bench -- native` runs it beside the C++ driver.
 */
import type { Allocator } from '../src/alloc/allocator.js';

export const policy = 'first-fit';

interface Block {
  offset: number;
  size: number;
  free: boolean;
  prev: Block | null;
  next: Block | null;
  nextFree: Block | null;
}

export function createAllocator(capacityBytes: number): Allocator {
  const head: Block = {
    offset: 0,
    size: capacityBytes,
    free: true,
    prev: null,
    next: null,
    nextFree: null,
  };
  let freeHead: Block | null = head;
  let first: Block | null = head;
  const freeBefore = (b: Block): Block | null => {
    for (let p = b.prev; p !== null; p = p.prev) if (p.free) return p;
    return null;
  };
  return {
    alloc(size: number, align: number): number | null {
      let largest = 0;
      for (let f = freeHead; f !== null; f = f.nextFree) if (f.size > largest) largest = f.size;
      if (size > largest) return null;
      let before: Block | null = null;
      for (let b = freeHead; b !== null; before = b, b = b.nextFree) {
        const aligned = Math.ceil(b.offset / align) * align;
        if (aligned - b.offset + size > b.size) continue;
        const end = b.offset + b.size;
        if (aligned > b.offset) {
          const pad: Block = {
            offset: b.offset,
            size: aligned - b.offset,
            free: true,
            prev: b.prev,
            next: b,
            nextFree: b,
          };
          if (b.prev !== null) b.prev.next = pad;
          else first = pad;
          b.prev = pad;
          if (before !== null) before.nextFree = pad;
          else freeHead = pad;
          before = pad;
          b.offset = aligned;
          b.size = end - aligned;
        }
        let after = b.nextFree;
        if (aligned + size < end) {
          const tail: Block = {
            offset: aligned + size,
            size: end - aligned - size,
            free: true,
            prev: b,
            next: b.next,
            nextFree: after,
          };
          if (b.next !== null) b.next.prev = tail;
          b.next = tail;
          after = tail;
          b.size = size;
        }
        if (before !== null) before.nextFree = after;
        else freeHead = after;
        b.free = false;
        b.nextFree = null;
        return aligned;
      }
      return null;
    },
    free(offset: number): void {
      let b = first;
      while (b !== null && !(b.offset === offset && !b.free)) b = b.next;
      if (b === null) throw new Error(`free(${offset}): nothing live starts there`);
      b.free = true;
      const fp = freeBefore(b);
      if (fp !== null) {
        b.nextFree = fp.nextFree;
        fp.nextFree = b;
      } else {
        b.nextFree = freeHead;
        freeHead = b;
      }
      const next = b.next;
      if (next?.free) {
        b.size += next.size;
        b.next = next.next;
        if (next.next !== null) next.next.prev = b;
        b.nextFree = next.nextFree;
      }
      const prev = b.prev;
      if (prev?.free) {
        prev.size += b.size;
        prev.next = b.next;
        if (b.next !== null) b.next.prev = prev;
        if (fp === prev) prev.nextFree = b.nextFree;
        else if (fp !== null) fp.nextFree = b.nextFree;
        else freeHead = b.nextFree;
      }
    },
  };
}
