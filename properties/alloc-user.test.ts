import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadUserAllocator, UserAllocatorError } from '../src/user-allocator-module.js';
import {
  userAllocatorSystem,
  userAllocatorSystemForConfig,
  userAllocatorSystemFromModule,
} from '../src/systems/user-allocator.js';
import { checkSystem } from '../src/harness/property.js';
import { RunContext, runSequence } from '../src/harness/runner.js';
import { TEST_SEED } from './support.js';
import {
  loadRegression,
  replayRegression,
  writeRegression,
  REGRESSION_FORMAT,
} from '../src/harness/regression.js';
import {
  FALSE_OOM_PROBE,
  falseOutOfMemoryFailures,
  falseOutOfMemoryShare,
  fittingGapExists,
  NULL_ANSWER_PROBE,
} from '../src/systems/alloc-false-oom.js';
import type { Allocator } from '../src/alloc/allocator.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';

const dir = mkdtempSync(path.join(tmpdir(), 'user-allocator-'));
function moduleFile(name: string, source: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, source);
  return file;
}

describe('loadUserAllocator: one-line errors naming the file', () => {
  it('rejects a missing file, a bad extension, a load error, a missing export and a bad policy', async () => {
    await expect(loadUserAllocator(path.join(dir, 'nope.mjs'))).rejects.toThrow(
      /nope\.mjs: no such file/,
    );
    await expect(loadUserAllocator(moduleFile('a.txt', ''))).rejects.toThrow(
      /a\.txt: expected a module ending in/,
    );
    await expect(loadUserAllocator(moduleFile('syntax.mjs', 'export const = ;'))).rejects.toThrow(
      /syntax\.mjs: failed to load/,
    );
    await expect(loadUserAllocator(moduleFile('none.mjs', 'export const x = 1;'))).rejects.toThrow(
      /none\.mjs: must export a function createAllocator/,
    );
    await expect(
      loadUserAllocator(
        moduleFile(
          'policy.mjs',
          "export const policy = 'worst-fit'; export function createAllocator() {}",
        ),
      ),
    ).rejects.toThrow(/policy\.mjs: export policy must be one of/);
    const error = await loadUserAllocator(moduleFile('none2.mjs', '')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserAllocatorError);
    expect(String((error as Error).message)).not.toContain('\n');
  });

  it('loads the shipped examples with their policies', async () => {
    expect((await loadUserAllocator('examples/simple-first-fit-allocator.mjs')).policy).toBe(
      'first-fit',
    );
    expect((await loadUserAllocator('examples/thing-malloc-allocator.ts')).policy).toBe('any');
  });
});

