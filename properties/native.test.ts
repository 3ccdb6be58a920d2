/**
 * Native allocators through the driver protocol (docs/native-protocol.md): the example drivers
 * are built here (a missing compiler fails, never skips), the clean ones run side by side, every
 * planted bug's stored finding replays against its variant with the check it was found by, one
 * variant is found from scratch, and each fault kind is provoked by a small scripted driver.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSystem } from '../src/harness/property.js';
import { loadRegression } from '../src/harness/regression.js';
import { runSequence } from '../src/harness/runner.js';
import {
  closeDrivers,
  nativeAllocatorForProject,
  NATIVE_ALLOCATOR_SYSTEM,
} from '../src/native/native-allocator.js';
import { DriverStartError, NativeDriver, stderrLines } from '../src/native/driver.js';
import { nativeResolver, nativeSystemForProject } from '../src/native/native-systems.js';
import { NATIVE_RING_UPLOAD_SYSTEM } from '../src/native/native-ring-upload.js';
import { NATIVE_DEFERRED_FREE_SYSTEM } from '../src/native/native-deferred-free.js';
import { decodeAnswers, encodeAllocBatch } from '../src/native/protocol.js';

const ROOT = path.resolve(__dirname, '..');
const BUILD = path.join(ROOT, 'examples', 'native', 'build');
const TEST_SEED = 20261201;

beforeAll(() => {
  // build.sh names the missing compiler and exits 2: the suite fails, it does not skip.
  const built = spawnSync(path.join(ROOT, 'examples', 'native', 'build.sh'), [BUILD], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(built.status, `examples/native/build.sh failed:\n${built.stderr}`).toBe(0);
}, 240_000);

afterAll(() => closeDrivers());

describe('the example drivers side by side', () => {
  it('the C++ first fit conforms to policy first-fit offset for offset (its hello declares it)', () => {
    const system = nativeAllocatorForProject(ROOT, 'examples/native/build/first_fit');
    expect(system.driver.hello.fields.get('policy')).toBe('first-fit');
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 150 });
    expect(result.failed ? result.failure.message : 'passed').toBe('passed');
  });

  it('the C example (the header from C99) passes policy any', () => {
    const system = nativeAllocatorForProject(ROOT, 'examples/native/build/bump_c');
    expect(system.driver.hello.fields.get('policy')).toBe('any');
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 100 });
    expect(result.failed ? result.failure.message : 'passed').toBe('passed');
  });

  it('the C++ ring upload allocator (system ring-upload) answers as the ring model, call for call', () => {
    const system = nativeSystemForProject(ROOT, 'examples/native/build/ring_upload');
    expect(system.name).toBe(NATIVE_RING_UPLOAD_SYSTEM);
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 150 });
    expect(result.failed ? result.failure.message : 'passed').toBe('passed');
  });

  it('the C++ fence-delayed free list over first fit (system deferred-free) answers as the model, with its readings', () => {
    const system = nativeSystemForProject(ROOT, 'examples/native/build/deferred_free');
    expect(system.name).toBe(NATIVE_DEFERRED_FREE_SYSTEM);
    const kinds = fc.sample(system.configArb(), { seed: TEST_SEED, numRuns: 50 });
    expect(new Set(kinds.map((config) => config.kind))).toEqual(new Set(['first-fit']));
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 150 });
    expect(result.failed ? result.failure.message : 'passed').toBe('passed');
  });

  it('finds a planted use-after-free from scratch as driver-sanitizer, with the ASan report in the message', () => {
    const system = nativeAllocatorForProject(
      ROOT,
      'examples/native/build/first_fit_bug_use_after_free',
    );
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 50 });
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    expect(result.failure.check).toBe('driver-sanitizer');
    expect(result.failure.message).toContain('ERROR: AddressSanitizer: heap-use-after-free');
    expect(result.failure.message).toMatch(
      /#\d+ in .*release.* examples\/native\/first_fit\.cpp:\d+/,
    );
    expect(result.commands.length).toBeLessThanOrEqual(3);
  });
});

/** Each native system's stored findings: one per planted bug, and the clean build they pass against. */
const PLANTED: readonly { system: string; clean: string; files: string[] }[] = [
  {
    system: NATIVE_ALLOCATOR_SYSTEM,
    clean: 'first_fit',
    files: [
      'first-fit-bug-cycle.json',
      'first-fit-bug-off-by-one.json',
      'first-fit-bug-size-wrap.json',
      'first-fit-bug-uninit.json',
      'first-fit-bug-use-after-free.json',
      'first-fit-bug-wrong-merge.json',
    ],
  },
  {
    system: NATIVE_RING_UPLOAD_SYSTEM,
    clean: 'ring_upload',
    files: ['ring-upload-bug-early-collect.json', 'ring-upload-bug-wrap-overlap.json'],
  },
  {
    system: NATIVE_DEFERRED_FREE_SYSTEM,
    clean: 'deferred_free',
    files: ['deferred-free-bug-pool-no-fence.json'],
  },
];

