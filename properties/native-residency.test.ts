/**
 * Native residency managers through the call-back protocol (docs/native-protocol.md,
 * "Call-backs"; docs/d3d12-kit.md): the example manager's driver (examples/native/residency/
 * residency_driver.cpp, the header compiled unchanged) is built here under ASan and UBSan (cached;
 * a missing compiler or header fails, never skips). The clean build conforms to policy spec with
 * paging inline (ID3D12Device3) and on its paging thread, and passes policy any with preemption;
 * every planted bug's stored finding replays against its variant with its recorded check and
 * passes against the clean build; the misuse teams, a planted bug under policy any and hand-made call
 * frames make each check of the system fire, and scripted drivers each driver fault.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSystem } from '../src/harness/property.js';
import { loadRegression } from '../src/harness/regression.js';
import { runSequence } from '../src/harness/runner.js';
import {
  NATIVE_RESIDENCY_SYSTEM,
  nativeResidencyForProject,
  type NativeResidencySystem,
} from '../src/native/native-residency.js';
import type { NativeResidencyConfig } from '../src/native/native-residency-config.js';
import { closeResidencySessions } from '../src/native/native-residency-run.js';
import { CallGarbage, ResidencyJudge } from '../src/native/residency-judge.js';
import { nativeResolver } from '../src/native/native-systems.js';
import { buildResidencyDrivers } from '../tools/d3d12-kit/build.js';

const ROOT = path.resolve(__dirname, '..');
const BIN = '.build/native-residency';
const STORED = path.join(
  ROOT,
  'examples',
  'native',
  'residency',
  'regressions',
  NATIVE_RESIDENCY_SYSTEM,
);
const TEST_SEED = 20261202;

beforeAll(() => {
  buildResidencyDrivers();
}, 300_000);

afterAll(() => closeResidencySessions());

function driver(variant: string): NativeResidencySystem {
  return nativeResidencyForProject(ROOT, `${BIN}/residency-${variant}`);
}

/** The system with every generated config changed by `force` (one configuration at a time). */
function forced(
  system: NativeResidencySystem,
  force: (c: NativeResidencyConfig) => NativeResidencyConfig,
): NativeResidencySystem {
  return { ...system, configArb: () => system.configArb().map(force) };
}

const SPEC_INLINE = (c: NativeResidencyConfig): NativeResidencyConfig => ({
  ...c,
  policy: 'spec',
  deviceVersion: 3,
  seed: 0,
});
const SPEC_THREAD = (c: NativeResidencyConfig): NativeResidencyConfig => ({
  ...c,
  policy: 'spec',
  deviceVersion: 0,
  maxLatency: 1,
  seed: 0,
});
/** Policy any; with a paging thread (device 0) the scheduler preempts at kit calls. */
const ANY =
  (device: number) =>
  (c: NativeResidencyConfig): NativeResidencyConfig => ({
    ...c,
    policy: 'any',
    deviceVersion: device,
    seed: device === 0 && c.seed === 0 ? 1 : c.seed,
  });

/** A two-object config of one queue. */
function small(
  executable: string,
  policy: NativeResidencyConfig['policy'],
  deviceVersion: number,
): NativeResidencyConfig {
  return {
    executable,
    policy,
    deviceVersion,
    objectSizesBytes: [4, 4],
    queueCount: 1,
    startEvicted: false,
    maxLatency: 1,
    ticksPerSecond: 1,
    localBudgetBytes: 8,
    nonLocalBudgetBytes: 0,
    seed: 0,
  };
}

function passes(system: NativeResidencySystem, numRuns: number): string {
  const result = checkSystem(system, { seed: TEST_SEED, numRuns });
  return result.failed ? result.failure.message : 'passed';
}

