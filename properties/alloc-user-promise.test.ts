/**
 * A user's allocator declares what it promises on an empty pool (export promise / promises),
 * states its heap range (export maxCapacityBytes), and is given GPU-sized heaps; reports speak
 * in its offsets. The examples are examples/buddy-256-allocator.mjs, header-allocator.mjs and
 * thirty-two-bit-first-fit.mjs.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadUserAllocator } from '../src/user-allocator-module.js';
import {
  GPU_HEAP_MIN_BYTES,
  NARROWER_PROMISE_HINT,
  userAllocatorSystemFromModule,
} from '../src/systems/user-allocator.js';
import {
  bestFitDeclaration,
  BUDDY_DECLARATION,
  DEFAULT_PROMISE,
  promiseProblem,
  promises,
  type AllocatorPromise,
} from '../src/systems/alloc-promise.js';
import {
  allocatorMetricsCell,
  EMPTY_POOL_SERVED_PROBE,
  largestEmptyPoolShare,
  NULL_ANSWER_PROBE,
} from '../src/systems/alloc-false-oom.js';
import { alignUp } from '../src/alloc/allocator.js';
import { checkSystem } from '../src/harness/property.js';
import { RunContext } from '../src/harness/runner.js';
import { formatReport } from '../src/harness/report.js';
import { TEST_SEED } from './support.js';
import { assertEmptyPoolPromise, describeAllocator } from '../src/vitest.js';

const dir = mkdtempSync(path.join(tmpdir(), 'user-allocator-promise-'));
function moduleFile(name: string, source: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, source);
  return file;
}
const ALLOCATOR =
  'export function createAllocator(c) { return { alloc() { return null; }, free() {} }; }\n';
const ALIGNS = [1, 2, 8, 16, 64, 256, 1024, 4096];

describe('the built-in promises are declarations with the spec formulas they replaced', () => {
  // The spec's formulas, written out (docs/spec/allocators.md#al-common, "Buddy", "Best fit").
  const sizes = [
    1,
    2,
    15,
    16,
    17,
    255,
    256,
    257,
    600,
    1000,
    1023,
    1024,
    1025,
    4095,
    4096,
    4097,
    2 ** 33 + 1,
  ];
  const grid = (
    capacities: readonly number[],
    each: (capacity: number, size: number, align: number) => void,
  ) => {
    for (const capacity of capacities)
      for (const size of sizes) for (const align of ALIGNS) each(capacity, size, align);
  };

  it("policy 'any' and first fit: every size up to the capacity, at any alignment", () => {
    grid([1, 7, 256, 1000, 4096, 2 ** 34 + 3], (capacity, size, align) =>
      expect(promises(DEFAULT_PROMISE, capacity, size, align)).toBe(size <= capacity),
    );
  });

  it('buddy: size and alignment at most the capacity (a power of two times the order-0 block)', () => {
    grid([16, 256, 1024, 2 ** 20, 2 ** 36], (capacity, size, align) =>
      expect(promises(BUDDY_DECLARATION, capacity, size, align)).toBe(
        size <= capacity && align <= capacity,
      ),
    );
  });

  it('best fit: the reservation alignUp(size, poolAlign), or alignUp(size + align, poolAlign), fits; the size is within the single-allocation limit', () => {
    for (const poolAlign of [1, 16, 256]) {
      for (const maxAllocation of [undefined, 1000]) {
        grid([256, 4096, 256 * 25, 2 ** 33], (capacity, size, align) => {
          const reservation =
            poolAlign % align === 0 ? alignUp(size, poolAlign) : alignUp(size + align, poolAlign);
          const expected = size <= (maxAllocation ?? capacity) && reservation <= capacity;
          expect(
            promises(bestFitDeclaration(poolAlign, maxAllocation), capacity, size, align),
          ).toBe(expected);
        });
      }
    }
  });
});

describe('the examples declare exactly what an empty pool of theirs places', () => {
  for (const example of ['buddy-256-allocator.mjs', 'header-allocator.mjs']) {
    it(`${example}: its promise is true exactly for the requests an empty pool places (from its minimum pool on)`, async () => {
      const loaded = await loadUserAllocator(`examples/${example}`);
      const declared = loaded.promise as AllocatorPromise;
      expect(typeof declared).toBe('object');
      for (let capacity = 1; capacity <= 2200; capacity += capacity < 300 ? 1 : 37) {
        for (const size of [
          1,
          16,
          17,
          48,
          100,
          255,
          256,
          257,
          512,
          600,
          1000,
          1024,
          2048,
          capacity - 80,
          capacity - 64,
          capacity,
        ]) {
          if (size < 1) continue;
          for (const align of ALIGNS) {
            const placed = loaded.createAllocator(capacity).alloc(size, align) !== null;
            // Below minPoolBytes nothing is promised (and no such pool is generated).
            const expected = capacity >= (declared.minPoolBytes ?? 1) && placed;
            expect(
              promises(declared, capacity, size, align),
              `capacity ${capacity}, alloc(${size}, ${align})`,
            ).toBe(expected);
          }
        }
      }
    });
  }
});

describe('empty-pool-liveness judges the declared promise', () => {
  for (const example of ['buddy-256-allocator.mjs', 'header-allocator.mjs']) {
    it(`${example} runs clean with its promise, and is a finding without it (with the one-line hint)`, async () => {
      const loaded = await loadUserAllocator(`examples/${example}`);
      expect(
        checkSystem(userAllocatorSystemFromModule(loaded), { seed: TEST_SEED, numRuns: 400 })
          .failed,
      ).toBe(false);
      const undeclared = moduleFile(
        `undeclared-${example}`,
        readFileSync(`examples/${example}`, 'utf8').replace(/^export const promise = .*$/m, ''),
      );
      const result = checkSystem(
        userAllocatorSystemFromModule(await loadUserAllocator(undeclared)),
        { seed: TEST_SEED, numRuns: 400 },
      );
      expect(result.failed).toBe(true);
      if (!result.failed) return;
      expect(result.failure.check).toBe('empty-pool-liveness');
      expect(result.commands.length).toBe(1);
      const [first, hint] = result.failure.message.split('\n');
      expect(first).toMatch(
        /answered null on an empty pool of \d+ bytes, a request covered by the default promise of policy 'any', \{\}/,
      );
      expect(hint).toBe(NARROWER_PROMISE_HINT);
    });
  }

  it('a full-capacity refusal the promise covers is still a finding (a buddy that halves a pool of exactly 256 * 2^k bytes)', async () => {
    const source = readFileSync('examples/buddy-256-allocator.mjs', 'utf8');
    const buggy = source.replace(
      'while (MIN_BLOCK_BYTES * 2 ** (topOrder + 1) <= capacityBytes)',
      'while (MIN_BLOCK_BYTES * 2 ** (topOrder + 1) < capacityBytes)',
    );
    expect(buggy).not.toBe(source);
    const result = checkSystem(
      userAllocatorSystemFromModule(await loadUserAllocator(moduleFile('buddy-halves.mjs', buggy))),
      { seed: TEST_SEED, numRuns: 400 },
    );
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    expect(result.failure.check).toBe('empty-pool-liveness');
    expect(result.failure.message).toMatch(
      /a request covered by its declared promise \{ minPoolBytes: 256, minBlockBytes: 256, roundsTo: "power-of-two" \}/,
    );
  });

  it("describeAllocator's promise test: fresh pools, one request each, fails at a covered refusal and passes the correct module", async () => {
    const source = readFileSync('examples/buddy-256-allocator.mjs', 'utf8');
    const correct = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/buddy-256-allocator.mjs'),
    );
    expect(() => assertEmptyPoolPromise(correct, 500, TEST_SEED)).not.toThrow();
    const buggy = source.replace(
      'while (MIN_BLOCK_BYTES * 2 ** (topOrder + 1) <= capacityBytes)',
      'while (MIN_BLOCK_BYTES * 2 ** (topOrder + 1) < capacityBytes)',
    );
    const halves = userAllocatorSystemFromModule(
      await loadUserAllocator(moduleFile('buddy-halves-2.mjs', buggy)),
    );
    expect(() => assertEmptyPoolPromise(halves, 500, TEST_SEED)).toThrow(
      /FINDING user-allocator: check 'empty-pool-liveness' failed at step 0 of 1\n {2}an empty pool, one request/,
    );
  });

  it('a promise stated as a function is judged as stated', async () => {
    const file = moduleFile(
      'function-promise.mjs',
      `${readFileSync('examples/buddy-256-allocator.mjs', 'utf8').replace(/^export const promise = .*$/m, '')}
export function promises(capacityBytes, sizeBytes, alignBytes) {
  let block = 256;
  while (block < Math.max(sizeBytes, alignBytes)) block *= 2;
  return block <= capacityBytes;
}
`,
    );
    const loaded = await loadUserAllocator(file);
    expect(typeof loaded.promise).toBe('function');
    expect(
      checkSystem(userAllocatorSystemFromModule(loaded), { seed: TEST_SEED, numRuns: 300 }).failed,
    ).toBe(false);
    const overPromising = userAllocatorSystemFromModule({ ...loaded, promise: () => true });
    const result = checkSystem(overPromising, { seed: TEST_SEED, numRuns: 300 });
    expect(result.failed && result.failure.check).toBe('empty-pool-liveness');
  });
});

describe('declarations are validated: one line naming the file and the field', () => {
  const cases: [string, string, RegExp][] = [
    [
      'header.mjs',
      'export const promise = { headerBytes: -1 };',
      /header\.mjs: export promise\.headerBytes must be a non-negative integer; got -1$/,
    ],
    [
      'unknown.mjs',
      'export const promise = { headerBytez: 8 };',
      /unknown\.mjs: export promise\.headerBytez is no field of a promise \(known: minPoolBytes, /,
    ],
    [
      'rounds.mjs',
      "export const promise = { roundsTo: 'pow2' };",
      /rounds\.mjs: export promise\.roundsTo must be a positive integer or 'power-of-two'; got "pow2"$/,
    ],
    [
      'slack.mjs',
      'export const promise = { alignSlack: 1 };',
      /slack\.mjs: export promise\.alignSlack must be a boolean; got 1$/,
    ],
    [
      'notobject.mjs',
      'export const promise = 256;',
      /notobject\.mjs: export promise must be an object of minPoolBytes, /,
    ],
    [
      'both.mjs',
      'export const promise = {}; export function promises() { return true; }',
      /both\.mjs: export either promise \(an object\) or promises \(a function\), not both$/,
    ],
    ['fn.mjs', 'export const promises = 3;', /fn\.mjs: export promises must be a function/],
    [
      'max.mjs',
      'export const maxCapacityBytes = 2.5;',
      /max\.mjs: export maxCapacityBytes must be a positive integer \(bytes\); got 2\.5$/,
    ],
    [
      'range.mjs',
      'export const maxCapacityBytes = 100; export const promise = { minPoolBytes: 4096 };',
      /range\.mjs: export maxCapacityBytes \(100\) is below promise\.minPoolBytes \(4096\)/,
    ],
  ];
  for (const [name, exports, message] of cases) {
    it(`${name}: ${exports}`, async () => {
      const error = await loadUserAllocator(moduleFile(name, `${ALLOCATOR}${exports}\n`)).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    });
  }

  it('a misnamed createAllocator export lists the exports found', async () => {
    const error = await loadUserAllocator(
      moduleFile(
        'misnamed.mjs',
        'export function createAlocator() {}\nexport const policy = "any";\n',
      ),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /misnamed\.mjs: must export a function createAllocator\(capacityBytes\); found no such export \(it exports: createAlocator, policy\)$/,
    );
  });

  it('promiseProblem accepts every field at its bounds', () => {
    expect(
      promiseProblem({
        minPoolBytes: 1,
        overheadBytes: 0,
        headerBytes: 0,
        minBlockBytes: 1,
        roundsTo: 'power-of-two',
        alignSlack: false,
        maxSizeBytes: 1,
        maxAlignBytes: 1,
      }),
    ).toBeNull();
    expect(promiseProblem({ minPoolBytes: 0 })).toMatch(
      /^promise\.minPoolBytes must be a positive integer; got 0$/,
    );
  });
});

describe('heaps: GPU-sized by default, within the range a module states', () => {
  const capacities = (system: ReturnType<typeof userAllocatorSystemFromModule>) =>
    fc
      .sample(system.configArb(), { seed: TEST_SEED, numRuns: 3000 })
      .map((config) => config.capacityBytes);

  it('by default a share of configs are GPU heaps of 256 MiB to 64 GiB, past 2^31 and 2^32', async () => {
    const sampled = capacities(
      userAllocatorSystemFromModule(
        await loadUserAllocator('examples/simple-first-fit-allocator.mjs'),
      ),
    );
    const gpu = sampled.filter((capacity) => capacity >= GPU_HEAP_MIN_BYTES);
    expect(gpu.length / sampled.length).toBeGreaterThan(0.05);
    expect(gpu.length / sampled.length).toBeLessThan(0.15);
    expect(gpu.some((capacity) => capacity > 2 ** 32)).toBe(true);
    expect(gpu.some((capacity) => capacity > 2 ** 31 && capacity <= 2 ** 32)).toBe(true);
    expect(Math.max(...gpu)).toBeLessThanOrEqual(2 ** 36);
  });

  it('no config below promise.minPoolBytes or above maxCapacityBytes is generated', async () => {
    const buddy = capacities(
      userAllocatorSystemFromModule(await loadUserAllocator('examples/buddy-256-allocator.mjs')),
    );
    expect(Math.min(...buddy)).toBeGreaterThanOrEqual(256);
    const file = moduleFile(
      'thirty-two.mjs',
      `${ALLOCATOR}export const maxCapacityBytes = 2 ** 32 - 1;\n`,
    );
    const narrow = capacities(userAllocatorSystemFromModule(await loadUserAllocator(file)));
    expect(Math.max(...narrow)).toBeLessThanOrEqual(2 ** 32 - 1);
    expect(narrow.some((capacity) => capacity >= GPU_HEAP_MIN_BYTES)).toBe(true);
  });

  it('a first fit with a 32-bit alignUp is found by default, and runs clean once it states a heap range it handles', async () => {
    const loaded = await loadUserAllocator('examples/thirty-two-bit-first-fit.mjs');
    const result = checkSystem(userAllocatorSystemFromModule(loaded), {
      seed: TEST_SEED,
      numRuns: 2000,
    });
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    expect(['in-bounds-aligned', 'no-overlap']).toContain(result.failure.check);
    expect(result.failure.config.capacityBytes).toBeGreaterThan(2 ** 30);
    // (v + a - 1) & ~(a - 1) is right while v + a - 1 < 2^31: offsets and alignments under 2^30.
    const stated = userAllocatorSystemFromModule({ ...loaded, maxCapacityBytes: 2 ** 30 });
    expect(checkSystem(stated, { seed: TEST_SEED, numRuns: 2000 }).failed).toBe(false);
  });
});

describe('reports and the summary in the allocator terms', () => {
  it("policy 'any': the implementation's answers only, frees with their offsets", async () => {
    const buggy = moduleFile(
      'forgets-frees.mjs',
      'export function createAllocator(capacityBytes) { let top = 0; return { alloc(s, a) { const at = Math.ceil(top / a) * a; if (at + s > capacityBytes) return null; top = at + s; return at; }, free() {} }; }\n',
    );
    const system = userAllocatorSystemFromModule(await loadUserAllocator(buggy));
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 300 });
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    const report = formatReport({ system, failure: result.failure, commands: result.commands });
    expect(report).toContain("each step's answer from the implementation, no model");
    expect(report).toMatch(/returned: +\{"freedOffsetBytes":\d+\}/);
    expect(report).toMatch(/returned: +\{"offsetBytes":null\}/);
    expect(report).not.toContain('both:');
    expect(report).not.toContain('observations at step');
    expect(report).not.toContain('agree');
  });

  it('a named policy keeps both sides, and its frees show the offset on both', async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator('examples/simple-first-fit-allocator.mjs'),
    );
    const failure = {
      check: 'x',
      checks: ['x'],
      step: 1,
      config: {
        capacityBytes: 64,
        allocatorModule: 'examples/simple-first-fit-allocator.mjs',
        policy: 'first-fit',
      },
      message: 'm',
      diff: [],
      modelObservation: {},
      implObservation: {},
    };
    const report = formatReport({
      system,
      failure: failure as never,
      commands: [
        { op: 'alloc', sizeBytes: 8, alignBytes: 8 },
        { op: 'free', index: 0 },
      ],
    });
    expect(report).toContain('returned:       {"freedOffsetBytes":0} (both)');
    expect(report).toContain('both:');
  });

  it('the summary cell: false out-of-memory share and the largest request an empty pool served', async () => {
    const share = async (file: string) => {
      const context = new RunContext();
      expect(
        checkSystem(userAllocatorSystemFromModule(await loadUserAllocator(file)), {
          seed: TEST_SEED,
          numRuns: 300,
          context,
        }).failed,
      ).toBe(false);
      return Object.fromEntries(context.probeCounts);
    };
    const firstFit = await share('examples/simple-first-fit-allocator.mjs');
    expect(largestEmptyPoolShare(firstFit)).toBe(100);
    const header = await share('examples/header-allocator.mjs');
    const largest = largestEmptyPoolShare(header)!;
    expect(largest).toBeGreaterThan(50);
    expect(largest).toBeLessThan(100);
    expect(allocatorMetricsCell(header)).toMatch(
      new RegExp(`^\\d+\\.\\d % of ${header[NULL_ANSWER_PROBE]}; ${largest} %$`),
    );
    expect(allocatorMetricsCell({})).toBe('-');
    expect(allocatorMetricsCell({ [`${EMPTY_POOL_SERVED_PROBE}7`]: 1 })).toBe('-; 7 %');
  });
});

// The vitest helper a team uses for its module: safety, the promise on fresh pools, stored regressions.
describeAllocator('examples/header-allocator.mjs', { numRuns: 200, promiseRuns: 500 });
describeAllocator('examples/buddy-256-allocator.mjs', { numRuns: 200, promiseRuns: 500 });