describe.each(PLANTED)(
  'the stored findings of the planted bugs of $system',
  ({ system, clean, files: expected }) => {
    const stored = path.join(ROOT, 'examples', 'native', 'regressions', system);
    const files = existsSync(stored)
      ? readdirSync(stored).filter((file) => file.endsWith('.json'))
      : [];

    it(`there is one per planted bug of examples/native/${clean}`, () => {
      expect(files.sort()).toEqual(expected);
    });

    for (const file of files) {
      it(`${file} fails against its variant with the check it was found by, at its last step, and passes against the clean build`, async () => {
        const resolve = nativeResolver(ROOT, system);
        const { regression, system: resolved } = await loadRegression(
          path.join(stored, file),
          new Map(),
          (_name, raw) => resolve(raw),
        );
        const outcome = runSequence(resolved, regression.config, regression.commands);
        expect(outcome.ok).toBe(false);
        if (outcome.ok) return;
        expect(outcome.failure.check).toBe(regression.origin.check);
        expect(outcome.failure.step).toBe(regression.commands.length - 1);
        // The same commands against the clean build pass: the finding is the variant's bug.
        const cleanConfig = { ...regression.config, executable: `examples/native/build/${clean}` };
        expect(runSequence(await resolve(cleanConfig), cleanConfig, regression.commands).ok).toBe(
          true,
        );
      }, 30_000);
    }
  },
);