describe('the clean example manager', () => {
  it('conforms to policy spec with paging inline (ID3D12Device3)', () => {
    expect(passes(forced(driver('clean'), SPEC_INLINE), 60)).toBe('passed');
  });

  it('conforms to policy spec with its paging thread (no ID3D12Device3)', () => {
    expect(passes(forced(driver('clean'), SPEC_THREAD), 60)).toBe('passed');
  });

  it('passes policy any with the scheduler preempting its paging thread at kit calls', () => {
    expect(passes(forced(driver('clean'), ANY(0)), 40)).toBe('passed');
  });

  it('the single-threaded build passes policy any with inline paging and no ID3D12Device3', () => {
    expect(passes(forced(driver('single-threaded'), ANY(0)), 40)).toBe('passed');
  });

  it('refuses policy spec where its calls cannot follow the model (one error naming the field)', () => {
    const system = driver('single-threaded');
    const config = small(`${BIN}/residency-single-threaded`, 'spec', 0);
    expect(() => system.parseConfig(config, 'x.json', 'config')).toThrow(/needs a paging thread/);
  });
});

describe('the stored findings of the planted bugs', () => {
  const files = readdirSync(STORED)
    .filter((file) => file.endsWith('.json'))
    .sort();

  it('there is one per planted bug of residency_manager.h', () => {
    expect(files).toEqual([
      'bug-failed-batch-counted.json',
      'bug-fence-off-by-one.json',
      'bug-local-usage-only.json',
      'bug-lru-touch-skipped.json',
      'bug-no-paging-wait.json',
      'bug-split-drops-set.json',
      'bug-trim-in-flight.json',
    ]);
  });

  for (const file of files) {
    it(`${file} fails against its variant with its recorded check, and passes against the clean build`, async () => {
      const resolve = nativeResolver(ROOT, NATIVE_RESIDENCY_SYSTEM);
      const { regression, system } = await loadRegression(
        path.join(STORED, file),
        new Map(),
        (_name, raw) => resolve(raw),
      );
      const outcome = runSequence(system, regression.config, regression.commands);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.failure.check).toBe(regression.origin?.check);
      const clean = { ...regression.config, executable: `${BIN}/residency-clean` };
      const again = runSequence(
        driver('clean'),
        clean as NativeResidencyConfig,
        regression.commands as never,
      );
      expect(again.ok ? 'passed' : again.failure.message).toBe('passed');
    });
  }
});

