/**
 * The report of a finding, written for someone who did not write the harness: the system and its
 * config, the failed checks with their messages, then the whole (shrunk) sequence with what each
 * side answered at every step, the failing step marked, and a diff of the two observations there.
 * Printed by the fuzz CLI, `regress save`/`show`/`replay` and the vitest helpers.
 *
 * `buildReport` gathers everything a report shows into plain data (`ReportData`); `formatReport`
 * renders it as console text and the HTML report (src/report/html.ts) draws the same data, so the
 * two never disagree.
 */
import { jsonEqual, type Json, type JsonObject } from './json.js';
import {
  OBSERVATION_CHECK,
  traceSequence,
  type Failure,
  type RunOptions,
  type TracedStep,
} from './runner.js';
import type { AnySystem, Command } from './system.js';

/** Observations longer than this are cut in the sequence listing (the diff shows the full difference). */
const MAX_ANSWER_CHARS = 400;

export interface ReportInput {
  readonly system: AnySystem;
  readonly failure: Failure;
  /** The whole sequence (the failing step and any after it). */
  readonly commands: readonly Command[];
  /** Replays against this implementation (a mutant or a user's module) instead of the system's. */
  readonly runOptions?: RunOptions;
  /** A heading line; default: FINDING. */
  readonly title?: string;
  /** Extra lines under the heading (where it came from, how to replay or save it). */
  readonly notes?: readonly string[];
  /** Also records each side's picture per step (SystemDef.visual) for the HTML report. */
  readonly withVisuals?: boolean;
}

/** How the report ends: the diff at the failing step, both observations, or that they agree. */
export type ReportEnding =
  | { readonly kind: 'diff'; readonly lines: readonly string[] }
  | { readonly kind: 'observations'; readonly model: Json; readonly impl: Json }
  | { readonly kind: 'agree' }
  /** A system without a model (SystemDef.modelless): no second side to agree with. */
  | { readonly kind: 'none' };

/** Everything a report of one failure shows, as plain data (the console text and the HTML report render it). */
export interface ReportData {
  /** The heading's first word: FINDING, SAVED, REGRESSION, PASSES. */
  readonly title: string;
  readonly system: { readonly name: string; readonly summary: string };
  /** The system has no model (SystemDef.modelless): each step has the implementation's answer only. */
  readonly modelless: boolean;
  readonly config: JsonObject;
  /** The first failed check, then every check that failed at that step ('(none)' and [] when it passes). */
  readonly check: string;
  readonly checks: readonly string[];
  readonly message: string;
  readonly notes: readonly string[];
  /** 0-based index of the failing step (-1 when the sequence passes). */
  readonly failingStep: number;
  readonly commands: readonly Command[];
  /** Every step's answers from both sides; empty when the sides could not be built for the config. */
  readonly steps: readonly TracedStep[];
  readonly ending: ReportEnding;
}

function compact(value: Json | undefined): string {
  const text = JSON.stringify(value ?? null);
  return text.length <= MAX_ANSWER_CHARS
    ? text
    : `${text.slice(0, MAX_ANSWER_CHARS)}... (${text.length} chars)`;
}

/** The checks a failure names, first one first: "'a' (also: 'b', 'c')". */
export function checksText(failure: Pick<Failure, 'check' | 'checks'>): string {
  const others = failure.checks.filter((check) => check !== failure.check);
  return (
    `'${failure.check}'` +
    (others.length > 0
      ? ` (the same step also fails ${others.map((check) => `'${check}'`).join(', ')})`
      : '')
  );
}

/** Replays the sequence (with the system's report hooks) and gathers what the report of this failure shows. */
export function buildReport(input: ReportInput): ReportData {
  const { system, failure, commands } = input;
  const steps = traceSequence(system, failure.config, commands, {
    ...input.runOptions,
    withVisuals: input.withVisuals === true,
  });
  let ending: ReportEnding;
  if (failure.diff.length > 0) ending = { kind: 'diff', lines: failure.diff };
  else if (failure.checks.includes(OBSERVATION_CHECK))
    ending = {
      kind: 'observations',
      model: failure.modelObservation,
      impl: failure.implObservation,
    };
  else ending = system.modelless === true ? { kind: 'none' } : { kind: 'agree' };
  return {
    title: input.title ?? 'FINDING',
    system: { name: system.name, summary: system.summary },
    modelless: system.modelless === true,
    config: failure.config,
    check: failure.check,
    checks: failure.checks,
    message: failure.message,
    notes: input.notes ?? [],
    failingStep: failure.step,
    commands,
    steps,
    ending,
  };
}

