import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadUserAllocator, UserAllocatorError } from '../src/alloc/user-allocator';
import { userAllocatorSystem, userAllocatorSystemForConfig, userAllocatorSystemFromModule } from '../src/systems/user-allocator';
import { checkSystem } from '../src/harness/property';
import { runSequence } from '../src/harness/runner';
import { TEST_SEED } from './support';
import type { Allocator } from '../src/alloc/allocator';
import { BuddyAllocator } from '../src/alloc/buddy';
import { BestFitAllocator } from '../src/alloc/best-fit';
import { FirstFitAllocator } from '../src/alloc/first-fit';

const dir = mkdtempSync(path.join(tmpdir(), 'user-allocator-'));
function moduleFile(name: string, source: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, source);
  return file;
}

describe('loadUserAllocator: one-line errors naming the file', () => {
  it('rejects a missing file, a bad extension, a load error, a missing export and a bad policy', async () => {
    await expect(loadUserAllocator(path.join(dir, 'nope.mjs'))).rejects.toThrow(/nope\.mjs: no such file/);
    await expect(loadUserAllocator(moduleFile('a.txt', ''))).rejects.toThrow(/a\.txt: expected a module ending in/);
    await expect(loadUserAllocator(moduleFile('syntax.mjs', 'export const = ;'))).rejects.toThrow(/syntax\.mjs: failed to load/);
    await expect(loadUserAllocator(moduleFile('none.mjs', 'export const x = 1;'))).rejects.toThrow(/none\.mjs: must export a function createAllocator/);
    await expect(loadUserAllocator(moduleFile('policy.mjs', "export const policy = 'worst-fit'; export function createAllocator() {}"))).rejects.toThrow(
      /policy\.mjs: export policy must be one of/,
    );
    const error = await loadUserAllocator(moduleFile('none2.mjs', '')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserAllocatorError);
    expect(String((error as Error).message)).not.toContain('\n');
  });

  it('loads the shipped examples with their policies', async () => {
    expect((await loadUserAllocator('examples/simple-first-fit-allocator.mjs')).policy).toBe('first-fit');
    expect((await loadUserAllocator('examples/thing-malloc-allocator.ts')).policy).toBe('any');
  });
});

describe('user allocators under the harness', () => {
  it('configs name the module and policy; a regression config loads the same system back', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator('examples/simple-first-fit-allocator.mjs'));
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 1 });
    expect(result.failed).toBe(false);
    const config = { capacityBytes: 4096, allocatorModule: 'examples/simple-first-fit-allocator.mjs', policy: 'first-fit' } as const;
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
    await expect(userAllocatorSystemForConfig({ ...config, allocatorModule: 'examples/missing.mjs' })).rejects.toThrow(/missing\.mjs: no such file/);
  });

  it('the example first-fit allocator conforms to our first-fit model offset for offset', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator('examples/simple-first-fit-allocator.mjs'));
    expect(checkSystem(system, { seed: TEST_SEED, numRuns: 300 }).failed).toBe(false);
  });

  it('@thi.ng/malloc passes the safety checks (policy any)', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator('examples/thing-malloc-allocator.ts'));
    expect(checkSystem(system, { seed: TEST_SEED, numRuns: 1000 }).failed).toBe(false);
  });

  it('@thi.ng/malloc does not conform to first fit offset for offset (inline headers, no per-request alignment)', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator('examples/thing-malloc-allocator.ts'), 'first-fit');
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 100 });
    expect(result.failed).toBe(true);
    if (result.failed) expect(['no-false-out-of-memory', 'observation']).toContain(result.failure.check);
  });

  it('our own buddy and best-fit allocators, wrapped as user allocators, conform to their policies', () => {
    const buddy = userAllocatorSystem('inline-buddy', (capacityBytes) => new BuddyAllocator({ capacityBytes, minBlockBytes: 64 }), 'buddy', { minBlockBytes: 64 });
    expect(checkSystem(buddy, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(false);
    const bestFit = userAllocatorSystem('inline-best-fit', (capacityBytes) => new BestFitAllocator({ capacityBytes, poolAlignBytes: 256 }), 'best-fit');
    expect(checkSystem(bestFit, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(false);
    // A buddy allocator is not a first fit: the declared policy matters.
    const misdeclared = userAllocatorSystem('inline-buddy', (capacityBytes) => new FirstFitAllocator({ capacityBytes }), 'buddy', { minBlockBytes: 64 });
    expect(checkSystem(misdeclared, { seed: TEST_SEED, numRuns: 200 }).failed).toBe(true);
  });

  const broken: [string, string, (capacityBytes: number) => Allocator][] = [
    ['a throwing alloc', 'impl-exception', () => ({ alloc: () => { throw new Error('boom'); }, free: () => {} })],
    ['a non-integer return', 'honest-answers', () => ({ alloc: () => 0.5, free: () => {} })],
    ['an undefined return', 'honest-answers', () => ({ alloc: () => undefined as unknown as null, free: () => {} })],
    ['a bump allocator that ignores alignment', 'in-bounds-aligned', (capacityBytes) => {
      let top = 0;
      return { alloc: (size) => (top + size <= capacityBytes ? (top += size) - size : null), free: () => {} };
    }],
    ['an allocator that always answers 0', 'no-overlap', () => ({ alloc: () => 0, free: () => {} })],
    ['an allocator that overruns the capacity', 'in-bounds-aligned', (capacityBytes) => ({ alloc: () => capacityBytes, free: () => {} })],
    ['a createAllocator that throws', 'impl-exception', () => { throw new Error('no device'); }],
    ['a createAllocator that returns nothing', 'impl-exception', () => undefined as unknown as Allocator],
  ];
  for (const [what, check, createAllocator] of broken) {
    it(`reports ${what} as a finding (${check}), without crashing`, () => {
      const result = checkSystem(userAllocatorSystem('inline', createAllocator, 'any'), { seed: TEST_SEED, numRuns: 200 });
      expect(result.failed).toBe(true);
      if (result.failed) expect(result.failure.check).toBe(check);
    });
  }

  it("a policy 'first-fit' allocator that answers null where the model finds room is a false out-of-memory", () => {
    const system = userAllocatorSystem('inline', () => ({ alloc: () => null, free: () => {} }), 'first-fit');
    const outcome = runSequence(system, { capacityBytes: 64, allocatorModule: 'inline', policy: 'first-fit' }, [{ op: 'alloc', sizeBytes: 8, alignBytes: 1 }]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.failure.check).toBe('no-false-out-of-memory');
  });
});
