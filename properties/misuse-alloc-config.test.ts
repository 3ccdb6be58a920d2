/**
 * The sub-allocators' configuration contract (src/alloc/config.ts) and the request contract
 * (src/alloc/allocator.ts) as a caller meets them: each bad field is refused at construction with
 * a message naming the allocator and the field, the limits are exact (2^30 blocks or units is
 * the last accepted count), and the request answers (BAD_SIZE, BAD_ALIGN, BAD_FREE) carry their
 * code and the value refused.
 */
import { describe, expect, it } from 'vitest';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import {
  buddyMaxOrder,
  checkSubAllocatorConfig,
  subAllocatorConfigProblem,
  type SubAllocatorConfig,
  type SubAllocatorKind,
} from '../src/alloc/config.js';
import { alignUp, isPowerOfTwo, type BlockAllocator } from '../src/alloc/allocator.js';
import { RingUploadAllocatorImpl } from '../src/alloc/ring-upload.js';
import { FastAllocatorImpl } from '../src/alloc/upload-pages.js';
import { UploadHeapJudge } from '../src/systems/fast-allocator.js';
import { QueueTimeline } from '../src/gpu/queue-timeline.js';

const construct: Record<SubAllocatorKind, (config: SubAllocatorConfig) => BlockAllocator> = {
  'first-fit': (config) => new FirstFitAllocator(config),
  'best-fit': (config) => new BestFitAllocator(config),
  buddy: (config) => new BuddyAllocator(config),
};
const kinds = Object.keys(construct) as SubAllocatorKind[];

/** The constructor's refusal and the config check's answer must be the same message. */
function refused(kind: SubAllocatorKind, config: SubAllocatorConfig, message: string): void {
  expect(() => construct[kind](config), `${kind} ${JSON.stringify(config)}`).toThrow(
    new Error(message),
  );
  expect(subAllocatorConfigProblem(kind, config)).toBe(message);
}