/** A scripted driver: a Node program speaking the protocol on fds 3 and 4, misbehaving as told. */
function scriptedDriver(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `#!/usr/bin/env node
const fs = require('node:fs');
function frame(kind, payload) { const h = Buffer.alloc(8); h[0] = kind.charCodeAt(0); h.writeUInt32LE(payload.length, 4); fs.writeSync(4, Buffer.concat([h, payload])); }
function hello(version, text) { const p = Buffer.alloc(8); p.writeUInt32LE(0x564d5047, 0); p.writeUInt32LE(version, 4); frame('H', Buffer.concat([p, Buffer.from(text)])); }
function readFrame() {
  const h = Buffer.alloc(8); let got = 0;
  while (got < 8) { const n = fs.readSync(3, h, got, 8 - got, null); if (n === 0) process.exit(0); got += n; }
  const p = Buffer.alloc(h.readUInt32LE(4)); got = 0;
  while (got < p.length) got += fs.readSync(3, p, got, p.length - got, null);
  return { kind: String.fromCharCode(h[0]), payload: p };
}
${body}
`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** Answers each command of a batch (each in its own frame under flag 1): allocs at 0, frees echoing `freed(offset)`; `misbehave(i)` runs before command i. */
const ANSWER_LOOP = `
for (;;) {
  const { kind, payload } = readFrame();
  if (kind !== 'B') process.exit(0);
  const count = payload.readUInt32LE(4);
  const answers = [];
  const live = [];
  const each = (payload.readUInt32LE(0) & 1) !== 0;
  for (let i = 0; i < count; i++) {
    misbehave(i);
    const op = payload.readUInt32LE(16 + 40 * i);
    const a = Number(payload.readBigUInt64LE(16 + 40 * i + 8));
    const head = Buffer.alloc(8);
    if (op === 1) { answers.push(head, Buffer.alloc(8)); head.writeUInt32LE(1, 4); live.push(0); }
    else if (live.length > 0) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(freed(live[a % live.length]))); live.splice(a % live.length, 1); head.writeUInt32LE(1, 4); answers.push(head, b); }
    else answers.push(head);
    if (each) { const top = Buffer.alloc(8); top.writeUInt32LE(i, 0); top.writeUInt32LE(1, 4); frame('A', Buffer.concat([top, ...answers])); answers.length = 0; }
  }
  if (!each) { const top = Buffer.alloc(8); top.writeUInt32LE(count, 4); frame('A', Buffer.concat([top, ...answers])); }
  const end = Buffer.alloc(8); end.writeUInt32LE(count, 0);
  frame('A', end);
}`;

describe('native faults are findings of their own kind', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumv-native-'));
  const config = (executable: string) => ({
    capacityBytes: 64,
    executable,
    policy: 'any' as const,
  });
  const commands = [
    { op: 'alloc' as const, sizeBytes: 8, alignBytes: 1 },
    { op: 'free' as const, index: 0 },
    { op: 'alloc' as const, sizeBytes: 8, alignBytes: 1 },
  ];
  const drive = (name: string, body: string) => {
    const executable = scriptedDriver(
      dir,
      name,
      `hello(1, 'system=allocator\\npolicy=any\\n');\nfunction freed(o) { return o; }\n${body}\n${ANSWER_LOOP}`,
    );
    const system = nativeAllocatorForProject(dir, name, { timeoutMs: 400 });
    expect(existsSync(executable)).toBe(true);
    return runSequence(system, config(name), commands);
  };

  it('a well-behaved scripted driver passes (the harness of these tests is sound)', () => {
    expect(drive('good', 'function misbehave() {}').ok).toBe(true);
  });

  const cases: [string, string, string, number, RegExp][] = [
    [
      'crash',
      "function misbehave(i) { if (i === 1) process.kill(process.pid, 'SIGSEGV'); }",
      'driver-crash',
      1,
      /killed by SIGSEGV/,
    ],
    [
      'exit',
      'function misbehave(i) { if (i === 2) process.exit(7); }',
      'driver-exit',
      2,
      /exited with code 7/,
    ],
    [
      'sanitizer',
      "function misbehave(i) { if (i === 1) { console.error('==99==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010'); process.exit(1); } }",
      'driver-sanitizer',
      1,
      /==PID==ERROR: AddressSanitizer: heap-use-after-free on address 0x\?/,
    ],
    [
      'garbage',
      "function misbehave(i) { if (i === 2) { fs.writeSync(4, Buffer.from('hello, world!\\n')); } }",
      'driver-garbage',
      0,
      /no frame header/,
    ],
    [
      'hang',
      'function misbehave(i) { if (i === 2) for (;;) {} }',
      'driver-hang',
      2,
      /did not answer in time and was killed/,
    ],
  ];
  for (const [name, body, check, step, message] of cases) {
    it(`${name}: ${check} at step ${step}`, () => {
      const outcome = drive(name, body);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.failure.check).toBe(check);
      expect(outcome.failure.step).toBe(step);
      expect(outcome.failure.message).toMatch(message);
    }, 20_000);
  }

  it('a driver started again after a fault that says another hello is driver-protocol (the executable changed under the campaign)', () => {
    const marker = path.join(dir, 'changed.started');
    const body = `const again = fs.existsSync(${JSON.stringify(marker)}); fs.writeFileSync(${JSON.stringify(marker)}, '');
hello(again ? 2 : 1, 'system=allocator\\npolicy=any\\n');
function freed(o) { return o; }
function misbehave(i) { if (i === 1) process.exit(5); }
${ANSWER_LOOP}`;
    scriptedDriver(dir, 'changed', body);
    const system = nativeAllocatorForProject(dir, 'changed');
    const first = runSequence(system, config('changed'), commands);
    expect(first.ok ? 'passed' : first.failure.check).toBe('driver-exit');
    const second = runSequence(system, config('changed'), commands);
    expect(second.ok ? 'passed' : `${second.failure.check}: ${second.failure.message}`).toMatch(
      /^driver-protocol: .*hello differs from the first.*protocol version 2/,
    );
  });

  it("a driver's hello declares its empty-pool promise and heap range as a module's exports do", () => {
    scriptedDriver(
      dir,
      'promised',
      "hello(1, 'system=allocator\\npolicy=any\\npromise.minPoolBytes=64\\nmaxCapacityBytes=4096\\n'); readFrame();",
    );
    const system = nativeAllocatorForProject(dir, 'promised');
    const capacities = fc
      .sample(system.configArb(), { seed: TEST_SEED, numRuns: 300 })
      .map((config) => config.capacityBytes);
    expect(Math.min(...capacities)).toBeGreaterThanOrEqual(64);
    expect(Math.max(...capacities)).toBeLessThanOrEqual(4096);
    scriptedDriver(
      dir,
      'misdeclared',
      "hello(1, 'system=allocator\\npolicy=any\\npromise.headerBites=16\\n'); readFrame();",
    );
    expect(() => nativeAllocatorForProject(dir, 'misdeclared')).toThrow(
      /misdeclared: its hello declares promise\.headerBites is no field of a promise/,
    );
  });

  it('a driver that resolves handles differently from the harness is driver-garbage', () => {
    const executable = scriptedDriver(
      dir,
      'resolver',
      `hello(1, 'system=allocator\\npolicy=any\\n');\nfunction freed(o) { return o + 8; }\nfunction misbehave() {}\n${ANSWER_LOOP}`,
    );
    const outcome = runSequence(
      nativeAllocatorForProject(dir, path.basename(executable)),
      config('resolver'),
      commands,
    );
    expect(outcome.ok ? 'passed' : `${outcome.failure.check}: ${outcome.failure.message}`).toMatch(
      /^driver-garbage: .*freed offset 8 where the harness resolved offset 0/,
    );
  });

  it('the hello chooses the system: an unknown one, or a deferred-free driver without kinds, cannot start', () => {
    scriptedDriver(dir, 'bogus', "hello(1, 'system=heap\\n'); readFrame();");
    expect(() => nativeSystemForProject(dir, 'bogus')).toThrow(
      /bogus: its hello declares system "heap"; this harness drives allocator, ring-upload, deferred-free/,
    );
    scriptedDriver(dir, 'kindless', "hello(1, 'system=deferred-free\\n'); readFrame();");
    expect(() => nativeSystemForProject(dir, 'kindless')).toThrow(
      /kindless: its hello declares no kinds/,
    );
  });

  it('a ring driver that exits during a run is driver-exit at the first command that made a call', () => {
    scriptedDriver(
      dir,
      'ring-exits',
      "hello(1, 'system=ring-upload\\n'); readFrame(); process.exit(7);",
    );
    const system = nativeSystemForProject(dir, 'ring-exits');
    const outcome = runSequence(system, { capacityBytes: 64, executable: 'ring-exits' }, [
      { op: 'signal' },
      { op: 'gpuProgress', steps: 1 },
      { op: 'allocate', sizeBytes: 8, alignBytes: 1 },
    ]);
    expect(outcome.ok ? 'passed' : `${outcome.failure.check} at ${outcome.failure.step}`).toBe(
      'driver-exit at 2',
    );
  });

  it('a ring driver whose answer has the wrong shape, or refuses with an unknown error number, is driver-garbage', () => {
    const ringDriver = (name: string, answer: string) =>
      scriptedDriver(
        dir,
        name,
        `hello(1, 'system=ring-upload\\n');
for (;;) {
  const { kind, payload } = readFrame();
  if (kind !== 'B') process.exit(0);
  const count = payload.readUInt32LE(4);
  const parts = [Buffer.alloc(8)];
  parts[0].writeUInt32LE(count, 4);
  for (let i = 0; i < count; i++) {
    const [status, values] = (${answer})(payload.readUInt32LE(16 + 40 * i));
    const head = Buffer.alloc(8); head.writeUInt32LE(status, 0); head.writeUInt32LE(values.length, 4);
    parts.push(head, ...values.map((v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return b; }));
  }
  frame('A', Buffer.concat(parts));
  const end = Buffer.alloc(8); end.writeUInt32LE(count, 0); frame('A', end);
}`,
      );
    const run = (name: string) =>
      runSequence(nativeSystemForProject(dir, name), { capacityBytes: 64, executable: name }, [
        { op: 'allocate', sizeBytes: 8, alignBytes: 1 },
        { op: 'allocate', sizeBytes: 8, alignBytes: 1 },
      ]);
    ringDriver('ring-fine', '(op) => [0, [op === 16 ? 0 : 1]]');
    ringDriver('ring-shape', '(op) => [0, [0, 8]]');
    ringDriver('ring-errno', '(op) => [3, [99]]');
    const fine = run('ring-fine');
    expect(fine.ok ? 'passed' : fine.failure.check).not.toMatch(/^driver-/);
    const shape = run('ring-shape');
    expect(shape.ok ? 'passed' : `${shape.failure.check}: ${shape.failure.message}`).toMatch(
      /^driver-garbage: .*answered allocate\(8, 1\) with 2 values \(command 0\)/,
    );
    const errno = run('ring-errno');
    expect(errno.ok ? 'passed' : `${errno.failure.check}: ${errno.failure.message}`).toMatch(
      /^driver-garbage: .*refused allocate\(8, 1\) with no known error number \(99\)/,
    );
  });

  it('a driver that spins without answering is driver-hang by its CPU time, long before a wall-clock limit of 10 minutes', () => {
    scriptedDriver(
      dir,
      'spins',
      `hello(1, 'system=allocator\\npolicy=any\\n');\nfunction freed(o) { return o; }\nfunction misbehave(i) { if (i === 1) for (;;) {} }\n${ANSWER_LOOP}`,
    );
    const system = nativeAllocatorForProject(dir, 'spins', { timeoutMs: 600_000 });
    const outcome = runSequence(system, config('spins'), commands);
    expect(outcome.ok ? 'passed' : `${outcome.failure.check} at ${outcome.failure.step}`).toBe(
      'driver-hang at 1',
    );
  }, 60_000);

  it('a driver that cannot start is a DriverStartError naming it: missing, not executable, exits before its hello, another protocol version', () => {
    expect(() => new NativeDriver(path.join(dir, 'missing'))).toThrow(
      /missing: cannot start: no such file/,
    );
    const plain = path.join(dir, 'plain');
    writeFileSync(plain, 'not a program');
    chmodSync(plain, 0o644);
    expect(() => new NativeDriver(plain)).toThrow(/plain: cannot start: not executable/);
    expect(() => new NativeDriver(scriptedDriver(dir, 'quits', 'process.exit(3);'))).toThrow(
      /quits: cannot start: exited before its hello \(exit code 3\)/,
    );
    expect(
      () =>
        new NativeDriver(
          scriptedDriver(dir, 'v2', "hello(2, 'system=allocator\\npolicy=any\\n'); readFrame();"),
        ),
    ).toThrow(
      new DriverStartError(
        path.join(dir, 'v2'),
        "speaks protocol version 2; this harness speaks version 1 (rebuild it against this package's include/gpumv_driver.h)",
      ),
    );
    expect(() =>
      nativeAllocatorForProject(
        dir,
        path.basename(
          scriptedDriver(
            dir,
            'nopolicy',
            "hello(1, 'system=allocator\\npolicy=lifo\\n'); readFrame();",
          ),
        ),
      ),
    ).toThrow(/nopolicy: its hello declares policy "lifo"/);
  });

  it('fuzz --exec with a driver that cannot start is one error: line and exit code 2', () => {
    const result = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'src', 'cli', 'fuzz.ts'),
        '--exec',
        path.join(dir, 'missing'),
        '--runs',
        '1',
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toMatch(/^error: .*missing: cannot start: no such file$/);
  });
});