describe('each check of the system fires', () => {
  it('no-leak: a fence the driver file never releases', () => {
    const result = checkSystem(forced(driver('misuse-leak'), ANY(3)), {
      seed: TEST_SEED,
      numRuns: 5,
    });
    expect(result.failed && result.failure.check).toBe('no-leak');
    if (result.failed) expect(result.failure.message).toContain('1 fence(s) still referenced');
  });

  it('kit-calls-supported: a call the kit does not implement', () => {
    const result = checkSystem(forced(driver('misuse-unsupported-call'), ANY(3)), {
      seed: TEST_SEED,
      numRuns: 20,
    });
    expect(result.failed && result.failure.check).toBe('kit-calls-supported');
    if (result.failed)
      expect(result.failure.message).toContain('ID3D12CommandQueue::GetTimestampFrequency');
  });

  it('within-budget: the local-usage-only bug under policy any (its batching ignores non-local usage)', () => {
    const result = checkSystem(forced(driver('bug-local-usage-only'), ANY(3)), {
      seed: TEST_SEED,
      numRuns: 300,
    });
    expect(result.failed && result.failure.check).toBe('within-budget');
  });

  it("residency-balanced: objects made resident behind the manager's back", () => {
    const result = checkSystem(forced(driver('misuse-resident-behind-back'), ANY(3)), {
      seed: TEST_SEED,
      numRuns: 100,
    });
    expect(result.failed && result.failure.check).toBe('residency-balanced');
  });

  it('a finding replays byte for byte from the same seed', () => {
    const system = driver('bug-split-drops-set');
    const first = checkSystem(system, { seed: TEST_SEED, numRuns: 100 });
    const second = checkSystem(system, { seed: TEST_SEED, numRuns: 100 });
    expect(first.failed).toBe(true);
    expect(second.failed && second.failure.message).toBe(first.failed && first.failure.message);
  });

  it('a driver started by hand (no fds 3 and 4) says so and exits 2', () => {
    const run = spawnSync(path.join(ROOT, BIN, 'residency-clean'), { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^error: this is a gpumv residency driver/);
  });
});

describe('the judge of the call-backs', () => {
  /** A 'C' frame's payload: `u32 flags, u32 calls`, then per call `u32 call, u32 words, words`. */
  function calls(list: [number, ...number[]][], flags = 0): Uint8Array {
    const words = list.reduce((n, call) => n + 8 + 8 * (call.length - 1), 8);
    const bytes = new Uint8Array(words);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, flags, true);
    view.setUint32(4, list.length, true);
    let at = 8;
    for (const [call, ...args] of list) {
      view.setUint32(at, call, true);
      view.setUint32(at + 4, args.length, true);
      at += 8;
      for (const arg of args) {
        view.setUint32(at, arg, true);
        at += 8;
      }
    }
    return bytes;
  }
  const judge = () =>
    new ResidencyJudge({
      objectSizesBytes: [10, 10],
      queueCount: 2,
      ticksPerSecond: 1,
      localBudgetBytes: 100,
      nonLocalBudgetBytes: 0,
    });

  it('binds fences by use and reports a use the simulated GPU cannot model', () => {
    const j = judge();
    // fence 1 signalled by queue 0, fence 2 given to EnqueueMakeResident; queue 1 waits for queue 0's fence
    j.applyCalls(
      calls([
        [4, 1, 0],
        [4, 2, 0],
        [7, 0, 1, 5],
        [2, 2, 1, 0],
        [8, 1, 1, 5],
      ]),
    );
    expect(j.faults).toEqual([
      "fence-role: ID3D12CommandQueue::Wait on fence 1, queue 0's fence (a queue waiting for another queue is not modelled)",
    ]);
    j.gpu.progress(0, 1);
    expect(j.applyCalls(calls([[10, 1, 5]], 1))).toBe(1); // AdvanceUntil: already there
  });

  it('a second MakeResident of a resident object and an Evict of an object a runnable list reads are violations', () => {
    const j = judge();
    j.gpu.createObject(0, false);
    j.applyCalls(
      calls([
        [1, 0],
        [1, 0],
        [6, 0, 1, 7, 1, 0],
        [3, 0],
      ]),
    );
    expect(j.gpu.violations.map((v) => v.kind)).toEqual(['refcount', 'evict-in-flight']);
  });

  it('a call with fewer words than its code takes is garbage, never a read of stale words', () => {
    const j = judge();
    expect(() => j.applyCalls(calls([[7, 0, 1]]))).toThrow(CallGarbage); // Signal takes 3
    expect(() => j.applyCalls(calls([[2, 2]]))).toThrow(CallGarbage); // EnqueueMakeResident takes 2
    expect(() => j.applyCalls(calls([[6, 0, 2, 7, 1, 0]]))).toThrow(CallGarbage); // 2 lists, 1 sent
    expect(() => j.applyCalls(calls([[6, 0, 1, 7, 3, 0]]))).toThrow(CallGarbage); // 3 objects, 1 sent
    expect(() => j.applyCalls(calls([[12, 9]]))).toThrow(CallGarbage); // 9 bytes of text, none sent
    j.applyCalls(calls([[4, 1, 0]])); // CreateFence with its two words is fine
  });

  it("callbacks=2: the state carries each object's residency count and segment, and a usage count that differs from the GPU's is garbage", () => {
    const j = new ResidencyJudge(
      {
        objectSizesBytes: [10, 30],
        queueCount: 1,
        ticksPerSecond: 1,
        localBudgetBytes: 100,
        nonLocalBudgetBytes: 100,
      },
      true,
    );
    j.gpu.createObject(0, false);
    j.gpu.createObject(1, true);
    j.gpu.moveToSegment(1, true);
    j.applyCalls(calls([[1, 0]]));
    j.applyCalls(calls([[1, 0]])); // a refcount violation: the count goes to 2, the usage stays
    const reply = j.encodeReply(0);
    const view = new DataView(reply.buffer);
    const objects = 8 + 8 + 48; // frame header, value, state without fences
    expect(view.getUint32(objects, true)).toBe(2);
    const words = [0, 1].map((o) => [
      view.getUint32(objects + 8 + 8 * o, true),
      view.getUint32(objects + 12 + 8 * o, true),
    ]);
    expect(words).toEqual([
      [2, 0],
      [1, 1],
    ]);
    expect(reply.length).toBe(objects + 8 + 16);
    j.applyCalls(calls([[14, 10, 30]])); // what the driver counted: the GPU's usage
    expect(() => j.applyCalls(calls([[14, 20, 30]]))).toThrow(CallGarbage);
    expect(() => j.applyCalls(calls([[14, 10, 0]]))).toThrow(CallGarbage);
  });

  it('a CPU wait the GPU cannot reach now is no deadlock, only not yet', () => {
    const j = judge();
    j.applyCalls(
      calls([
        [4, 1, 0],
        [4, 2, 0],
        [8, 0, 2, 1],
        [7, 0, 1, 1],
      ]),
    );
    expect(j.applyCalls(calls([[10, 1, 1]], 1))).toBe(0);
    expect(j.gpu.violations).toEqual([]);
    j.applyCalls(calls([[9, 2, 1]])); // the CPU signals the paging fence: the queue's wait is satisfied
    expect(j.applyCalls(calls([[10, 1, 1]], 1))).toBe(1);
  });
});

