/**
 * `npm run bench -- campaign [--systems a,b] [--runs N] [--seconds S] [--repeat R]`
 *
 * 1. Harness overhead: for each system, fast-check driving the full side-by-side harness (model +
 *    implementation + every invariant + observation comparison) against fast-check driving the
 *    bare implementation alone, on the same generated sequences (same seed and run count; the
 *    default 2000 runs per system measure warm code, a few hundred mostly measure the JIT).
 * 2. Worker scaling: total side-by-side commands per second of `npm run fuzz` with one worker
 *    and with two, each for the same wall-clock budget (start-up included), and, as this
 *    machine's ceiling for the same work, two independent one-worker campaigns (shards 0/2 and
 *    1/2 in separate processes at once). R rounds, interleaved; the median round is reported.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { caseArb } from '../src/harness/property.js';
import { RunContext, runSequence } from '../src/harness/runner.js';
import { BUILTIN_SYSTEMS as SYSTEMS } from '../src/systems/index.js';
import type { SystemDef } from '../src/harness/system.js';
import type { CampaignSummary } from '../src/harness/campaign.js';
import { COMMANDS, orExit, parseOrExit, UsageError } from '../src/cli/args.js';

const known = SYSTEMS.map((system) => system.name);
const HELP = `usage: npm run bench -- campaign [--systems all|NAME,NAME] [--runs N] [--seconds S] [--repeat R]

1. Harness overhead: fast-check driving the full side-by-side harness against fast-check driving
   the bare implementation, on the same generated sequences, per system.
2. Worker scaling: commands per second of npm run fuzz with one worker, with two, and two
   one-worker shards in separate processes, each for the same wall-clock budget.

  --systems A,B  systems to measure (default all): ${known.join(', ')}
  --runs N       generated sequences per system for the overhead (default 2000)
  --seconds S    budget of each fuzz campaign of the scaling part (default 60)
  --repeat R     scaling rounds, interleaved; the median round is reported (default 1)
  -h, --help     this help`;
const args = parseOrExit(COMMANDS['bench campaign'], HELP);
const runs = args.values.runs ?? 2000;
const seconds = args.values.seconds ?? 60;
const repeat = args.values.repeat ?? 1;
const selected = args.values.systems ?? 'all';
const systems =
  selected === 'all'
    ? SYSTEMS
    : SYSTEMS.filter((system) => selected.split(',').includes(system.name));
orExit(() => {
  const unknown =
    selected === 'all' ? [] : selected.split(',').filter((name) => !known.includes(name));
  if (unknown.length > 0 || systems.length === 0) {
    throw new UsageError(
      `--systems: unknown system '${unknown[0] ?? selected}'; known: ${known.join(', ')}, all (see npm run bench -- campaign --help)`,
    );
  }
});

function timeCheck(
  system: SystemDef,
  predicate: (testCase: { config: never; commands: never[] }) => boolean,
): { ms: number; commands: number } {
  let commands = 0;
  const arbitrary = fc.noBias(caseArb(system));
  const started = performance.now();
  fc.assert(
    fc.property(arbitrary, (testCase) => {
      commands += testCase.commands.length;
      return predicate(testCase as never);
    }),
    { seed: 7, numRuns: runs },
  );
  return { ms: performance.now() - started, commands };
}

console.log(`harness overhead: ${runs} generated sequences per system, seed 7, one thread`);
console.log(
  `${'system'.padEnd(20)} ${'bare impl cmd/s'.padStart(16)} ${'harness cmd/s'.padStart(14)} ${'harness / bare time'.padStart(20)}`,
);
for (const system of systems) {
  const bare = timeCheck(system, (testCase) => {
    const impl = system.createImpl(testCase.config, new RunContext());
    for (const command of testCase.commands) {
      try {
        system.apply(impl, command);
      } catch {
        // Contract errors are answers; the bare run ignores them as the harness records them.
      }
    }
    return true;
  });
  const full = timeCheck(
    system,
    (testCase) => runSequence(system, testCase.config, testCase.commands).ok,
  );
  console.log(
    `${system.name.padEnd(20)} ${Math.round(bare.commands / (bare.ms / 1000))
      .toLocaleString('en-US')
      .padStart(16)} ` +
      `${Math.round(full.commands / (full.ms / 1000))
        .toLocaleString('en-US')
        .padStart(14)} ${(full.ms / bare.ms).toFixed(2).padStart(19)}x`,
  );
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'bench-campaign-'));
let launched = 0;
/** Starts `npm run fuzz` (the command users run) for the budget; resolves to its summary. */
function campaign(workers: number, extra: string[] = []): Promise<CampaignSummary> {
  const json = path.join(dir, `c${launched++}.json`);
  const args = [
    'run',
    '--silent',
    'fuzz',
    '--',
    '--system',
    selected,
    '--seed',
    'bench',
    '--budget',
    `${seconds}s`,
    '--workers',
    String(workers),
    '--json',
    json,
    '--out',
    dir,
    ...extra,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => {
      if (code !== 0 && code !== 1)
        reject(new Error(`npm ${args.join(' ')} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(readFileSync(json, 'utf8')) as CampaignSummary);
    });
  });
}
const commandsOf = (summary: CampaignSummary): number =>
  Object.values(summary.systems).reduce((sum, system) => sum + system.commands, 0);
const total = (summary: CampaignSummary): number =>
  commandsOf(summary) / (summary.timing.elapsedMs / 1000);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(
  `\nworker scaling: npm run fuzz for ${seconds} s each (start-up included), ${repeat} round(s), interleaved`,
);
const rounds: { one: CampaignSummary; two: CampaignSummary; apart: number }[] = [];
for (let round = 0; round < repeat; round++) {
  const one = await campaign(1);
  const two = await campaign(2);
  const [left, right] = await Promise.all([
    campaign(1, ['--shard', '0/2']),
    campaign(1, ['--shard', '1/2']),
  ]);
  rounds.push({ one, two, apart: total(left) + total(right) });
  console.log(
    `round ${round + 1}: 1 worker ${Math.round(total(one)).toLocaleString('en-US')}, 2 workers ${Math.round(total(two)).toLocaleString('en-US')} ` +
      `(${(total(two) / total(one)).toFixed(2)}x), two one-worker processes ${Math.round(rounds[round]!.apart).toLocaleString('en-US')} (${(rounds[round]!.apart / total(one)).toFixed(2)}x)`,
  );
}
const ratios = rounds.map((round) => total(round.two) / total(round.one));
const middle = rounds[ratios.indexOf(median(ratios))]!;
console.log(
  '\nmedian round, per system: commands/s per core (busy time) with one worker and with two, and the per-core efficiency of two',
);
console.log(
  `${'system'.padEnd(20)} ${'1 worker'.padStart(15)} ${'2 workers'.padStart(16)} ${'ratio'.padStart(7)}`,
);
for (const name of Object.keys(middle.one.systems)) {
  const a = middle.one.timing.commandsPerSecond[name] ?? 0;
  const b = middle.two.timing.commandsPerSecond[name] ?? 0;
  console.log(
    `${name.padEnd(20)} ${a.toLocaleString('en-US').padStart(15)} ${b.toLocaleString('en-US').padStart(16)} ${(b / Math.max(a, 1)).toFixed(2).padStart(6)}x`,
  );
}
console.log(
  `${'all (total cmd/s)'.padEnd(20)} ${Math.round(total(middle.one)).toLocaleString('en-US').padStart(15)} ${Math.round(total(middle.two)).toLocaleString('en-US').padStart(16)} ${(total(middle.two) / total(middle.one)).toFixed(2).padStart(6)}x` +
    `   (two one-worker processes: ${(middle.apart / total(middle.one)).toFixed(2)}x)`,
);
