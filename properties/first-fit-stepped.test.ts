/**
 * The bug catalog's step-by-step twin of first fit (mutants/alloc-first-fit.ts, SteppedFirstFit)
 * against the shipped allocator, whose alloc and free do the same work written out in one piece:
 * the same answers (offsets, nulls, error codes), the same blocks and byte counts, and the same
 * free indexes (alignments, floors, every block's bin, each bin's count and lowest start, every
 * tree value) after every command, both self-checks clean. The heaps' inner order may differ (the
 * shipped code re-keys an entry in place where the twin removes and inserts), which no answer
 * depends on. A mutant of the twin is a bug of the shipped allocator only while the two agree.
 * Sequences run on heaps of 4 KiB to 16 MiB, mix alignments from 1 B to past the heap (each
 * from 4 KiB up gets its own index on heaps from 64 KiB, up to three), sizes from a byte to past the heap, exact fits, merges on
 * both sides, and bad frees (interior, one byte off, already free).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { firstTwinDifference, TEST_SEED } from './support.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import type { SubAllocatorConfig } from '../src/alloc/config.js';
import { NIL, type BlockList } from '../src/alloc/first-fit-blocks.js';
import type { FreeIndex } from '../src/alloc/first-fit-index.js';
import { SteppedFirstFit } from '../mutants/alloc-first-fit.js';

type Command =
  | { op: 'alloc'; size: number; alignLog: number }
  | { op: 'free'; pick: number; skew: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    op: fc.constant('alloc' as const),
    size: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 1 << 20 })),
    alignLog: fc.integer({ min: 0, max: 21 }),
  }),
  fc.record({
    op: fc.constant('free' as const),
    pick: fc.nat(),
    /** Bytes added to a live offset: 0 (a good free), or a bad one. */
    skew: fc.constantFrom(0, 0, 0, 0, 1, -1, 16),
  }),
);

/** The protected units both sides keep (read only, for the comparison). */
function internals(pool: FirstFitAllocator): { indexes: FreeIndex[]; list: BlockList } {
  return pool as unknown as { indexes: FreeIndex[]; list: BlockList };
}

/** Everything both sides must agree on after a command, the free indexes included. */
function state(pool: FirstFitAllocator) {
  const { indexes, list } = internals(pool);
  const listed: number[] = [];
  for (let node = list.head; node !== NIL; node = list.next(node)) listed.push(node);
  return {
    blocks: pool.blocks(),
    used: pool.usedBytes(),
    free: pool.freeBytes(),
    pristine: pool.isPristine(),
    indexes: indexes.map((index) => ({
      alignBytes: index.alignBytes,
      floorBin: index.floorBin,
      bins: listed.map((node) => index.bin[node]),
      counts: Array.from(index.counts),
      tops: Array.from(index.tops),
    })),
  };
}

/** Runs `commands` on both; returns the first difference, or null. */
function firstDifference(
  capacityBytes: number,
  commands: readonly Command[],
  Twin: new (config: SubAllocatorConfig) => FirstFitAllocator,
): string | null {
  const shipped = new FirstFitAllocator({ capacityBytes });
  const twin = new Twin({ capacityBytes });
  return firstTwinDifference(
    shipped,
    twin,
    commands.map((command) =>
      command.op === 'alloc'
        ? { op: 'alloc', sizeBytes: command.size, alignBytes: 2 ** command.alignLog }
        : { op: 'free', pick: command.pick, skewBytes: command.skew },
    ),
    state,
  );
}

describe('first fit: the catalog twin agrees with the shipped allocator', () => {
  it('answer for answer, block for block, bin for bin, tree value for tree value', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1 << 12, 1 << 16, 1 << 20, 1 << 24),
        fc.array(commandArb, { maxLength: 80 }),
        (capacityBytes, commands) => {
          expect(firstDifference(capacityBytes, commands, SteppedFirstFit)).toBeNull();
        },
      ),
      { seed: TEST_SEED, numRuns: 300 },
    );
  });

  it('a twin with one step changed is told apart (the comparison can fail)', () => {
    // A free that merges with the block after it but leaves the block before it alone.
    class NoMergeBack extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const node = this.liveNodeAt(offsetBytes);
        this.markFree(node);
        const following = this.list.next(node);
        if (following !== -1 && this.list.isFree(following)) this.absorbNext(node);
        this.reindex(node);
      }
    }
    const commands: Command[] = [
      { op: 'alloc', size: 100, alignLog: 0 },
      { op: 'alloc', size: 100, alignLog: 0 },
      { op: 'free', pick: 0, skew: 0 },
      { op: 'free', pick: 0, skew: 0 },
    ];
    expect(firstDifference(1 << 16, commands, NoMergeBack)).toMatch(/^step 3 .*shipped \{/);
  });
});