/**
 * A scripted residency driver: a Node program that says a residency hello (policy any), answers
 * every command with no values, and misbehaves at its first execute as `misbehave` says.
 */
function scriptedDriver(
  dir: string,
  name: string,
  misbehave: string,
  callbacks = 1,
  extraHello = '',
): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `#!/usr/bin/env node
const fs = require('node:fs');
function frame(kind, payload) { const h = Buffer.alloc(8); h[0] = kind.charCodeAt(0); h.writeUInt32LE(payload.length, 4); fs.writeSync(4, Buffer.concat([h, payload])); }
function readExactly(n) { const b = Buffer.alloc(n); let got = 0; while (got < n) { const k = fs.readSync(3, b, got, n - got, null); if (k === 0) process.exit(0); got += k; } return b; }
const head = Buffer.alloc(8); head.writeUInt32LE(0x564d5047, 0); head.writeUInt32LE(1, 4);
frame('H', Buffer.concat([head, Buffer.from('system=residency\\ncallbacks=${callbacks}\\nname=script\\npolicy=any\\n${extraHello}')]));
for (;;) {
  const h = readExactly(8);
  const p = readExactly(h.readUInt32LE(4));
  if (h[0] === 0x51) process.exit(0);
  const fencesEnd = 48 + 16 * p.readUInt32LE(40);
  const op = p.readUInt32LE(${callbacks === 2 ? 'fencesEnd + 8 + 8 * p.readUInt32LE(fencesEnd)' : 'fencesEnd'});
  if (op === 6) { ${misbehave} }
  frame('A', Buffer.alloc(8));
}
`,
  );
  chmodSync(file, 0o755);
  return file;
}

