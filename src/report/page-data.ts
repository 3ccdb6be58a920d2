/**
 * The data an HTML report page carries (embedded as JSON and drawn by the page's script), built
 * from the same ReportData the console report renders.
 */
import { checksText, renderReportText, type ReportData } from '../harness/report.js';
import { jsonEqual, type Json } from '../harness/json.js';
import type { Visual } from '../harness/visual.js';
import { findHighlights, type Highlight } from './highlights.js';

/** Answers longer than this are cut on the page (the console text beside it has the same cut at 400). */
const MAX_PAGE_ANSWER_CHARS = 4000;

export interface PageStep {
  /** The command, the model's and the implementation's answers (JSON text). */
  readonly command: string;
  readonly model: string;
  readonly impl: string;
  /** The two answers are equal (the page shows one "both" line). */
  readonly same: boolean;
  /** What each side's last step returned beyond its answer (SystemDef.trace), when it did. */
  readonly modelReturned?: string;
  readonly implReturned?: string;
  readonly modelVisual?: Visual;
  readonly implVisual?: Visual;
}

export interface PageData {
  readonly heading: string;
  readonly title: string;
  readonly system: string;
  readonly summary: string;
  readonly config: string;
  readonly checks: string;
  readonly message: string;
  readonly notes: readonly string[];
  readonly failingStep: number;
  /** The system has no model: each step shows the implementation's answer only. */
  readonly modelless: boolean;
  readonly steps: readonly PageStep[];
  /** What the picture is: a heap map, a timeline, or none (the system has no visual hook). */
  readonly kind: 'heap' | 'timeline' | 'none';
  readonly highlights: readonly Highlight[];
  readonly ending: readonly string[];
  /** The console report of the same data. */
  readonly text: string;
}

function jsonText(value: Json | undefined): string {
  const text = JSON.stringify(value ?? null);
  return text.length <= MAX_PAGE_ANSWER_CHARS
    ? text
    : `${text.slice(0, MAX_PAGE_ANSWER_CHARS)}... (${text.length} chars)`;
}

/** The page heading: the console report's first line (a passing sequence says so). */
export function pageHeading(data: ReportData): string {
  if (data.failingStep < 0)
    return `${data.title} ${data.system.name}: every check holds over ${data.commands.length} commands`;
  return `${data.title} ${data.system.name}: check ${checksText(data)} failed at step ${data.failingStep} of ${data.commands.length}`;
}

export function pageData(data: ReportData): PageData {
  const steps: PageStep[] = data.steps.map((step) => {
    const page: { -readonly [K in keyof PageStep]: PageStep[K] } = {
      command: JSON.stringify(step.command),
      model: jsonText(step.model),
      impl: jsonText(step.impl),
      same: jsonEqual(step.model, step.impl),
    };
    if (step.implTrace !== undefined && step.implTrace !== null)
      page.implReturned = jsonText(step.implTrace);
    if (step.implVisual !== undefined) page.implVisual = step.implVisual;
    // A system without a model: the implementation's side only (its stand-in model has no opinion).
    if (data.modelless) return page;
    if (step.modelTrace !== undefined && step.modelTrace !== null)
      page.modelReturned = jsonText(step.modelTrace);
    if (step.modelVisual !== undefined) page.modelVisual = step.modelVisual;
    return page;
  });
  const first = data.steps.find(
    (step) => step.implVisual !== undefined || step.modelVisual !== undefined,
  );
  const kind = (first?.implVisual ?? first?.modelVisual)?.kind ?? 'none';
  const failing = data.steps[data.failingStep];
  const previous = data.steps[data.failingStep - 1];
  const ending =
    data.ending.kind === 'diff'
      ? [
          `diff of the observations at step ${data.failingStep} (model => implementation):`,
          ...data.ending.lines,
        ]
      : data.ending.kind === 'observations'
        ? [
            `observations at step ${data.failingStep}:`,
            `model ${jsonText(data.ending.model)}`,
            `implementation ${jsonText(data.ending.impl)}`,
          ]
        : data.failingStep < 0 || data.ending.kind === 'none'
          ? []
          : [
              `the observations at step ${data.failingStep} agree; the invariant above is what failed`,
            ];
  return {
    heading: pageHeading(data),
    title: data.title,
    system: data.system.name,
    summary: data.system.summary,
    config: JSON.stringify(data.config),
    checks: data.failingStep < 0 ? '' : checksText(data),
    message: data.message,
    notes: data.notes,
    failingStep: data.failingStep,
    modelless: data.modelless,
    steps,
    kind,
    highlights:
      failing === undefined
        ? []
        : findHighlights(data.failingStep, failing.modelVisual, failing.implVisual, {
            model: previous?.modelVisual,
            impl: previous?.implVisual,
          }),
    ending,
    text: renderReportText(data),
  };
}