function stepLines(
  index: number,
  step: TracedStep,
  failing: boolean,
  width: number,
  modelless: boolean,
): string[] {
  const marker = failing ? '>>' : '  ';
  const lines = [`  ${marker} ${String(index).padStart(width)}  ${JSON.stringify(step.command)}`];
  const pad = ' '.repeat(width + 7);
  if (modelless) {
    // No model: the implementation's answer only (its trace, else its observation).
    lines.push(
      `${pad}returned:       ${compact(step.implTrace ?? step.impl)}`,
      ...(failing ? [`${pad}^ fails here`] : []),
    );
    return lines;
  }
  if (jsonEqual(step.model, step.impl)) lines.push(`${pad}both:           ${compact(step.model)}`);
  else
    lines.push(
      `${pad}model:          ${compact(step.model)}`,
      `${pad}implementation: ${compact(step.impl)}`,
    );
  const modelTrace = step.modelTrace ?? null;
  const implTrace = step.implTrace ?? null;
  if (modelTrace !== null && jsonEqual(modelTrace, implTrace))
    lines.push(`${pad}returned:       ${compact(implTrace)} (both)`);
  else {
    if (modelTrace !== null) lines.push(`${pad}model returned: ${compact(modelTrace)}`);
    if (implTrace !== null) lines.push(`${pad}impl returned:  ${compact(implTrace)}`);
  }
  if (failing) lines.push(`${pad}^ fails here`);
  return lines;
}

function endingLines(data: ReportData): string[] {
  const { ending, failingStep } = data;
  if (ending.kind === 'diff')
    return [
      `  diff of the observations at step ${failingStep} (model => implementation):`,
      ...ending.lines.map((line) => `    ${line}`),
    ];
  if (ending.kind === 'observations')
    return [
      `  observations at step ${failingStep}: model ${compact(ending.model)} / implementation ${compact(ending.impl)}`,
    ];
  if (ending.kind === 'agree')
    return [`  the observations at step ${failingStep} agree; the invariant above is what failed`];
  return [];
}

/** The console text of a report. */
export function renderReportText(data: ReportData): string {
  const { commands } = data;
  const lines = [
    `${data.title} ${data.system.name}: check ${checksText(data)} failed at step ${data.failingStep} of ${commands.length}`,
    ...data.notes.map((note) => `  ${note}`),
    `  system:  ${data.system.name}: ${data.system.summary}`,
    `  config:  ${JSON.stringify(data.config)}`,
    '  what failed:',
    ...data.message.split('\n').map((line) => `    ${line}`),
  ];
  if (data.steps.length === 0) {
    lines.push('  (the sides could not be built for this config: see the message above)');
  } else {
    lines.push(
      `  sequence (${commands.length} commands; each step's answer from ${data.modelless ? 'the implementation, no model' : 'the model and the implementation'}):`,
    );
    const width = String(commands.length - 1).length;
    data.steps.forEach((step, index) => {
      lines.push(...stepLines(index, step, index === data.failingStep, width, data.modelless));
    });
  }
  lines.push(...endingLines(data));
  return lines.join('\n');
}

/** The whole readable report of one failure. */
export function formatReport(input: ReportInput): string {
  return renderReportText(buildReport(input));
}

/**
 * The report of a run that never returned (or killed its worker): replaying it here could hang
 * this thread, so the sequence is listed as recorded, without answers.
 */
export function formatUnreturnedReport(
  heading: string,
  notes: readonly string[],
  config: Json,
  commands: readonly Command[],
): string {
  return [
    heading,
    ...notes.map((note) => `  ${note}`),
    `  config:  ${JSON.stringify(config)}`,
    `  sequence (${commands.length} commands; the last one never returned):`,
    ...commands.map(
      (command, index) => `    ${String(index).padStart(3)}  ${JSON.stringify(command)}`,
    ),
  ].join('\n');
}