describe('injected device-call failures follow the hello', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumv-native-failures-'));

  it('a driver whose hello says failures=1 (the kit loop) gets failNext and the device-call-failure site', () => {
    const system = driver('clean');
    expect(system.opNames).toContain('failNext');
    expect(system.faultOps).toEqual({ 'device-call-failure': ['failNext'] });
  });

  it('a driver whose hello does not is never sent a Fail command', () => {
    const file = scriptedDriver(dir, 'no-failures', '');
    const system = nativeResidencyForProject(dir, path.basename(file));
    expect(system.opNames).not.toContain('failNext');
    expect(system.faultOps).toBeUndefined();
  });

  it('a hello with another failures value is refused, naming the key', () => {
    const file = scriptedDriver(dir, 'failures-2', '', 1, 'failures=2\\n');
    expect(() => nativeResidencyForProject(dir, path.basename(file))).toThrow(
      /failures=2; expected 0 or 1/,
    );
  });

  it('the clean build takes a failed make-resident batch back as the model does; the library defect does not (policy spec, both paging modes)', () => {
    for (const [mode, call] of [
      [SPEC_INLINE, 'enqueueMakeResident'],
      [SPEC_THREAD, 'makeResident'],
    ] as const) {
      const config = { ...mode(small(`${BIN}/residency-clean`, 'spec', 3)), startEvicted: true };
      const commands = [
        { op: 'failNext', call },
        { op: 'record', set: 0, objs: [0, 1] },
        { op: 'execute', queue: 0, sets: [0] },
        { op: 'pagingWorkerStep' },
        { op: 'pagingProgress', steps: 4 },
        { op: 'gpuProgress', queue: 0, steps: 4 },
      ];
      const outcome = runSequence(driver('clean'), config, commands);
      expect(outcome.ok ? 'passed' : outcome.failure.message).toBe('passed');
      // The library's defect: told apart from the model under spec, unsafe under any.
      const executable = `${BIN}/residency-bug-failed-batch-counted`;
      const bug = driver('bug-failed-batch-counted');
      const spec = runSequence(bug, { ...config, executable }, commands);
      expect(spec.ok).toBe(false);
      const any = runSequence(bug, { ...ANY(config.deviceVersion)(config), executable }, commands);
      expect(any.ok ? 'passed' : any.failure.check).toBe('residency-before-execution');
    }
  });
});

describe('driver faults are findings of their own kind', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumv-native-residency-'));
  const cases: [string, string, string, number?][] = [
    ['sane', '', 'passed'],
    // callbacks=2: the state blocks carry the objects (the script finds the op past them)
    ['sane-callbacks-2', '', 'passed', 2],
    [
      'usage-miscounted',
      "const c = Buffer.alloc(32); c.writeUInt32LE(1, 4); c.writeUInt32LE(14, 8); c.writeUInt32LE(2, 12); c.writeBigUInt64LE(999n, 16); frame('C', c);",
      'driver-garbage',
      2,
    ],
    ['garbage', "fs.writeSync(4, Buffer.from('not a frame at all'));", 'driver-garbage'],
    ['hang', 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);', 'driver-hang'],
    ['crash', "process.kill(process.pid, 'SIGSEGV');", 'driver-crash'],
    ['exit', 'process.exit(7);', 'driver-exit'],
    [
      'sanitizer',
      "process.stderr.write('==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010\\n'); process.exit(1);",
      'driver-sanitizer',
    ],
  ];
  for (const [name, misbehave, check, callbacks] of cases) {
    it(`${name}: ${check}`, () => {
      const file = scriptedDriver(dir, name, misbehave, callbacks);
      const system = nativeResidencyForProject(dir, path.basename(file));
      const config = small(path.basename(file), 'any', 3);
      const commands = [
        { op: 'record', set: 0, objs: [0] },
        { op: 'execute', queue: 0, sets: [0] },
        { op: 'gpuProgress', queue: 0, steps: 3 },
      ];
      const outcome = runSequence(system, config, commands);
      expect(outcome.ok ? 'passed' : outcome.failure.check).toBe(check);
      if (!outcome.ok) expect(outcome.failure.step).toBe(1);
      if (check === 'driver-sanitizer' && !outcome.ok)
        expect(outcome.failure.message).toContain('ERROR: AddressSanitizer: heap-use-after-free');
      if (name === 'usage-miscounted' && !outcome.ok)
        expect(outcome.failure.message).toContain('the driver counts usage local 999, non-local 0');
    }, 60_000);
  }
});