describe('the protocol', () => {
  it('a batch frame is 8 + 16 + 40 bytes per command, sizes of 2^32 and more intact; answers decode and check their numbering', () => {
    const bytes = encodeAllocBatch(
      2 ** 33,
      [
        { op: 'alloc', sizeBytes: 2 ** 32 + 5, alignBytes: 16 },
        { op: 'free', index: 3 },
      ],
      0,
    );
    expect(bytes.length).toBe(8 + 16 + 2 * 40);
    const view = new DataView(bytes.buffer);
    expect(String.fromCharCode(bytes[0]!)).toBe('B');
    expect(view.getBigUint64(16, true)).toBe(2n ** 33n);
    expect(view.getBigUint64(24 + 8, true)).toBe(2n ** 32n + 5n);
    expect(view.getUint32(24 + 40, true)).toBe(2);
    const answer = new Uint8Array(8 + 8 + 8);
    const a = new DataView(answer.buffer);
    a.setUint32(4, 1, true);
    a.setUint32(12, 1, true);
    a.setBigUint64(16, 2n ** 64n - 1n, true);
    const decoded = decodeAnswers([answer], 2);
    expect(typeof decoded === 'string' ? decoded : decoded.values).toEqual([null]);
    a.setUint32(0, 1, true);
    expect(decodeAnswers([answer], 2)).toBe('an answer frame starts at command 1, expected 0');
  });

  it('kept stderr lines drop what changes from run to run (process ids, addresses, the working directory)', () => {
    expect(
      stderrLines(
        '==1234==ERROR: AddressSanitizer: SEGV on unknown address 0x000000001234\n\n    #0 in f /work/x/a.cpp:3\n',
        '/work/x',
      ),
    ).toEqual([
      '==PID==ERROR: AddressSanitizer: SEGV on unknown address 0x?',
      '    #0 in f a.cpp:3',
    ]);
  });

  it('gpumv include-dir prints the folder of gpumv_driver.h', () => {
    const printed = execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), 'include-dir'],
      { cwd: ROOT, encoding: 'utf8' },
    ).trim();
    expect(existsSync(path.join(printed, 'gpumv_driver.h'))).toBe(true);
  });
});
