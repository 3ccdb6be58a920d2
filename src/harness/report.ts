/**
 * The report of a finding, written for someone who did not write the harness: the system and its
 * config, the failed checks with their messages, then the whole (shrunk) sequence with what each
 * side answered at every step, the failing step marked, and a diff of the two observations there.
 * Printed by the fuzz CLI, `regress save`/`show`/`replay` and the vitest helpers.
 */
import { jsonEqual, type Json } from './json.js';
import { OBSERVATION_CHECK, traceSequence, type Failure, type RunOptions, type TracedStep } from './runner.js';
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
}

function compact(value: Json | undefined): string {
  const text = JSON.stringify(value ?? null);
  return text.length <= MAX_ANSWER_CHARS ? text : `${text.slice(0, MAX_ANSWER_CHARS)}... (${text.length} chars)`;
}

/** The checks a failure names, first one first: "'a' (also: 'b', 'c')". */
export function checksText(failure: Failure): string {
  const others = failure.checks.filter((check) => check !== failure.check);
  return `'${failure.check}'` + (others.length > 0 ? ` (the same step also fails ${others.map((check) => `'${check}'`).join(', ')})` : '');
}

function stepLines(index: number, step: TracedStep, failing: boolean, width: number, modelless: boolean): string[] {
  const marker = failing ? '>>' : '  ';
  const lines = [`  ${marker} ${String(index).padStart(width)}  ${JSON.stringify(step.command)}`];
  const pad = ' '.repeat(width + 7);
  if (modelless) {
    // No model: the implementation's answer only (its trace, else its observation).
    lines.push(`${pad}returned:       ${compact(step.implTrace ?? step.impl)}`, ...(failing ? [`${pad}^ fails here`] : []));
    return lines;
  }
  if (jsonEqual(step.model, step.impl)) lines.push(`${pad}both:           ${compact(step.model)}`);
  else lines.push(`${pad}model:          ${compact(step.model)}`, `${pad}implementation: ${compact(step.impl)}`);
  const modelTrace = step.modelTrace ?? null;
  const implTrace = step.implTrace ?? null;
  if (modelTrace !== null && jsonEqual(modelTrace, implTrace)) lines.push(`${pad}returned:       ${compact(implTrace)} (both)`);
  else {
    if (modelTrace !== null) lines.push(`${pad}model returned: ${compact(modelTrace)}`);
    if (implTrace !== null) lines.push(`${pad}impl returned:  ${compact(implTrace)}`);
  }
  if (failing) lines.push(`${pad}^ fails here`);
  return lines;
}

/** The whole readable report of one failure. */
export function formatReport(input: ReportInput): string {
  const { system, failure, commands } = input;
  const lines = [
    `${input.title ?? 'FINDING'} ${system.name}: check ${checksText(failure)} failed at step ${failure.step} of ${commands.length}`,
    ...(input.notes ?? []).map((note) => `  ${note}`),
    `  system:  ${system.name}: ${system.summary}`,
    `  config:  ${JSON.stringify(failure.config)}`,
    '  what failed:',
    ...failure.message.split('\n').map((line) => `    ${line}`),
  ];
  const trace = traceSequence(system, failure.config, commands, input.runOptions ?? {});
  if (trace.length === 0) {
    lines.push('  (the sides could not be built for this config: see the message above)');
  } else {
    const modelless = system.modelless === true;
    lines.push(`  sequence (${commands.length} commands; each step's answer from ${modelless ? 'the implementation, no model' : 'the model and the implementation'}):`);
    const width = String(commands.length - 1).length;
    trace.forEach((step, index) => lines.push(...stepLines(index, step, index === failure.step, width, modelless)));
  }
  if (failure.diff.length > 0) {
    lines.push(`  diff of the observations at step ${failure.step} (model => implementation):`, ...failure.diff.map((line) => `    ${line}`));
  } else if (failure.checks.includes(OBSERVATION_CHECK)) {
    lines.push(`  observations at step ${failure.step}: model ${compact(failure.modelObservation)} / implementation ${compact(failure.implObservation)}`);
  } else if (system.modelless !== true) {
    lines.push(`  the observations at step ${failure.step} agree; the invariant above is what failed`);
  }
  return lines.join('\n');
}

/**
 * The report of a run that never returned (or killed its worker): replaying it here could hang
 * this thread, so the sequence is listed as recorded, without answers.
 */
export function formatUnreturnedReport(heading: string, notes: readonly string[], config: Json, commands: readonly Command[]): string {
  return [
    heading,
    ...notes.map((note) => `  ${note}`),
    `  config:  ${JSON.stringify(config)}`,
    `  sequence (${commands.length} commands; the last one never returned):`,
    ...commands.map((command, index) => `    ${String(index).padStart(3)}  ${JSON.stringify(command)}`),
  ].join('\n');
}
