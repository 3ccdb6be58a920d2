/**
 * `node --single-threaded-gc --import tsx bench/_fuzz-rate.ts --system NAME [--runs N] [--first I]`
 *
 * The campaign's side-by-side rate measured in CPU time, in this thread: runs FIRST..FIRST+N-1 of
 * the fixed campaign seed (the runs `npm run fuzz` would make), after a warm-up of the 200 runs
 * that follow them. `npm run fuzz` reports commands per busy second of wall time, which other
 * processes on a shared machine stretch; CPU time is what a change to the code moves. Compare two
 * trees by running each in turn, several rounds interleaved, and taking the medians.
 *
 * The process's CPU time includes V8's compiler threads, which optimize code beside the run (on
 * Linux also printed: the main thread's own CPU time, from /proc, the figure a campaign worker's
 * wall-clock rate follows on an idle core).
 *
 * A probe, not one of `npm run bench`'s benchmarks (hence the leading underscore): its figures
 * compare trees on one machine and have no table of their own.
 */
import { readFileSync } from 'node:fs';
import { BUILTIN_SYSTEMS } from '../src/systems/index.js';
import { executeRun, planRun } from '../src/harness/campaign.js';

const HELP = `usage: node --single-threaded-gc --import tsx bench/_fuzz-rate.ts --system NAME [--runs N] [--first I]

Side-by-side commands per CPU second of one system's campaign runs, in this thread.

  --system NAME  the system (${BUILTIN_SYSTEMS.map((system) => system.name).join(', ')})
  --runs N       runs measured (default 2000)
  --first I      first run index measured (default 0); the 200 runs after the measured ones warm up
  -h, --help     this help`;

const CAMPAIGN_SEED = 20261130;
const WARM_UP_RUNS = 200;

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}

function natural(field: string, text: string | undefined): number {
  const value = Number(text);
  if (text === undefined || !Number.isSafeInteger(value) || value < 0)
    fail(`${field} must be a natural number, got ${text ?? 'nothing'}`);
  return value;
}

const options = { system: '', runs: 2000, first: 0 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i]!;
  if (arg === '-h' || arg === '--help') {
    console.log(HELP);
    process.exit(0);
  } else if (arg === '--system') options.system = argv[++i] ?? fail('--system needs a name');
  else if (arg === '--runs') options.runs = natural('--runs', argv[++i]);
  else if (arg === '--first') options.first = natural('--first', argv[++i]);
  else fail(`unknown option ${arg} (see --help)`);
}
if (options.system === '') fail('--system is required (see --help)');
const system =
  BUILTIN_SYSTEMS.find((candidate) => candidate.name === options.system) ??
  fail(`--system: no system named '${options.system}'`);

/** This thread's CPU nanoseconds so far (Linux: schedstat of the main thread), or null elsewhere. */
function mainThreadNs(): number | null {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ');
    return Number(fields[0]);
  } catch {
    return null;
  }
}

const end = options.first + options.runs;
for (let i = end; i < end + WARM_UP_RUNS; i++)
  executeRun(system, planRun(CAMPAIGN_SEED, system, i));
const start = process.cpuUsage();
const mainStart = mainThreadNs();
let commands = 0;
let findings = 0;
for (let i = options.first; i < end; i++) {
  const result = executeRun(system, planRun(CAMPAIGN_SEED, system, i));
  commands += result.commands;
  if (result.finding !== null) findings++;
}
const used = process.cpuUsage(start);
const mainEnd = mainThreadNs();
const cpuSeconds = (used.user + used.system) / 1e6;
const mainSeconds = mainStart === null || mainEnd === null ? null : (mainEnd - mainStart) / 1e9;
console.log(
  `${system.name}: runs ${options.first}..${end - 1}, ${commands} commands, ${findings} findings, ${cpuSeconds.toFixed(2)} s CPU -> ${Math.round(commands / cpuSeconds)} commands per CPU second` +
    (mainSeconds === null
      ? ''
      : `; main thread ${mainSeconds.toFixed(2)} s -> ${Math.round(commands / mainSeconds)} per second`),
);
