/**
 * The finding files of a campaign, from the moment a run first fails to the report.
 *
 * A finding's file is named by its run, not by its shrunk case: fuzz-<check>-<op>-<hash>, where
 * check and op are those of the first failure and the hash is that of the run's name (campaign
 * seed, system, run index). So the file can be written at once, unshrunk, when a run first
 * fails, rewritten (atomically, under the same name) as the shrink makes progress, and
 * replaced by the shrunk case at the end: a signal or a kill at any point leaves the best case
 * so far on disk, and the name never changes.
 *
 * A finding is printed only once its path is final: when every earlier run of its system has
 * been recorded (an earlier run with the same signature would replace it in the summary, and
 * its file would be removed), or when the campaign ends. A printed file is never removed.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import {
  addFinding,
  findingSignature,
  planRun,
  type CampaignSummary,
  type FindingEntry,
  type RunFinding,
  type RunResult,
} from '../harness/campaign.js';
import { toolCommand } from '../harness/command-line.js';
import type { JsonObject } from '../harness/json.js';
import {
  originDate,
  regressionPath,
  serializeRegression,
  shortHash,
  REGRESSION_FORMAT,
} from '../harness/regression.js';
import type { Command } from '../harness/system.js';
import { rootRelative, writeAtomically } from './fuzz-files.js';
import type { CampaignOptions } from './fuzz-options.js';
import { findingReport } from './fuzz-report.js';
import { writeFindingHtml } from '../report/fuzz-html.js';
import { fileSystemName, type Target } from './fuzz-targets.js';
import { present } from '../assert.js';

/** The best failing case so far of a run being shrunk. */
export interface ShrinkState {
  readonly system: string;
  readonly runIndex: number;
  /** Absolute path of the finding's file. */
  readonly file: string;
  readonly firstCheck: string;
  readonly firstOp: string;
  readonly originalLength: number;
  /** When the shrink started (performance.now() of the main thread). */
  readonly startedMs: number;
  config: JsonObject;
  commands: readonly Command[];
  check: string;
  op: string;
  message: string;
}

/** What a case currently fails with (a worker's 'found' and 'shrinking' messages carry it). */
export interface FailingCase {
  readonly system: string;
  readonly runIndex: number;
  readonly config: JsonObject;
  readonly commands: readonly Command[];
  readonly check: string;
  readonly op: string;
  readonly message: string;
}

interface PendingReport {
  readonly target: Target;
  readonly finding: RunFinding;
  readonly entry: FindingEntry;
  readonly replaced: string;
}

const key = (system: string, runIndex: number): string => `${system}#${runIndex}`;

export class FindingFiles {
  private readonly shrinks = new Map<string, ShrinkState>();
  private readonly pending: PendingReport[] = [];
  /** Files printed by this session: never removed. */
  private readonly printed = new Set<string>();

  constructor(
    private readonly options: CampaignOptions,
    private readonly summary: CampaignSummary,
  ) {
    // The findings of earlier sessions (a resumed campaign) were printed then.
    for (const entry of summary.findings)
      this.printed.add(path.resolve(options.project.root, entry.file));
  }

  /** The file of run `runIndex`'s finding whose first failure is `check` on `op`. */
  fileFor(system: string, runIndex: number, check: string, op: string): string {
    const hash = shortHash(`${this.options.seed}/${system}/${runIndex}`);
    const slug = `fuzz-${check}-${op}-${hash}`.toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
    return regressionPath(this.options.outDir, fileSystemName(system), slug);
  }

  /** A run failed for the first time: its unshrunk case is written now. */
  found(failing: FailingCase, nowMs: number): ShrinkState {
    const state: ShrinkState = {
      ...failing,
      file: this.fileFor(failing.system, failing.runIndex, failing.check, failing.op),
      firstCheck: failing.check,
      firstOp: failing.op,
      originalLength: failing.commands.length,
      startedMs: nowMs,
    };
    this.shrinks.set(key(failing.system, failing.runIndex), state);
    this.write(
      state.file,
      failing.system,
      failing.runIndex,
      failing.check,
      failing.op,
      failing.config,
      failing.commands,
    );
    return state;
  }

  /** The shrink found a smaller failing case: it replaces the file's case. */
  progress(failing: FailingCase): ShrinkState | null {
    const state = this.shrinks.get(key(failing.system, failing.runIndex));
    if (state === undefined) return null;
    Object.assign(state, {
      config: failing.config,
      commands: failing.commands,
      check: failing.check,
      op: failing.op,
      message: failing.message,
    });
    this.write(
      state.file,
      failing.system,
      failing.runIndex,
      failing.check,
      failing.op,
      failing.config,
      failing.commands,
    );
    return state;
  }

  shrinking(): readonly ShrinkState[] {
    return [...this.shrinks.values()];
  }

  /** Forgets a run's shrink (its result arrived, or it was recorded as cut short). */
  settle(system: string, runIndex: number): ShrinkState | undefined {
    const state = this.shrinks.get(key(system, runIndex));
    this.shrinks.delete(key(system, runIndex));
    return state;
  }

