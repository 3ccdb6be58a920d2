/**
 * The WebAssembly route (docs/native.md#webassembly): the C++ first fit of examples/wasm/,
 * compiled with clang --target=wasm32-wasi into the committed .wasm files (so this suite needs no
 * clang; `npm run wasm:check` rebuilds them where the toolchain is present and compares bytes),
 * wrapped as an allocator module and run in-process beside our first-fit model. The planted bug
 * (-DBUG_SIZE_T) is found from scratch, through the vitest helpers and through the fuzz CLI, and
 * its stored finding replays.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkSystem } from '../src/harness/property.js';
import { loadRegression } from '../src/harness/regression.js';
import { runSequence } from '../src/harness/runner.js';
import type { Allocator } from '../src/alloc/allocator.js';
import { loadUserAllocator } from '../src/user-allocator-module.js';
import {
  userAllocatorSystemForConfig,
  userAllocatorSystemFromModule,
  type UserAllocatorConfig,
} from '../src/systems/user-allocator.js';
import { describeAllocator } from '../src/vitest.js';
import { runFuzzCli } from './support.js';

const ROOT = path.resolve(__dirname, '..');
const WASM = path.join(ROOT, 'examples', 'wasm');
const CLEAN = 'examples/wasm/first-fit.mjs';
const BUGGY = 'examples/wasm/first-fit-bug-size-t.mjs';
const TEST_SEED = 20261202;

/** The slice of the WebAssembly JS API used here (tsconfig's lib has no wasm typings). */
interface WasmApi {
  Module: {
    new (bytes: Uint8Array): object;
    imports(module: object): unknown[];
    exports(module: object): { name: string; kind: string }[];
  };
  RuntimeError: new () => Error;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

describe('the committed .wasm files', () => {
  it.each(['first_fit.wasm', 'first_fit_bug_size_t.wasm'])(
    '%s imports nothing (no WASI) and exports create, alloc, free, _initialize and its memory',
    (file) => {
      const compiled = new wasm.Module(readFileSync(path.join(WASM, file)));
      expect(wasm.Module.imports(compiled)).toEqual([]);
      expect(
        wasm.Module.exports(compiled)
          .map(({ name, kind }) => `${name}:${kind}`)
          .sort(),
      ).toEqual([
        '_initialize:function',
        'alloc:function',
        'create:function',
        'free:function',
        'memory:memory',
      ]);
    },
  );
});

// Safety and offset-for-offset agreement with the first-fit model, its empty-pool promise ({}:
// every request up to the capacity), heaps up to 64 GiB included.
describeAllocator(CLEAN, { numRuns: 300, promiseRuns: 500 });

describe('the planted bug: sizes and offsets in size_t, 32 bits on wasm32', () => {
  it('is found from scratch on a heap past 2^31 bytes, shrunk to at most 3 commands; the same commands pass the clean build', async () => {
    const system = userAllocatorSystemFromModule(await loadUserAllocator(BUGGY));
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 300 });
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    expect(['no-false-out-of-memory', 'no-overlap', 'in-bounds-aligned']).toContain(
      result.failure.check,
    );
    expect(result.commands.length).toBeLessThanOrEqual(3);
    const config = result.config as UserAllocatorConfig;
    const wide =
      config.capacityBytes >= 2 ** 32 ||
      result.commands.some((command) => (command as { sizeBytes?: number }).sizeBytes! >= 2 ** 32);
    expect(wide, JSON.stringify(result)).toBe(true);
    const clean = userAllocatorSystemFromModule(await loadUserAllocator(CLEAN));
    const cleanConfig = { ...config, allocatorModule: CLEAN };
    expect(runSequence(clean, cleanConfig, result.commands).ok).toBe(true);
  });

  it('its stored finding fails against it with the check it was found by, at its last step, and passes against the clean build', async () => {
    const file = path.join(WASM, 'regressions', 'user-allocator', 'first-fit-bug-size-t.json');
    const { regression, system } = await loadRegression(file, new Map(), (_name, raw) =>
      userAllocatorSystemForConfig(raw),
    );
    expect((regression.config as UserAllocatorConfig).allocatorModule).toBe(BUGGY);
    const outcome = runSequence(system, regression.config, regression.commands);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failure.check).toBe(regression.origin.check);
    expect(outcome.failure.step).toBe(regression.commands.length - 1);
    const cleanConfig = { ...(regression.config as UserAllocatorConfig), allocatorModule: CLEAN };
    const clean = await userAllocatorSystemForConfig(cleanConfig);
    expect(runSequence(clean, cleanConfig, regression.commands).ok).toBe(true);
  });

  it('fuzz --allocator finds it (the campaign worker loads the .wasm) and writes a finding naming the module', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wasm-fuzz-'));
    const campaign = runFuzzCli([
      '--allocator',
      BUGGY,
      '--seed',
      String(TEST_SEED),
      '--runs',
      '200',
      '--workers',
      '1',
      '--stop-on-first',
      '--out',
      dir,
    ]);
    expect(campaign.status, campaign.stdout + campaign.stderr).toBe(1);
    const findings = readdirSync(path.join(dir, 'user-allocator')).filter((name) =>
      name.endsWith('.json'),
    );
    expect(findings.length).toBe(1);
    const finding = JSON.parse(
      readFileSync(path.join(dir, 'user-allocator', findings[0]!), 'utf8'),
    ) as { config: UserAllocatorConfig };
    expect(finding.config.allocatorModule).toBe(BUGGY);
  }, 120_000);
});

