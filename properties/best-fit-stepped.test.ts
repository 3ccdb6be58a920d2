/**
 * The bug catalog's step-by-step twin of best fit (mutants/alloc.ts, SteppedBestFit) against the
 * shipped allocator, whose alloc and free do the same work written out in one piece: the same
 * answers (offsets, nulls, error codes), the same blocks, free-block order and byte counts after
 * every command, both indexes sound. A mutant of the twin is a bug of the shipped allocator only
 * while the two agree. Sequences mix pool alignments of 256 B, 4 KiB and 64 KiB, alignments
 * below, at and above the pool's, sizes up to past the pool and the single-allocation limit,
 * exact fits, merges on both sides, and bad frees (interior, one byte off, past a block).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { firstTwinDifference, TEST_SEED } from './support.js';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { SteppedBestFit } from '../mutants/alloc.js';

type Command =
  | { op: 'alloc'; units: number; extra: number; alignLog: number }
  | { op: 'free'; pick: number; skew: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    op: fc.constant('alloc' as const),
    units: fc.integer({ min: 0, max: 40 }),
    /** Bytes past the whole units, as a fraction of a unit (-1/256: one byte short). */
    extra: fc.integer({ min: -1, max: 255 }),
    alignLog: fc.integer({ min: 0, max: 18 }),
  }),
  fc.record({
    op: fc.constant('free' as const),
    pick: fc.nat(),
    /** Offset added to a live caller offset, in 1/256 units: 0 (a good free), or a bad one. */
    skew: fc.constantFrom(0, 0, 0, 256, 1, -256),
  }),
);

function state(pool: BestFitAllocator) {
  return {
    blocks: pool.blocks(),
    freeBySize: pool.freeBlocksBySize(),
    live: pool.live(),
    used: pool.usedBytes(),
    free: pool.freeBytes(),
    pristine: pool.isPristine(),
  };
}

/** Runs `commands` on both; returns the first difference, or null. */
function firstDifference(
  poolAlignBytes: number,
  commands: readonly Command[],
  Twin: new (config: {
    capacityBytes: number;
    poolAlignBytes: number;
    maxAllocationBytes: number;
  }) => BestFitAllocator,
): string | null {
  const unit = poolAlignBytes;
  const config = { capacityBytes: 32 * unit, poolAlignBytes, maxAllocationBytes: 24 * unit };
  const shipped = new BestFitAllocator(config);
  const twin = new Twin(config);
  return firstTwinDifference(
    shipped,
    twin,
    commands.map((command) =>
      command.op === 'alloc'
        ? {
            op: 'alloc',
            sizeBytes: command.units * unit + (command.extra * unit) / 256,
            alignBytes: 2 ** command.alignLog,
          }
        : { op: 'free', pick: command.pick, skewBytes: (command.skew * unit) / 256 },
    ),
    state,
  );
}

describe('best fit: the catalog twin agrees with the shipped allocator', () => {
  it('answer for answer and block for block', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(256, 4096, 65536),
        fc.array(commandArb, { maxLength: 80 }),
        (poolAlignBytes, commands) => {
          expect(firstDifference(poolAlignBytes, commands, SteppedBestFit)).toBeNull();
        },
      ),
      { seed: TEST_SEED, numRuns: 400 },
    );
  });

  it('a twin with one step changed is told apart (the comparison can fail)', () => {
    // Takes the low end of a 4 KiB-aligned request's block without aligning the caller's offset.
    class Unaligned extends SteppedBestFit {
      protected override callerOffset(node: number): number {
        return this.offsetUnits[node]! * this.poolAlignBytes;
      }
    }
    const commands: Command[] = [
      { op: 'alloc', units: 1, extra: 0, alignLog: 0 },
      { op: 'alloc', units: 1, extra: 0, alignLog: 12 },
    ];
    expect(firstDifference(256, commands, Unaligned)).toMatch(/^step 1 .*shipped 4096, twin 256/);
  });
});
