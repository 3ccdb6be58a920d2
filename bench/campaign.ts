/**
 * `npm run bench -- campaign [--systems a,b] [--runs N] [--seconds S]`
 *
 * 1. Harness overhead: for each system, fast-check driving the full side-by-side harness (model +
 *    implementation + every invariant + observation comparison) against fast-check driving the
 *    bare implementation alone, on the same generated sequences (same seed and run count).
 * 2. Worker scaling: side-by-side commands per second of the campaign runner with one worker
 *    and with two, each for the same wall-clock budget.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { caseArb } from '../src/harness/property';
import { RunContext, runSequence } from '../src/harness/runner';
import { SYSTEMS } from '../src/harness/registry';
import type { SystemDef } from '../src/harness/system';
import type { CampaignSummary } from '../src/harness/campaign';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] !== undefined ? args[index + 1]! : fallback;
};
const runs = Number(option('runs', '300'));
const seconds = Number(option('seconds', '6'));
const selected = option('systems', 'all');
const systems = selected === 'all' ? SYSTEMS : SYSTEMS.filter((system) => selected.split(',').includes(system.name));

function timeCheck(system: SystemDef, predicate: (testCase: { config: never; commands: never[] }) => boolean): { ms: number; commands: number } {
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
console.log(`${'system'.padEnd(20)} ${'bare impl cmd/s'.padStart(16)} ${'harness cmd/s'.padStart(14)} ${'harness / bare time'.padStart(20)}`);
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
  const full = timeCheck(system, (testCase) => runSequence(system, testCase.config, testCase.commands).ok);
  console.log(
    `${system.name.padEnd(20)} ${Math.round(bare.commands / (bare.ms / 1000)).toLocaleString('en-US').padStart(16)} ` +
      `${Math.round(full.commands / (full.ms / 1000)).toLocaleString('en-US').padStart(14)} ${(full.ms / bare.ms).toFixed(2).padStart(19)}x`,
  );
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'bench-campaign-'));
function campaign(workers: number): CampaignSummary {
  const json = path.join(dir, `w${workers}.json`);
  const result = spawnSync(
    path.join(root, 'node_modules', '.bin', 'tsx'),
    [path.join(root, 'src', 'cli', 'fuzz.ts'), '--system', selected, '--seed', 'bench', '--budget', `${seconds}s`, '--workers', String(workers), '--json', json, '--out', dir],
    { encoding: 'utf8' },
  );
  if (result.status !== 0 && result.status !== 1) throw new Error(result.stderr);
  return JSON.parse(readFileSync(json, 'utf8')) as CampaignSummary;
}
console.log(`\nworker scaling: campaign runner for ${seconds} s each (includes worker start-up)`);
const one = campaign(1);
const two = campaign(2);
console.log('per system: commands/s per core (busy time), and the per-core efficiency of two workers; last row: total throughput');
console.log(`${'system'.padEnd(20)} ${'1 worker'.padStart(15)} ${'2 workers'.padStart(16)} ${'ratio'.padStart(7)}`);
for (const name of Object.keys(one.systems)) {
  const a = one.timing.commandsPerSecond[name] ?? 0;
  const b = two.timing.commandsPerSecond[name] ?? 0;
  console.log(`${name.padEnd(20)} ${a.toLocaleString('en-US').padStart(15)} ${b.toLocaleString('en-US').padStart(16)} ${(b / Math.max(a, 1)).toFixed(2).padStart(6)}x`);
}
const total = (summary: CampaignSummary) => Object.values(summary.systems).reduce((sum, system) => sum + system.commands, 0) / (summary.timing.elapsedMs / 1000);
console.log(`${'all (total cmd/s)'.padEnd(20)} ${Math.round(total(one)).toLocaleString('en-US').padStart(15)} ${Math.round(total(two)).toLocaleString('en-US').padStart(16)} ${(total(two) / total(one)).toFixed(2).padStart(6)}x`);