describe('user allocators under the harness', () => {
  it('configs name the module and policy; a regression config loads the same system back', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/simple-first-fit-allocator.mjs'),
    );
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 1 });
    expect(result.failed).toBe(false);
    const config = {
      capacityBytes: 4096,
      allocatorModule: 'examples/simple-first-fit-allocator.mjs',
      policy: 'first-fit',
    } as const;
    expect(system.checkConfig(config)).toBeNull();
    expect(system.checkConfig({ ...config, policy: 'buddy' })).toMatch(/policy 'first-fit'/);
    const replayed = await userAllocatorSystemForConfig(config);
    expect(replayed.summary).toContain('simple-first-fit-allocator.mjs');
    const outcome = runSequence(replayed, config, [
      { op: 'alloc', sizeBytes: 10, alignBytes: 16 },
      { op: 'alloc', sizeBytes: 10, alignBytes: 16 },
      { op: 'free', index: 0 },
    ]);
    expect(outcome.ok).toBe(true);
    await expect(
      userAllocatorSystemForConfig({ ...config, allocatorModule: 'examples/missing.mjs' }),
    ).rejects.toThrow(/missing\.mjs: no such file/);
  });

  it('the example first-fit allocator conforms to our first-fit model offset for offset', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/simple-first-fit-allocator.mjs'),
    );
    expect(checkSystem(system, { seed: TEST_SEED, numRuns: 300 }).failed).toBe(false);
  });

  it('@thi.ng/malloc passes the safety checks (policy any)', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/thing-malloc-allocator.ts'),
    );
    const safetyOnly = {
      ...system,
      invariants: system.invariants.filter((invariant) => invariant.name !== 'empty-pool-liveness'),
    };
    expect(safetyOnly.invariants.length).toBe(system.invariants.length - 1);
    expect(checkSystem(safetyOnly, { seed: TEST_SEED, numRuns: 1000 }).failed).toBe(false);
  });

  it('@thi.ng/malloc fails empty-pool liveness (its headers and the over-allocation for alignment take room), shrunk to one call', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/thing-malloc-allocator.ts'),
    );
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 300 });
    expect(result.failed).toBe(true);
    if (result.failed) {
      expect(result.failure.check).toBe('empty-pool-liveness');
      expect(result.commands).toHaveLength(1);
    }
  });

  it('@thi.ng/malloc does not conform to first fit offset for offset (inline headers, no per-request alignment)', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/thing-malloc-allocator.ts'),
      'first-fit',
    );
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 100 });
    expect(result.failed).toBe(true);
    if (result.failed)
      expect(['no-false-out-of-memory', 'observation']).toContain(result.failure.check);
  });

  it('our own buddy and best-fit allocators, wrapped as user allocators, conform to their policies', () => {
    const buddy = userAllocatorSystem(
      'inline-buddy',
      (capacityBytes) => new BuddyAllocator({ capacityBytes, minBlockBytes: 64 }),
      'buddy',
      { minBlockBytes: 64 },
    );
    expect(checkSystem(buddy, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(false);
    const bestFit = userAllocatorSystem(
      'inline-best-fit',
      (capacityBytes) => new BestFitAllocator({ capacityBytes, poolAlignBytes: 256 }),
      'best-fit',
    );
    expect(checkSystem(bestFit, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(false);
    // A buddy allocator is not a first fit: the declared policy matters.
    const misdeclared = userAllocatorSystem(
      'inline-buddy',
      (capacityBytes) => new FirstFitAllocator({ capacityBytes }),
      'buddy',
      { minBlockBytes: 64 },
    );
    expect(checkSystem(misdeclared, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(true);
  });

  const broken: [string, string, (capacityBytes: number) => Allocator][] = [
    [
      'a throwing alloc',
      'impl-exception',
      () => ({
        alloc: () => {
          throw new Error('boom');
        },
        free: () => {},
      }),
    ],
    ['a non-integer return', 'honest-answers', () => ({ alloc: () => 0.5, free: () => {} })],
    [
      'an undefined return',
      'honest-answers',
      () => ({ alloc: () => undefined as unknown as null, free: () => {} }),
    ],
    [
      'a bump allocator that ignores alignment',
      'in-bounds-aligned',
      (capacityBytes) => {
        let top = 0;
        return {
          alloc: (size) => {
            if (top + size > capacityBytes) return null;
            top += size;
            return top - size;
          },
          free: () => {},
        };
      },
    ],
    [
      'an allocator that always answers 0',
      'no-overlap',
      () => ({ alloc: () => 0, free: () => {} }),
    ],
    [
      'an allocator that overruns the capacity',
      'in-bounds-aligned',
      (capacityBytes) => ({ alloc: () => capacityBytes, free: () => {} }),
    ],
    [
      'a createAllocator that throws',
      'impl-exception',
      () => {
        throw new Error('no device');
      },
    ],
    [
      'a createAllocator that returns nothing',
      'impl-exception',
      () => undefined as unknown as Allocator,
    ],
  ];
  for (const [what, check, createAllocator] of broken) {
    it(`reports ${what} as a finding (${check}), without crashing`, () => {
      const result = checkSystem(userAllocatorSystem('inline', createAllocator, 'any'), {
        seed: TEST_SEED,
        numRuns: 200,
      });
      expect(result.failed).toBe(true);
      if (result.failed) expect(result.failure.check).toBe(check);
    });
  }

  it("a policy 'first-fit' allocator that answers null where the model finds room is a false out-of-memory", () => {
    const system = userAllocatorSystem(
      'inline',
      () => ({ alloc: () => null, free: () => {} }),
      'first-fit',
    );
    const outcome = runSequence(
      system,
      { capacityBytes: 64, allocatorModule: 'inline', policy: 'first-fit' },
      [{ op: 'alloc', sizeBytes: 8, alignBytes: 1 }],
    );
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.check).toBe('no-false-out-of-memory');
  });
});

describe('liveness for every allocator, policy any included (issue 13)', () => {
  const sizeClass = 'examples/size-class-allocator.mjs';

  it('an allocator that rounds requests up to a size class and free blocks down is caught by empty-pool-liveness, shrunk to ONE command', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator(sizeClass));
    expect(system.invariants.map((invariant) => invariant.name)).toContain('empty-pool-liveness');
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 300 });
    expect(result.failed).toBe(true);
    if (result.failed) {
      expect(result.failure.check).toBe('empty-pool-liveness');
      expect(result.commands).toHaveLength(1);
      expect(result.failure.message).toMatch(
        /nothing is live, yet alloc\(\d+, \d+\) answered null on an empty pool/,
      );
      // Stored like any other finding: a regression file that names the module, replayed from the file alone.
      const file = path.join(dir, 'size-class-empty-pool-liveness.json');
      writeRegression(
        file,
        {
          format: REGRESSION_FORMAT,
          system: system.name,
          description: 'the size-class allocator refuses a request that fits its empty pool',
          config: result.config,
          commands: result.commands,
          origin: {
            tool: 'regress save',
            seed: result.seed,
            path: result.path,
            date: '2026-12-01',
            check: result.failure.check,
          },
          catches: [],
        },
        false,
      );
      const { regression, system: replayed } = await loadRegression(
        file,
        new Map(),
        async (_name, rawConfig) => userAllocatorSystemForConfig(rawConfig),
      );
      const replay = replayRegression(file, regression, replayed, []);
      expect(replay.real.ok).toBe(false);
      if (!replay.real.ok)
        expect([replay.real.failure.check, replay.real.failure.step]).toEqual([
          'empty-pool-liveness',
          0,
        ]);
    }
  });

  it('the class mismatch itself: 600 bytes on an empty 1000-byte pool (class 9 block, class 10 request)', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator(sizeClass));
    const config = { capacityBytes: 1000, allocatorModule: sizeClass, policy: 'any' } as const;
    expect(runSequence(system, config, [{ op: 'alloc', sizeBytes: 500, alignBytes: 1 }]).ok).toBe(
      true,
    );
    const outcome = runSequence(system, config, [{ op: 'alloc', sizeBytes: 600, alignBytes: 1 }]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.check).toBe('empty-pool-liveness');
    // With something live the same refusal is no liveness failure, but it counts as a false out-of-memory.
    const context = new RunContext();
    const busy = runSequence(
      system,
      config,
      [
        { op: 'alloc', sizeBytes: 8, alignBytes: 1 },
        { op: 'alloc', sizeBytes: 600, alignBytes: 1 },
      ],
      { context },
    );
    expect(busy.ok).toBe(true);
    expect(context.probeCounts.get(NULL_ANSWER_PROBE)).toBe(1);
    expect(context.probeCounts.get(FALSE_OOM_PROBE)).toBe(1);
  });

  it('a correct first fit never answers null while an aligned gap holds the request; the share is 0 of many nulls', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/simple-first-fit-allocator.mjs'),
      'any',
    );
    const context = new RunContext();
    expect(checkSystem(system, { seed: TEST_SEED, numRuns: 300, context }).failed).toBe(false);
    const stats = falseOutOfMemoryShare(Object.fromEntries(context.probeCounts));
    expect(stats?.nullAnswers).toBeGreaterThan(100);
    expect(stats?.withGap).toBe(0);
    expect(stats?.share).toBe(0);
  });

  it('a buddy allocator has a capacity cost the metric shows: nulls while a gap (not an aligned block of its order) would hold the request', () => {
    const system = userAllocatorSystem(
      'inline-buddy',
      (capacityBytes) => new BuddyAllocator({ capacityBytes, minBlockBytes: 64 }),
      'buddy',
      { minBlockBytes: 64 },
    );
    const context = new RunContext();
    expect(checkSystem(system, { seed: TEST_SEED, numRuns: 300, context }).failed).toBe(false);
    const stats = falseOutOfMemoryShare(Object.fromEntries(context.probeCounts));
    expect(stats?.withGap).toBeGreaterThan(0);
    expect(stats!.share).toBeLessThan(1);
  });

  it('fittingGapExists: gaps between live ranges, alignment, the tail', () => {
    const live = [
      { offsetBytes: 10, sizeBytes: 10, alignBytes: 1 },
      { offsetBytes: 40, sizeBytes: 10, alignBytes: 1 },
    ];
    expect(fittingGapExists(live, 64, 10, 1)).toBe(true); // [0, 10)
    expect(fittingGapExists(live, 64, 11, 1)).toBe(true); // [20, 40)
    expect(fittingGapExists(live, 64, 20, 1)).toBe(true); // [20, 40)
    expect(fittingGapExists(live, 64, 20, 16)).toBe(false); // 32 + 20 > 40, 64 + 20 > 64
    expect(fittingGapExists(live, 64, 14, 1)).toBe(true); // [50, 64)
    expect(fittingGapExists(live, 64, 21, 1)).toBe(false);
    expect(fittingGapExists([], 64, 64, 64)).toBe(true);
  });

  it('--max-false-oom-share: the systems over the limit, one line each', () => {
    const systems = {
      a: { probes: { [NULL_ANSWER_PROBE]: 10, [FALSE_OOM_PROBE]: 3 } },
      b: { probes: { [NULL_ANSWER_PROBE]: 10 } },
      c: { probes: {} },
    };
    expect(falseOutOfMemoryFailures(systems, 0.5)).toEqual([]);
    const lines = falseOutOfMemoryFailures(systems, 0.25);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^a: 3 of 10 null answers \(30\.0 %\)/);
    expect(falseOutOfMemoryShare(systems.c.probes)).toBeNull();
  });
});
