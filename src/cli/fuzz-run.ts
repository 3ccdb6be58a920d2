/** One measured campaign run, shared by the in-thread loop and the worker threads. */
import { performance } from 'node:perf_hooks';
import { executeRun, planRun, type RunHooks, type RunResult } from '../harness/campaign.js';
import type { Target } from './fuzz-targets.js';

/** Executes run `runIndex` of the target and records how long it took (the harness reads no clock). */
export function timedRun(
  target: Target,
  seed: string,
  runIndex: number,
  hooks?: RunHooks,
): RunResult {
  const started = performance.now();
  const result = executeRun(
    target.system,
    planRun(seed, target.system, runIndex),
    target.implFactory,
    hooks,
  );
  result.busyMs = performance.now() - started;
  return result;
}
