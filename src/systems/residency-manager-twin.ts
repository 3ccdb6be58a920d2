/**
 * The benchmark twin of the residency-manager system (src/systems/residency-manager.ts): which
 * configs get one, and the comparison of the twin with the checked implementation after each
 * command.
 */
import { jsonEqual, type Json } from '../harness/json.js';
import { sameNumbers } from './common.js';
import type { ManagerSide, ResidencyManagerSystemConfig } from './residency-manager-side.js';

/** Whether a generated config gets the benchmark twin: 1 in 8, by a mix of its fields. */
export function twinShare(config: ResidencyManagerSystemConfig): boolean {
  let mix = config.maxLatency * 31 + config.ticksPerSecond * 7 + config.localBudgetBytes;
  for (const size of config.objectSizesBytes) mix = (mix * 17 + size) % 1_000_003;
  return mix % 8 === 0;
}

/** The command as a disagreement names it (built only for one: a JSON.stringify per command cost a share of the step). */
function what(command: { readonly op: string }): string {
  return `${command.op} ${JSON.stringify(command)}`;
}

/**
 * Runs `command` on the twin and compares it with what the checked side just did: the answer
 * (or the error), then the state a benchmark's figures depend on. Returns the disagreement.
 */
export function twinStep<Cmd extends { readonly op: string }>(
  checked: ManagerSide,
  twin: ManagerSide,
  command: Cmd,
  dispatch: (side: ManagerSide, command: Cmd) => Json,
  result: Json,
  failure: unknown,
): string | null {
  let twinResult: Json = null;
  let twinFailure: unknown;
  try {
    twinResult = dispatch(twin, command);
  } catch (error) {
    twinFailure = error;
  }
  twin.manager.drainEvents();
  twin.manager.gpu.drainCalls();
  if (
    (failure === undefined) !== (twinFailure === undefined) ||
    (failure !== undefined && String(failure) !== String(twinFailure))
  ) {
    return `${what(command)}: the checked implementation ${failure === undefined ? 'answered' : `threw ${String(failure)}`}, the unchecked twin ${twinFailure === undefined ? 'answered' : `threw ${String(twinFailure)}`}`;
  }
  if (failure === undefined && !jsonEqual(result, twinResult)) {
    return `${what(command)}: the checked implementation answered ${JSON.stringify(result)}, the unchecked twin ${JSON.stringify(twinResult)}`;
  }
  const a = checked.manager;
  const b = twin.manager;
  if (!sameNumbers(a.residentList(), b.residentList()))
    return `after ${what(command)}: resident list (LRU order) ${JSON.stringify(a.residentList())}, the unchecked twin's ${JSON.stringify(b.residentList())}`;
  if (!sameNumbers(a.evictedList(), b.evictedList()))
    return `after ${what(command)}: evicted list ${JSON.stringify(a.evictedList())}, the unchecked twin's ${JSON.stringify(b.evictedList())}`;
  if (a.currentGeneration() !== b.currentGeneration())
    return `after ${what(command)}: generation ${a.currentGeneration()}, the unchecked twin's ${b.currentGeneration()}`;
  const countersA = a.counters();
  const countersB = b.counters();
  if (
    countersA.resident !== countersB.resident ||
    countersA.evicted !== countersB.evicted ||
    countersA.residentSizeBytes !== countersB.residentSizeBytes
  ) {
    return `after ${what(command)}: counters() ${JSON.stringify(countersA)}, the unchecked twin's ${JSON.stringify(countersB)}`;
  }
  if (
    !sameNumbers(a.syncPointGenerations(), b.syncPointGenerations()) ||
    a.firstUncompletedGeneration() !== b.firstUncompletedGeneration() ||
    a.queuedWorks() !== b.queuedWorks()
  ) {
    return (
      `after ${what(command)}: sync points [${a.syncPointGenerations().join(',')}], first uncompleted ${a.firstUncompletedGeneration()}, queued works ${a.queuedWorks()}; ` +
      `the unchecked twin's [${b.syncPointGenerations().join(',')}], ${b.firstUncompletedGeneration()}, ${b.queuedWorks()}`
    );
  }
  const gpuA = a.gpu;
  const gpuB = b.gpu;
  if (gpuA.pagingFenceCompleted !== gpuB.pagingFenceCompleted)
    return `after ${what(command)}: paging fence ${gpuA.pagingFenceCompleted}, the unchecked twin's ${gpuB.pagingFenceCompleted}`;
  for (let queue = 0; queue < checked.config.queueCount; queue++) {
    if (
      gpuA.fenceCompleted(queue) !== gpuB.fenceCompleted(queue) ||
      gpuA.pendingItems(queue) !== gpuB.pendingItems(queue)
    ) {
      return `after ${what(command)}: queue ${queue} at fence ${gpuA.fenceCompleted(queue)} with ${gpuA.pendingItems(queue)} items, the unchecked twin's at ${gpuB.fenceCompleted(queue)} with ${gpuB.pendingItems(queue)}`;
    }
  }
  if (
    gpuA.localUsageBytes !== gpuB.localUsageBytes ||
    gpuA.nonLocalUsageBytes !== gpuB.nonLocalUsageBytes
  ) {
    return `after ${what(command)}: device usage ${gpuA.localUsageBytes} + ${gpuA.nonLocalUsageBytes}, the unchecked twin's ${gpuB.localUsageBytes} + ${gpuB.nonLocalUsageBytes}`;
  }
  for (let object = 0; object < checked.config.objectSizesBytes.length; object++) {
    if (
      a.lastSyncPoint(object) !== b.lastSyncPoint(object) ||
      a.lastUsedTimestamp(object) !== b.lastUsedTimestamp(object) ||
      gpuA.residencyRefCount(object) !== gpuB.residencyRefCount(object)
    ) {
      return (
        `after ${what(command)}: object ${object} has sync point ${a.lastSyncPoint(object)}, last use ${a.lastUsedTimestamp(object)}, device refcount ${gpuA.residencyRefCount(object)}; ` +
        `the unchecked twin's ${b.lastSyncPoint(object)}, ${b.lastUsedTimestamp(object)}, ${gpuB.residencyRefCount(object)}`
      );
    }
  }
  return null;
}
