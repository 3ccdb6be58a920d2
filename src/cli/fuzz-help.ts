/** The help texts of `npm run fuzz` and `npm run fuzz -- merge`. */
import { DEFAULT_SEED } from '../harness/seed.js';
import { DEFAULT_RUNS } from './fuzz-options.js';
import { DEFAULT_TIMEOUT_MS } from './watchdog.js';

export const HELP = `usage:
  npm run fuzz -- [--system all|NAME[,NAME...] | --mutant NAME | --allocator MODULE | --exec DRIVER] [--seed S]
                  [--runs N | --budget 30s|45m|8h] [--timeout 10s] [--stop-on-first]
                  [--workers N] [--shard k/K] [--json FILE] [--html OUT] [--out DIR] [--resume FILE] [--config FILE]
  npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]   (see merge --help)

Runs a fuzz campaign: run i of each system gets a seed derived from (campaign seed, system, i),
draws its enabled ops and weights (swarm testing) and its fault sites from it, and runs one
generated sequence side by side (model vs implementation) with every invariant checked.

  --system    systems to fuzz (default all: every system of the project, and the allocator
              modules and native driver executables its config lists)
  --mutant    fuzz a mutant of the bug catalog instead of the real implementation (its
              findings record the mutant in "catches")
  --allocator fuzz your own allocator: a .js/.mjs/.ts module exporting createAllocator(capacityBytes)
              returning { alloc(sizeBytes, alignBytes): number | null, free(offsetBytes): void },
              and optionally policy = 'first-fit' | 'best-fit' | 'buddy' | 'any' (default 'any':
              bounds, alignment, no overlap, frees accepted; a named policy adds offset-for-offset
              conformance with our model). Findings replay against the module (examples/README.md)
  --exec      fuzz a native driver: an executable built with include/gpumv_driver.h (its folder:
              gpumv include-dir), one process per worker, a run per batch; its hello declares its
              system (an allocator with its policy, a ring upload allocator, a fence-delayed free
              list with its sub-allocator kinds). Sanitizer reports, signals, exits, garbage and
              hangs (no answer for 5 s, or 300 ms of its CPU time without one) are findings
              (driver-sanitizer, driver-crash, driver-exit, driver-garbage, driver-hang); findings
              replay against the executable (docs/native.md). A driver whose hello says
              system=residency (built with include/gpumv_d3d12/residency_driver.h) runs the
              native-residency system instead: its device calls are answered by the simulated
              GPU and compared with the spec model (policy spec) or judged for safety (any)
              (docs/d3d12-kit.md)
  --seed      campaign seed, a string or number (default: the config's seed, else ${DEFAULT_SEED})
  --runs N    runs 0..N-1 of each system (default ${DEFAULT_RUNS} unless --budget is given)
  --budget    run until this much time has passed: no run starts after it, and what still runs
              at budget + 10 % (at most 30 s more) is stopped; a finding being shrunk then is
              written with its best case so far (regress save --finding FILE --shrink finishes
              the shrink)
  --timeout   time limit of one run (default ${DEFAULT_TIMEOUT_MS / 1000}s; 0 = none): a run past it is stopped
              with its worker thread and becomes a 'hang' finding, shrunk under the same limit
              in a fresh worker; a run that exhausts the worker's memory or kills it becomes an
              'out-of-memory' or 'worker-crash' finding. The campaign goes on with a fresh worker.
  --stop-on-first  end the campaign at its first finding (interactive use)
  --no-preflight   skip the preflight: before fuzzing, every stored regression of the campaign's
              systems (the project's and the built-ins') is replayed; each must fail against the
              mutants it names with its recorded check, so a judge that no longer detects what it
              should stops the campaign before it starts (exit code 4). Files that fail against
              the implementation (bugs not fixed yet) are listed and the campaign runs. Mutant
              campaigns skip it
  --workers   worker threads running the runs (default: the number of cores)
  --shard k/K take only runs i with i mod K = k; the K shards together are the whole campaign
  --json      summary file, rewritten after every batch of runs (default .fuzz/last-campaign.json)
  --html OUT  also write the campaign's summary page to OUT (per-system runs, commands/s, probes
              never hit, false OOM share, findings linked to their reports); every finding gets
              its HTML report beside its file either way (<finding>.html, docs/html-report.md)
  --out       where findings are written (default: the config's findings folder, .fuzz/findings),
              as <system>/fuzz-<check>-<op>-<hash>.json; 'regress save --finding FILE' stores
              one in the regressions folder
  --resume    continue the campaign a summary file describes (same seed, targets, shard and runs;
              a budgeted campaign needs a new --budget)
  --checkpoint rewrite the summary at most this often (default: after every batch of runs); a
              SIGKILL loses the runs finished since, which a resume runs again
  --config    the project's config file (default: gpumv.config.{ts,mts,js,mjs} found walking up
              from the working directory); its folder is the root paths in files are relative to
  --max-false-oom-share P  fail when an allocator's false out-of-memory share exceeds P (0..1):
              the share of its null answers given while an aligned free gap large enough
              existed (counted for every allocator system; the table's 'false OOM' column)
  -h, --help  this help

Exit codes: 0 no finding, 1 findings (each written as a regression file) or stored regressions
that still fail against the implementation, 2 bad arguments, 3 interrupted without findings,
4 the preflight failed (a stored regression's mutant escapes its check, or a file cannot be
read): nothing was fuzzed. Ctrl-C or SIGTERM stops the runs in flight (a resume runs them
again), writes every finding (one being shrunk with its best case so far) and the summary, and
exits (a second Ctrl-C exits at once); the summary is rewritten after every batch of runs, so
even a SIGKILL loses only the runs in flight. A finding's file is written when its run first
fails and replaced, under the same name, by each smaller case the shrink finds, so a kill at
any point leaves it on disk; its name carries a hash of its run (campaign seed, system, run
index), and its report is printed once that path is final. Shrinking shows its progress on
stderr. A hang's shrink stops each candidate after max(4 x the time the run took to reach the
step it hung at, 250 ms).
merge combines the summaries of one campaign's shards into one (same seed, runs and targets, each
shard once); it exits 1 on findings and 3 if shards are missing or were interrupted.`;

export const MERGE_HELP = `usage: npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]

Combines the summaries of one campaign's shards (same seed, runs and targets, each shard once)
into one and prints it; exits 1 on findings and 3 if shards are missing or were interrupted.

  --json FILE  also write the merged summary to FILE
  -h, --help   this help`;