/**
 * A hand-assembled module with the example's exports whose alloc counts its calls in a global,
 * answers the count as its offset and traps (unreachable) on the second call.
 */
function trappingWasm(): Uint8Array {
  const name = (text: string) => [text.length, ...new TextEncoder().encode(text)];
  // biome-ignore format: one line per section
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    // types: (f64) -> i32, (f64, f64) -> f64, () -> ()
    0x01, 0x0f, 0x03, 0x60, 0x01, 0x7c, 0x01, 0x7f, 0x60, 0x02, 0x7c, 0x7c, 0x01, 0x7c, 0x60, 0x00, 0x00,
    // functions: _initialize, create, alloc, free
    0x03, 0x05, 0x04, 0x02, 0x00, 0x01, 0x00,
    // one mutable i32 global, 0
    0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b,
    // exports
    0x07, 0x27, 0x04,
    ...name('_initialize'), 0x00, 0x00,
    ...name('create'), 0x00, 0x01,
    ...name('alloc'), 0x00, 0x02,
    ...name('free'), 0x00, 0x03,
    // code
    0x0a, 0x24, 0x04,
    0x02, 0x00, 0x0b, // _initialize: nothing
    0x04, 0x00, 0x41, 0x00, 0x0b, // create: 0
    // alloc: g += 1; if (g == 2) unreachable; return g
    0x15, 0x00, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x23, 0x00, 0x41, 0x02, 0x46, 0x04, 0x40,
    0x00, 0x0b, 0x23, 0x00, 0xb7, 0x0b,
    0x04, 0x00, 0x41, 0x00, 0x0b, // free: 0 (accepted)
  ]);
}

describe('the wrapper (examples/wasm/wasm-allocator.mjs)', () => {
  it('a trap is an exception the harness reports, and the next allocator runs on a fresh instance', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wasm-trap-'));
    writeFileSync(path.join(dir, 'trap.wasm'), trappingWasm());
    const wrapper = pathToFileURL(path.join(WASM, 'wasm-allocator.mjs')).href;
    writeFileSync(
      path.join(dir, 'trap.mjs'),
      `import { wasmAllocator } from ${JSON.stringify(wrapper)};\nexport const createAllocator = wasmAllocator(new URL('./trap.wasm', import.meta.url));\n`,
    );
    const loaded = await loadUserAllocator(path.join(dir, 'trap.mjs'));
    // Under the harness the trap is a finding at the step that trapped.
    const outcome = runSequence(
      userAllocatorSystemFromModule(loaded),
      { capacityBytes: 64, allocatorModule: 'trap.mjs', policy: 'any' },
      [
        { op: 'alloc', sizeBytes: 1, alignBytes: 1 },
        { op: 'alloc', sizeBytes: 1, alignBytes: 1 },
      ],
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failure.step).toBe(1);
    expect(outcome.failure.message).toMatch(/unreachable/);
    // The trapped instance (its count at 2) is dropped: the next allocator's count starts over.
    const first: Allocator = loaded.createAllocator(64);
    expect(first.alloc(1, 1)).toBe(1);
    expect(() => first.alloc(1, 1)).toThrow(wasm.RuntimeError);
    expect(() => first.alloc(1, 1)).toThrow(/replaced by a later createAllocator/);
    expect(loaded.createAllocator(64).alloc(1, 1)).toBe(1);
  });

  it('an allocator replaced by a later createAllocator throws rather than answer from the new heap', async () => {
    const { createAllocator } = await loadUserAllocator(CLEAN);
    const first = createAllocator(1024);
    expect(first.alloc(100, 1)).toBe(0);
    const second = createAllocator(2 ** 36);
    expect(() => first.free(0)).toThrow(/replaced by a later createAllocator/);
    expect(second.alloc(2 ** 35, 2 ** 20)).toBe(0);
    expect(second.alloc(2 ** 35, 1)).toBe(2 ** 35);
    expect(second.alloc(1, 1)).toBeNull();
    second.free(0);
    expect(() => second.free(0)).toThrow(/free\(0\): not a live allocation/);
  });
});
