/**
 * Shrinking a run that hung (or killed its worker): the case is rebuilt from its seed, cut after
 * the step it was stuck at, and commands are removed in chunks (halves, quarters, ... single
 * commands) as long as the candidate still hangs the same way. Every candidate runs in a worker
 * under a time limit derived from the original run (see hangShrinkLimitMs): a candidate that
 * hangs costs that limit, one that returns costs what it runs, so the shrink takes about
 * (accepted removals x limit). The shrink can be stopped (budget, signal): it then returns the
 * best case so far.
 */
import type { Failure } from '../harness/runner.js';
import type { JsonObject } from '../harness/json.js';
import type { Command } from '../harness/system.js';
import { WatchedWorker, type Death, type WorkerInitFields } from './watchdog.js';

/** A candidate that hangs is stopped after 4x the time the original run took to reach its stuck step, at least this. */
export const MIN_HANG_SHRINK_LIMIT_MS = 250;
export const HANG_SHRINK_FACTOR = 4;

/**
 * The time limit of one hang-shrink candidate: max(4 x the time the original run needed to
 * reach the step it hung at, 250 ms), never more than the campaign's limit (0: none). A
 * candidate is a subsequence of the original, so it reaches its stuck step no later than the
 * original did; the factor covers a busy machine.
 */
export function hangShrinkLimitMs(timeoutMs: number, reachedMs: number): number {
  const derived = Math.max(HANG_SHRINK_FACTOR * reachedMs, MIN_HANG_SHRINK_LIMIT_MS);
  return timeoutMs === 0 ? derived : Math.min(timeoutMs, derived);
}

export type CaseOutcome =
  | {
      readonly kind: 'died';
      readonly check: string;
      readonly step: number;
      readonly detail: string;
    }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'failed'; readonly failure: Failure }
  | { readonly kind: 'passed' };

/** One worker of a CaseEvaluator: loading (ready), active, or dead. */
interface EvalWorker {
  readonly watched: WatchedWorker;
  readonly ready: Promise<boolean>;
  dead: boolean;
}

/**
 * Runs single cases in a watched worker, starting a fresh one after each death. A spare worker
 * is always loading beside the active one, so a death costs the time limit, not a worker's
 * start-up as well (which is most of the cost of shrinking a hang on a busy machine).
 */
export class CaseEvaluator {
  private active: EvalWorker | null = null;
  private spare: EvalWorker | null = null;
  private nextId = 1;
  private pending: ((outcome: CaseOutcome) => void) | null = null;

  constructor(
    private readonly url: URL,
    private readonly init: WorkerInitFields,
    private readonly timeoutMs: number,
  ) {}

  private spawn(): EvalWorker {
    let markReady: (loaded: boolean) => void = () => {};
    const ready = new Promise<boolean>((resolve) => (markReady = resolve));
    const entry: EvalWorker = {
      ready,
      dead: false,
      watched: new WatchedWorker(this.url, this.init, this.timeoutMs, {
        message: (reply) => {
          if (reply.kind === 'ready') markReady(true);
          else if (reply.kind === 'error') {
            entry.dead = true;
            markReady(false);
            void entry.watched.terminate();
            if (entry === this.active)
              this.resolve({ kind: 'died', check: 'worker-crash', step: -1, detail: reply.error });
          } else if (reply.kind === 'case' && entry === this.active) {
            this.resolve(
              reply.failure === null
                ? { kind: 'passed' }
                : { kind: 'failed', failure: reply.failure },
            );
          }
        },
        death: (death: Death) => {
          entry.dead = true;
          markReady(false);
          if (entry === this.active)
            this.resolve({
              kind: 'died',
              check: death.check,
              step: death.step,
              detail: death.detail,
            });
        },
      }),
    };
    return entry;
  }

  private resolve(outcome: CaseOutcome): void {
    const pending = this.pending;
    this.pending = null;
    pending?.(outcome);
  }

  async evaluate(
    system: string,
    config: JsonObject,
    commands: readonly Command[],
  ): Promise<CaseOutcome> {
    if (this.active === null || this.active.dead) {
      this.active = this.spare ?? this.spawn();
      this.spare = this.spawn();
    }
    const active = this.active;
    if (!(await active.ready))
      return { kind: 'died', check: 'worker-crash', step: -1, detail: 'the worker could not load' };
    return new Promise<CaseOutcome>((resolve) => {
      this.pending = resolve;
      active.watched.post({ kind: 'case', id: this.nextId++, system, config, commands });
    });
  }

  /** Stops every worker; a case being evaluated ends as 'cancelled'. */
  async close(): Promise<void> {
    this.resolve({ kind: 'cancelled' });
    await Promise.all([this.active?.watched.terminate(), this.spare?.watched.terminate()]);
    this.active = null;
    this.spare = null;
  }
}

export interface ShrunkDeath {
  readonly commands: Command[];
  /** The step the shrunk sequence is stuck at. */
  readonly step: number;
  /** Whether the death reproduced in a fresh worker (else the case is reported unshrunk). */
  readonly reproduced: boolean;
  /** The shrink was stopped before it ended (the case is the best so far). */
  readonly cut: boolean;
}

export interface ShrinkControl {
  /** Checked before every candidate: true ends the shrink with the best case so far. */
  stop(): boolean;
  /** Told of every smaller case that still dies. */
  progress(commands: readonly Command[], step: number): void;
}

/** Shrinks a case that died with `check` at `step`, keeping that death. */
export async function shrinkDeath(
  evaluator: CaseEvaluator,
  system: string,
  config: JsonObject,
  commands: readonly Command[],
  check: string,
  step: number,
  control: ShrinkControl = { stop: () => false, progress: () => {} },
): Promise<ShrunkDeath> {
  const stillDies = async (candidate: readonly Command[]): Promise<number | null> => {
    const outcome = await evaluator.evaluate(system, config, candidate);
    return outcome.kind === 'died' && outcome.check === check ? outcome.step : null;
  };
  let current = step >= 0 ? commands.slice(0, step + 1) : [...commands];
  let at = control.stop() ? null : await stillDies(current);
  if (at === null && current.length < commands.length && !control.stop()) {
    current = [...commands];
    at = await stillDies(current);
  }
  if (at === null) return { commands: [...commands], step, reproduced: false, cut: control.stop() };
  current = current.slice(0, Math.max(at, 0) + 1);
  control.progress(current, at);
  for (
    let chunk = Math.max(1, 2 ** Math.floor(Math.log2(current.length)));
    chunk >= 1;
    chunk = chunk === 1 ? 0 : Math.floor(chunk / 2)
  ) {
    let changed = true;
    while (changed) {
      changed = false;
      for (let start = 0; start < current.length; ) {
        if (control.stop())
          return { commands: current, step: Math.max(at, 0), reproduced: true, cut: true };
        const candidate = [...current.slice(0, start), ...current.slice(start + chunk)];
        const candidateAt = candidate.length === 0 ? null : await stillDies(candidate);
        if (candidateAt !== null) {
          current = candidate.slice(0, Math.max(candidateAt, 0) + 1);
          at = candidateAt;
          control.progress(current, at);
          changed = chunk === 1;
        } else {
          start += chunk;
        }
      }
    }
  }
  return { commands: current, step: Math.max(at, 0), reproduced: true, cut: false };
}
