/**
 * The D3D12 kit for native residency managers (include/gpumv_d3d12/, docs/d3d12-kit.md), tested
 * in-process against its ReferencePort, before the process protocol exists.
 *
 * The driver (examples/native/residency/driver.cpp) is built with g++ under ASan and UBSan
 * against Debian's directx-headers-dev (tools/d3d12-kit/build.ts; cached by content hash). A
 * missing compiler or header fails the build step with what to install: never a skip.
 *
 * - the kit's own tests (QueryInterface per device version, unsupported calls failing loudly,
 *   private data, the reference GPU's judgements, fence waits moving the GPU, the deadlock
 *   report, threads, events and critical sections under the scheduler, the Win32 basics);
 * - the example residency manager: its clean and single-threaded builds run every scenario in
 *   both device modes with no finding; each planted bug is caught by the scenario built for it,
 *   with the kind of finding that bug causes, in both modes;
 * - replay: the same run (same seed) gives the same device-call log byte for byte, and a
 *   seeded preemption changes the interleaving without making the clean build fail;
 * - the generated stub header matches what its generator makes from the installed d3d12.h.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildD3d12Driver } from '../tools/d3d12-kit/build.js';

const ROOT = path.resolve(__dirname, '..');
let driver = '';

function run(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(driver, args, { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  driver = buildD3d12Driver();
}, 600_000);

describe('the kit', () => {
  it('passes its own tests, each in a child process with the status it must end with', () => {
    const r = run(['kit-tests']);
    const lines = r.stdout.trim().split('\n');
    const byName = new Map(lines.map((l) => [l.split(' ')[1], l] as const));
    expect([...byName.keys()]).toEqual([
      'device-versions',
      'unsupported-calls-fail-loudly',
      'private-data-and-descs',
      'residency-calls-reach-the-port',
      'gpu-judges-touches-and-evictions',
      'fence-wait-advances-the-gpu',
      'deadlock-is-reported',
      'threads-events-critical-sections',
      'win32-basics',
      'foreign-objects-are-faults',
      'teardown-leak-check-fires',
      'foreign-thread-is-refused',
    ]);
    for (const line of lines) expect(line, r.stdout + r.stderr).toMatch(/^KIT \S+ pass /);
    expect(byName.get('deadlock-is-reported')).toMatch(
      /pass exit-3 fatal deadlock: no thread can run:/,
    );
    expect(byName.get('foreign-thread-is-refused')).toMatch(/pass exit-70 ?$/);
    expect(r.status, r.stderr).toBe(0);
  });
});

/** Each planted bug, the scenario built to catch it, and the finding kinds it must cause per device mode. */
const CAUGHT: Record<string, { scenario: string; d3: string[]; d0: string[] }> = {
  bug_lru_touch_skipped: {
    scenario: 'reuse-under-pressure',
    d3: ['evict-in-flight'],
    d0: ['evict-in-flight'],
  },
  bug_trim_in_flight: {
    scenario: 'aged-in-flight',
    d3: ['touch-not-resident'],
    d0: ['evict-in-flight'],
  },
  bug_fence_off_by_one: {
    scenario: 'aged-in-flight',
    d3: ['touch-not-resident'],
    d0: ['evict-in-flight'],
  },
  bug_no_paging_wait: {
    scenario: 'frames',
    d3: ['touch-before-paging'],
    d0: ['touch-not-resident'],
  },
  bug_local_usage_only: { scenario: 'non-local-usage', d3: ['over-budget'], d0: ['over-budget'] },
  bug_split_drops_set: {
    scenario: 'split',
    d3: ['touch-not-resident'],
    d0: ['touch-not-resident'],
  },
};
const SCENARIOS = [
  'frames',
  'split',
  'reuse-under-pressure',
  'aged-in-flight',
  'non-local-usage',
  'latency-backpressure',
];