  /**
   * The run result of a shrink cut short (budget, signal): its best case so far is the finding,
   * with a message that says how to finish the shrink.
   */
  cutShort(state: ShrinkState, why: string, elapsedMs: number): RunResult {
    this.settle(state.system, state.runIndex);
    const target = this.target(state.system);
    const plan = planRun(this.options.seed, target.system, state.runIndex);
    const finding: RunFinding = {
      signature: findingSignature(state.system, state.check, state.op),
      system: state.system,
      check: state.check,
      checks: [state.check],
      op: state.op,
      runIndex: state.runIndex,
      seed: plan.seed,
      path: '',
      config: state.config,
      commands: [...state.commands],
      message: state.message,
      note: this.cutNote(state, why, elapsedMs, state.commands.length),
      weights: plan.weights,
      faults: plan.faults,
      smallConfigs: plan.smallConfigs,
      originalLength: state.originalLength,
      firstCheck: state.firstCheck,
      firstOp: state.firstOp,
    };
    return {
      system: state.system,
      runIndex: state.runIndex,
      commands: state.originalLength,
      probes: {},
      weights: plan.weights,
      faults: plan.faults,
      smallConfigs: plan.smallConfigs,
      finding,
    };
  }

  /** The report's note on a shrink stopped before its end, with the command that finishes it. */
  cutNote(state: ShrinkState, why: string, elapsedMs: number, length: number): string {
    const shown = rootRelative(this.options.project.root, state.file);
    return (
      `shrinking stopped by ${why} after ${(elapsedMs / 1000).toFixed(1)} s at ${length} of ${state.originalLength} commands; ` +
      `finish it with ${toolCommand('regress', `save --finding ${shown} --shrink`)}`
    );
  }

  /** A run's finding is final (shrunk, or cut short): written, added to the summary, and queued for its report. */
  record(finding: RunFinding): void {
    this.settle(finding.system, finding.runIndex);
    const root = this.options.project.root;
    const file = this.fileFor(
      finding.system,
      finding.runIndex,
      finding.firstCheck,
      finding.firstOp,
    );
    const shown = rootRelative(root, file);
    const entry: FindingEntry = {
      signature: finding.signature,
      system: finding.system,
      check: finding.check,
      ...(finding.checks.length > 1 ? { checks: [...finding.checks] } : {}),
      op: finding.op,
      runIndex: finding.runIndex,
      commands: finding.commands.length,
      file: shown,
      replay: toolCommand('regress', `replay ${shown}`),
      weights: finding.weights,
      faults: [...finding.faults],
      smallConfigs: finding.smallConfigs,
    };
    const verdict = addFinding(this.summary.findings, entry);
    if (verdict.kind === 'duplicate') {
      // An earlier run of the same signature is the finding: this run's file (written while it
      // was shrunk, never printed) goes.
      this.remove(file);
      return;
    }
    this.write(
      file,
      finding.system,
      finding.runIndex,
      finding.check,
      finding.op,
      finding.config,
      finding.commands,
    );
    let replaced = '';
    if (verdict.kind === 'replaced') {
      replaced = ', replacing a later run with the same signature';
      const previous = this.pending.findIndex(
        (report) => report.entry.file === verdict.previous.file,
      );
      if (previous >= 0) this.pending.splice(previous, 1);
      if (verdict.previous.file !== entry.file)
        this.remove(path.resolve(root, verdict.previous.file));
    }
    this.pending.push({ target: this.target(finding.system), finding, entry, replaced });
  }

  /**
   * Prints the reports whose path is final: every earlier run of the system is recorded
   * (`recordedBelow(system)` runs of this shard's order), or `all` at the end of the campaign.
   */
  flush(
    recordedBelow: (system: string) => number,
    all: boolean,
    print: (text: string) => void,
  ): void {
    const { shard } = this.options;
    for (let index = 0; index < this.pending.length; ) {
      const report = this.pending[index]!;
      const ordinal = Math.floor((report.finding.runIndex - shard.index) / shard.count);
      if (!all && recordedBelow(report.finding.system) <= ordinal) {
        index++;
        continue;
      }
      this.pending.splice(index, 1);
      this.printed.add(path.resolve(this.options.project.root, report.entry.file));
      print(findingReport(report.target, report.finding, report.entry, report.replaced));
      writeFindingHtml(this.options.project.root, report.entry, report.target, report.finding);
    }
  }

  private remove(file: string): void {
    if (!this.printed.has(path.resolve(file))) rmSync(file, { force: true });
  }

  private target(system: string): Target {
    return present(
      this.options.targets.find((candidate) => candidate.system.name === system),
      'a finding names a system the campaign does not run',
      system,
    );
  }

  private write(
    file: string,
    system: string,
    runIndex: number,
    check: string,
    op: string,
    config: JsonObject,
    commands: readonly Command[],
  ): void {
    const catches = [...this.target(system).catches];
    const text = serializeRegression(
      {
        format: REGRESSION_FORMAT,
        system: fileSystemName(system),
        description: `fuzz campaign ${this.options.seed}, ${system} run ${runIndex}: ${check} fails on op ${op}`,
        config,
        commands: [...commands],
        // The run is named by campaign seed, system and index (its generation used that
        // run's swarm plan, so a fast-check seed alone would not rebuild it).
        origin: {
          tool: 'fuzz',
          seed: `${this.options.seed}/${system}/${runIndex}`,
          date: originDate(Date.now(), process.env.SOURCE_DATE_EPOCH),
          ...(catches.length === 1 ? { mutant: catches[0]! } : {}),
          check,
        },
        catches,
      },
      file,
    );
    writeAtomically(file, text);
  }
}