describe('sub-allocator configs: every bad field refused, naming the allocator and the field', () => {
  it('capacity: a positive safe integer for every kind', () => {
    for (const kind of kinds) {
      for (const capacityBytes of [0, -256, 256.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
        refused(
          kind,
          { capacityBytes },
          `${kind}: capacityBytes must be a positive integer, got ${capacityBytes}`,
        );
      }
    }
    // First fit takes any positive integer; the smallest heap holds one byte.
    for (const capacityBytes of [1, 7, 1000]) {
      const allocator = construct['first-fit']({ capacityBytes });
      expect(allocator.alloc(capacityBytes, 1)).toBe(0);
      expect(allocator.alloc(1, 1)).toBeNull();
    }
  });

  it('buddy: a power-of-two order-0 block, a power-of-two count of them, at most 2^30', () => {
    for (const minBlockBytes of [0, 3, 384, -256, 0.5]) {
      refused(
        'buddy',
        { capacityBytes: 4096, minBlockBytes },
        `buddy: minBlockBytes must be a power of two, got ${minBlockBytes}`,
      );
    }
    refused(
      'buddy',
      { capacityBytes: 1000 },
      'buddy: capacityBytes 1000 must be minBlockBytes 256 times a power of two',
    );
    refused(
      'buddy',
      { capacityBytes: 768, minBlockBytes: 256 },
      'buddy: capacityBytes 768 must be minBlockBytes 256 times a power of two',
    );
    refused(
      'buddy',
      { capacityBytes: 128, minBlockBytes: 256 },
      'buddy: capacityBytes 128 must be minBlockBytes 256 times a power of two',
    );
    refused(
      'buddy',
      { capacityBytes: 2 ** 39, minBlockBytes: 256 },
      'buddy: at most 2^30 order-0 blocks',
    );
    expect(
      subAllocatorConfigProblem('buddy', { capacityBytes: 2 ** 38, minBlockBytes: 256 }),
    ).toBeNull();
    expect(subAllocatorConfigProblem('buddy', { capacityBytes: 256 })).toBeNull(); // one block, order 0
    expect(buddyMaxOrder({ capacityBytes: 2 ** 38, minBlockBytes: 256 })).toBe(30);
    expect(buddyMaxOrder({ capacityBytes: 4096 })).toBe(4); // default order-0 block: 256 bytes
    expect(buddyMaxOrder({ capacityBytes: 256 })).toBe(0);
    // The fields of the other kinds are ignored.
    expect(
      subAllocatorConfigProblem('buddy', {
        capacityBytes: 4096,
        poolAlignBytes: 3,
        maxAllocationBytes: -1,
      }),
    ).toBeNull();
  });

  it('best fit: a power-of-two pool alignment dividing the capacity, at most 2^30 units, a positive single-allocation limit', () => {
    for (const poolAlignBytes of [0, 3, 768, -65536]) {
      refused(
        'best-fit',
        { capacityBytes: 65536, poolAlignBytes },
        `best-fit: poolAlignBytes must be a power of two, got ${poolAlignBytes}`,
      );
    }
    refused(
      'best-fit',
      { capacityBytes: 1000 },
      'best-fit: capacityBytes 1000 must be a multiple of poolAlignBytes 256',
    );
    refused(
      'best-fit',
      { capacityBytes: 3 * 65536 + 256, poolAlignBytes: 65536 },
      `best-fit: capacityBytes ${3 * 65536 + 256} must be a multiple of poolAlignBytes 65536`,
    );
    refused(
      'best-fit',
      { capacityBytes: 2 ** 39, poolAlignBytes: 256 },
      'best-fit: at most 2^30 pool-alignment units',
    );
    expect(
      subAllocatorConfigProblem('best-fit', { capacityBytes: 2 ** 38, poolAlignBytes: 256 }),
    ).toBeNull();
    for (const maxAllocationBytes of [0, -1, 1.5, Number.NaN]) {
      refused(
        'best-fit',
        { capacityBytes: 4096, maxAllocationBytes },
        `best-fit: maxAllocationBytes must be a positive integer, got ${maxAllocationBytes}`,
      );
    }
    // The limit may exceed the capacity (no limit in effect) and defaults to the capacity.
    expect(
      subAllocatorConfigProblem('best-fit', { capacityBytes: 4096, maxAllocationBytes: 8192 }),
    ).toBeNull();
    expect(new BestFitAllocator({ capacityBytes: 4096 }).alloc(4096, 1)).toBe(0);
    expect(
      new BestFitAllocator({ capacityBytes: 4096, maxAllocationBytes: 1024 }).alloc(1025, 1),
    ).toBeNull();
    expect(
      subAllocatorConfigProblem('best-fit', { capacityBytes: 4096, minBlockBytes: 3 }),
    ).toBeNull();
  });

  it('checkSubAllocatorConfig throws a plain Error (a configuration mistake, not a contract answer)', () => {
    let thrown: unknown;
    try {
      checkSubAllocatorConfig('first-fit', { capacityBytes: 0 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(checkSubAllocatorConfig('first-fit', { capacityBytes: 1 })).toBeUndefined();
  });
});

describe('requests: the answers of the contract', () => {
  it('BAD_SIZE and BAD_ALIGN name the value refused; the allocator is unchanged', () => {
    for (const kind of kinds) {
      const allocator = construct[kind]({ capacityBytes: 65536 });
      for (const sizeBytes of [0, -1, 1.5, Number.NaN, 2 ** 53]) {
        expect(() => allocator.alloc(sizeBytes, 1)).toThrow(
          `BAD_SIZE: sizeBytes must be a positive integer, got ${sizeBytes}`,
        );
      }
      for (const alignBytes of [0, -2, 3, 1.5, 2 ** 53 + 2, Number.NaN, 2 ** 49 - 1, 2 ** 50 + 1]) {
        expect(() => allocator.alloc(16, alignBytes)).toThrow(
          `BAD_ALIGN: alignBytes must be a power of two, got ${alignBytes}`,
        );
      }
      expect(() => allocator.free(0)).toThrow(
        'BAD_FREE: offset 0 is not the start of a live allocation',
      );
      expect(allocator.isPristine()).toBe(true);
    }
  });

  it('the ring and the fast allocator refuse the same alignments', () => {
    const ring = new RingUploadAllocatorImpl(65536);
    const fast = new FastAllocatorImpl(
      new UploadHeapJudge(new QueueTimeline()),
      new QueueTimeline(),
      4096,
      0,
    );
    for (const alignBytes of [0, 3, 1.5, 2 ** 49 - 1, 2 ** 50 + 1]) {
      expect(() => ring.allocate(16, alignBytes)).toThrow(
        `BAD_ALIGN: alignBytes must be a power of two, got ${alignBytes}`,
      );
      expect(() => fast.allocate(16, alignBytes)).toThrow(
        `BAD_ALIGN: alignBytes must be a power of two, got ${alignBytes}`,
      );
    }
    expect(ring.allocate(16, 2 ** 50)).toBe(0);
    expect(fast.allocate(16, 2 ** 50)).toEqual({ bufferId: 1, offsetBytes: 0 });
  });

  it('isPowerOfTwo and alignUp over the whole safe-integer range', () => {
    for (let k = 0; k <= 52; k++) {
      expect(isPowerOfTwo(2 ** k), `2^${k}`).toBe(true);
      if (k >= 2) expect(isPowerOfTwo(2 ** k + 2 ** (k - 1)), `2^${k} + 2^${k - 1}`).toBe(false);
      // Near large powers Math.log2 rounds to an integer (log2(2^49 - 1) === 49): no test of a power.
      if (k >= 2) expect(isPowerOfTwo(2 ** k - 1), `2^${k} - 1`).toBe(false);
      if (k >= 1) expect(isPowerOfTwo(2 ** k + 1), `2^${k} + 1`).toBe(false);
    }
    for (const value of [
      0,
      -1,
      -4,
      0.5,
      2 ** 53,
      2 ** 60,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      6,
      0x40000001,
      0x80000000 + 0x40000000,
    ]) {
      expect(isPowerOfTwo(value), String(value)).toBe(false);
    }
    expect(alignUp(0, 256)).toBe(0);
    expect(alignUp(1, 256)).toBe(256);
    expect(alignUp(256, 256)).toBe(256);
    expect(alignUp(2 ** 33 + 1, 2 ** 32)).toBe(3 * 2 ** 32);
  });
});