describe('the example residency manager', () => {
  let runs: { variant: string; mode: string; scenario: string; status: string; kinds: string[] }[] =
    [];

  beforeAll(() => {
    const r = run(['matrix']);
    expect(r.status, r.stderr).toBe(0);
    runs = r.stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [tag, variant, mode, scenario, status, kinds] = line.split(' ');
        expect(tag).toBe('RUN');
        return {
          variant: variant!,
          mode: mode!,
          scenario: scenario!,
          status: status!,
          kinds: kinds === '-' ? [] : kinds!.split(','),
        };
      });
  }, 120_000);

  it('runs every variant in both device modes through every scenario, none crashing', () => {
    const variants = ['clean', 'clean_st', ...Object.keys(CAUGHT)];
    expect(runs.map((r) => `${r.variant} ${r.mode} ${r.scenario}`)).toEqual(
      variants.flatMap((v) => ['d3', 'd0'].flatMap((m) => SCENARIOS.map((s) => `${v} ${m} ${s}`))),
    );
    // exit-0: no finding; exit-10: findings reported. A sanitizer report, a leak (23), a signal or a fatal would be another status.
    for (const r of runs) expect(['exit-0', 'exit-10'], JSON.stringify(r)).toContain(r.status);
  });

  it('the clean builds (paging thread and single-threaded) have no finding anywhere', () => {
    const clean = runs.filter((r) => r.variant === 'clean' || r.variant === 'clean_st');
    expect(clean).toHaveLength(24);
    for (const r of clean)
      expect(r, JSON.stringify(r)).toMatchObject({ status: 'exit-0', kinds: [] });
  });

  it.each(Object.entries(CAUGHT))(
    '%s is caught by its scenario in both device modes',
    (variant, expected) => {
      for (const mode of ['d3', 'd0'] as const) {
        const r = runs.find(
          (x) => x.variant === variant && x.mode === mode && x.scenario === expected.scenario,
        )!;
        expect(r.status, JSON.stringify(r)).toBe('exit-10');
        for (const kind of expected[mode]) expect(r.kinds, JSON.stringify(r)).toContain(kind);
      }
    },
  );

  it('a finding names the submission and the object', () => {
    const r = run(['run', 'bug_lru_touch_skipped', 'd3', 'reuse-under-pressure']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      'violation evict-in-flight Evict of object 0 while submission #2 on queue 0 (runnable) references it\n',
    );
    expect(r.stdout).toContain(
      'violation touch-not-resident submission #2 on queue 0 touched object 0, which is not resident on the device\n',
    );
    expect(r.stdout.trim().split('\n').at(-1)).toBe('result findings');
  });

  it('MaxLatency 1 holds each submission until the paging thread has taken the previous work', () => {
    const r = run(['run', 'clean', 'd0', 'latency-backpressure', '--log']);
    expect(r.status, r.stdout).toBe(0);
    const at = (text: string) => {
      const i = r.stdout.indexOf(text);
      expect(i, text).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at('makeResident [0,1]\n')).toBeLessThan(at('execute q0 #2 '));
    expect(at('makeResident [2]\n')).toBeLessThan(at('execute q0 #3 '));
    expect(at('makeResident [3]\n')).toBeLessThan(at('execute q0 #4 '));
    expect(at('execute q0 #1 ')).toBeLessThan(at('makeResident [0,1]\n'));
  });

  it('replays exactly: same run, same seed, same device-call log and interleaving', () => {
    for (const args of [
      ['run', 'clean', 'd0', 'reuse-under-pressure', '--log'],
      ['run', 'clean', 'd0', 'reuse-under-pressure', '--log', '--seed', '7'],
      ['run', 'bug_trim_in_flight', 'd0', 'aged-in-flight', '--log', '--seed', '3'],
    ]) {
      const first = run(args);
      const second = run(args);
      expect(first.stdout.length).toBeGreaterThan(200);
      expect(second.stdout).toBe(first.stdout);
    }
  });

  it('seeded preemption changes the interleaving and the clean build stays clean under it', () => {
    const switches = new Set<string>();
    for (const seed of ['1', '2', '3', '4', '5', '6']) {
      for (const scenario of SCENARIOS) {
        const r = run(['run', 'clean', 'd0', scenario, '--seed', seed]);
        expect(r.stdout.trim().split('\n').at(-1), `${scenario} seed ${seed}: ${r.stdout}`).toBe(
          'result clean',
        );
        if (scenario === 'reuse-under-pressure')
          switches.add(r.stdout.match(/switches (\d+)/)![1]!);
      }
    }
    expect(switches.size).toBeGreaterThan(1);
  });

  it('refuses a run it does not know with one error line and status 2', () => {
    const r = run(['run', 'clean', 'd7', 'frames']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'error: run: no variant clean, mode d7 or scenario frames (see `list`)\n',
    );
  });
});

describe('the generated stubs', () => {
  it('match what tools/d3d12-kit/gen-stubs.mjs makes from the installed d3d12.h', () => {
    const r = spawnSync(
      process.execPath,
      [path.join(ROOT, 'tools', 'd3d12-kit', 'gen-stubs.mjs')],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      readFileSync(path.join(ROOT, 'include', 'gpumv_d3d12', 'stubs.generated.h'), 'utf8'),
    );
  });
});
