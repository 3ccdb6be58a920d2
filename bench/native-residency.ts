/**
 * `npm run bench -- native-residency [--runs N]`: side-by-side commands per second of the example
 * residency manager (examples/native/residency/residency_manager.h, through its driver file
 * residency_driver.cpp) with its device calls answered by the simulated GPU over the protocol's
 * call-backs, beside the TypeScript residency manager system, in one run.
 *
 * The runs are N generated cases of the native-residency system (fixed seed, unbiased as a
 * campaign draws them: three in four under policy spec, compared step by step with the spec model,
 * the rest under policy any), each run with every check. Rows:
 * - the driver built -O2 (no sanitizers) and as the build script builds it (ASan, UBSan);
 * - the built-in residency-manager system (TypeScript model and implementation, in-process) over
 *   its own generated runs, for scale.
 * The harness and the driver never compute at the same time (every call-back is a synchronous
 * round trip; the kit runs one manager thread at a time), so on an idle machine wall time is the
 * CPU time of one core. On a loaded machine each round trip also waits for a core, so the rate
 * per core is measured from CPU time: the harness process's (process.cpuUsage) plus the driver's
 * (/proc/<pid>/stat), every thread of each. Round trips per command are counted (a command and
 * each call-back that waits for an answer). Every run must pass; each row is the best of 3
 * interleaved passes (by CPU rate).
 *
 * `--pair EXE` compares two builds of the clean driver under the same load: the -O2 driver and EXE
 * (an older commit's, say) alternate pass by pass, and the medians of each side and of the per-pair
 * ratios are printed. The load of a shared machine moves within a minute, which whole runs of the
 * bench, minutes apart, cannot separate from a change.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';
import { runSequence } from '../src/harness/runner.js';
import type { AnySystem } from '../src/harness/system.js';
import { residencyManagerSystem } from '../src/systems/residency-manager.js';
import {
  nativeResidencyForProject,
  type NativeResidencySystem,
} from '../src/native/native-residency.js';
import { closeResidencySessions, residencySessionFor } from '../src/native/native-residency-run.js';
import { buildResidencyDrivers } from '../tools/d3d12-kit/build.js';

const { values } = parseOrExit(
  COMMANDS['bench native-residency'],
  `usage: npm run bench -- native-residency [--runs N] [--pair EXE [--passes P]]

Side-by-side commands/s of the example C++ residency manager (-O2 and ASan+UBSan builds), its
device calls answered by the simulated GPU through the protocol's call-backs, beside the
TypeScript residency-manager system, over N generated runs (default 300) with every check.
Needs g++ and directx-headers-dev.

  --runs N     generated runs per pass (default 300)
  --pair EXE   instead of the rows: alternate the -O2 driver with EXE (another build of a clean
               residency driver, e.g. one of an older commit, linked under a name the driver
               knows: residency-clean-release) pass by pass, so that both sides of each pair
               see the same load, and print each side's median and the median of the
               per-pair ratios
  --passes P   passes per side with --pair (default 12; the first is a warm-up)`,
);
const RUNS = values.runs ?? 300;
const PAIR = values.pair;
const PASSES = values.passes ?? 12;
if (values.passes !== undefined && PAIR === undefined) {
  console.error('error: --passes: only with --pair');
  process.exit(2);
}
if (PAIR !== undefined && !existsSync(PAIR)) {
  console.error(`error: --pair: no such file: ${PAIR}`);
  process.exit(2);
}
const SEED = 20261202;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
try {
  buildResidencyDrivers();
  buildResidencyDrivers({ release: true });
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  process.exit(2);
}
const RELEASE = '.build/native-residency/residency-clean-release';
const SANITIZED = '.build/native-residency/residency-clean';
const release = nativeResidencyForProject(root, RELEASE);
const sanitized = nativeResidencyForProject(root, SANITIZED);

interface Case {
  readonly config: object;
  readonly commands: readonly { readonly op: string }[];
}

function cases(system: AnySystem, runs: number): Case[] {
  const arb = fc.noBias(system.configArb()).chain((config) =>
    fc
      .array(system.commandArb(config), {
        minLength: 1,
        maxLength: system.sequence.maxLength,
        size: 'max',
      })
      .map((commands) => ({ config: config as object, commands })),
  );
  return fc.sample(fc.noBias(arb), { seed: SEED, numRuns: runs });
}

const nativeCases = cases(release, RUNS);
const builtinCases = cases(residencyManagerSystem, RUNS);
const count = (list: Case[]) => list.reduce((sum, c) => sum + c.commands.length, 0);

interface Row {
  readonly name: string;
  /** Commands per second of wall time. */
  readonly commandsPerSecond: number;
  /** Commands per second of CPU time: the harness's and the driver's (every thread of each). */
  readonly commandsPerCpuSecond: number;
  readonly roundTrips: number | null;
}

/** CPU seconds a process has used so far (utime + stime of /proc/<pid>/stat; 0 when unreadable). */
function processCpuSeconds(pid: number): number {
  if (pid === 0) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ
  } catch {
    return 0;
  }
}

function harnessCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function timeRuns(name: string, system: AnySystem, list: Case[], executable?: string): Row {
  const driver =
    executable === undefined ? null : residencySessionFor(path.resolve(root, executable)).driver;
  const pass = () => {
    for (const { config, commands } of list) {
      const run = executable === undefined ? config : { ...config, executable };
      const outcome = runSequence(system, run as never, commands);
      if (!outcome.ok)
        throw new Error(
          `${name}: a run failed (${outcome.failure.check}: ${outcome.failure.message.split('\n')[0]}); the bench measures conforming runs only`,
        );
    }
  };
  pass(); // warm-up (JIT, the driver's first pages)
  const writes = driver?.writes ?? 0;
  const pid = driver?.pid ?? 0;
  const cpuBefore = harnessCpuSeconds() + processCpuSeconds(pid);
  const started = performance.now();
  pass();
  const seconds = (performance.now() - started) / 1000;
  // Every run passes, so the driver process is the same one throughout the pass.
  const cpu = harnessCpuSeconds() + processCpuSeconds(pid) - cpuBefore;
  const commands = count(list);
  return {
    name,
    commandsPerSecond: commands / seconds,
    commandsPerCpuSecond: commands / cpu,
    roundTrips: driver === null ? null : (driver.writes - writes) / commands,
  };
}

/** One timed pass of `list` through a driver (no warm-up): commands per CPU-second and per wall second. */
function timedPass(system: AnySystem, list: Case[], executable: string): [number, number] {
  const driver = residencySessionFor(path.resolve(root, executable)).driver;
  const pid = driver.pid;
  const cpuBefore = harnessCpuSeconds() + processCpuSeconds(pid);
  const started = performance.now();
  for (const { config, commands } of list) {
    const outcome = runSequence(system, { ...config, executable } as never, commands);
    if (!outcome.ok)
      throw new Error(
        `${executable}: a run failed (${outcome.failure.check}: ${outcome.failure.message.split('\n')[0]}); the bench measures conforming runs only`,
      );
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = harnessCpuSeconds() + processCpuSeconds(pid) - cpuBefore;
  const commands = count(list);
  return [commands / cpu, commands / seconds];
}

if (PAIR !== undefined) {
  let other: AnySystem;
  try {
    other = nativeResidencyForProject(root, PAIR);
  } catch (error) {
    console.error(`error: --pair: ${(error as Error).message}`);
    process.exit(2);
  }
  const sides: [AnySystem, string][] = [
    [other, PAIR],
    [release, RELEASE],
  ];
  // A build whose hello has no failures=1 (an older commit's) cannot take the failNext commands:
  // both sides then run the runs that build's own system generates (the same seed).
  const pairCases = other.opNames.includes('failNext') ? nativeCases : cases(other, RUNS);
  const rates = sides.map(() => [] as [number, number][]);
  for (let p = 0; p < PASSES; p++)
    sides.forEach(([system, executable], i) => {
      const rate = timedPass(system, pairCases, executable);
      if (p > 0) rates[i]!.push(rate);
    });
  closeResidencySessions();
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1]!;
  const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
  console.log(
    `native-residency --pair: ${pairCases.length} generated runs (seed ${SEED}), ${count(pairCases).toLocaleString('en-US')} commands a pass, ${PASSES - 1} pairs after a warm-up pass`,
  );
  sides.forEach(([, executable], i) => {
    console.log(
      `${executable}: median ${k(median(rates[i]!.map((r) => r[0])))} commands/CPU-s, ${k(median(rates[i]!.map((r) => r[1])))} commands/wall-s`,
    );
  });
  for (const [column, name] of [
    [0, 'CPU'],
    [1, 'wall'],
  ] as const) {
    const ratios = rates[1]!.map((r, p) => r[column] / rates[0]![p]![column]);
    console.log(
      `${RELEASE} / ${PAIR} per ${name} second: median ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)})`,
    );
  }
  process.exit(0);
}

const measures: (() => Row)[] = [
  () =>
    timeRuns(
      'C++ manager -O2, call-backs to the simulated GPU',
      release as NativeResidencySystem,
      nativeCases,
      RELEASE,
    ),
  () => timeRuns('C++ manager ASan+UBSan, call-backs', sanitized, nativeCases, SANITIZED),
  () =>
    timeRuns(
      'TypeScript residency-manager system (in-process)',
      residencyManagerSystem,
      builtinCases,
    ),
];
const REPEATS = 3;
const rows: Row[] = measures.map((measure) => measure());
for (let repeat = 1; repeat < REPEATS; repeat++) {
  measures.forEach((measure, i) => {
    const row = measure();
    if (row.commandsPerCpuSecond > rows[i]!.commandsPerCpuSecond) rows[i] = row;
  });
}
closeResidencySessions();

console.log(
  `native-residency: ${nativeCases.length} generated runs (seed ${SEED}), ${count(nativeCases).toLocaleString('en-US')} commands, each side by side with the spec model (policy spec) or judged alone (any), every check; residency-manager: ${count(builtinCases).toLocaleString('en-US')} commands of its own runs`,
);
console.log('');
console.log(
  `${'side'.padEnd(52)} ${'commands/CPU-s'.padStart(15)} ${'commands/wall-s'.padStart(16)} ${'round trips/command'.padStart(20)}`,
);
for (const row of rows)
  console.log(
    `${row.name.padEnd(52)} ${Math.round(row.commandsPerCpuSecond).toLocaleString('en-US').padStart(15)} ${Math.round(row.commandsPerSecond).toLocaleString('en-US').padStart(16)} ${(row.roundTrips === null ? '-' : row.roundTrips.toFixed(2)).padStart(20)}`,
  );
console.log('');
console.log(
  "commands/CPU-s: per core, from the CPU time of the harness's process and the driver's (every thread of each); the two never compute at once, so on an idle machine it equals the wall-clock rate, and on a loaded one it leaves out the time spent waiting for a core",
);
