/**
 * Regression files: `regressions/<system>/<slug>.json`, a shrunk failing sequence kept forever.
 *
 * A file replays without fast-check: it holds the config and the plain-data commands. It must
 * pass against the real implementation and fail against every mutant it names in `catches`, so
 * a regression never silently loses its teeth.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InputError, isPlainObject, parseFields, type Json, type JsonObject } from './json';
import { runSequence, type ImplFactory, type RunOutcome } from './runner';
import type { Command, Mutant, SystemDef } from './system';

export const REGRESSION_FORMAT = 1;

export interface RegressionOrigin {
  /** How the sequence was found: 'regress save', 'fuzz', 'hand-written'. */
  readonly tool: string;
  readonly seed?: number | string;
  readonly path?: string;
  /** UTC day the file was written (SOURCE_DATE_EPOCH makes it reproducible). */
  readonly date: string;
  /** Mutant the sequence was found against, if any. */
  readonly mutant?: string;
  /** The check that failed when it was found. */
  readonly check?: string;
}

export interface Regression {
  readonly format: number;
  readonly system: string;
  readonly description: string;
  readonly config: JsonObject;
  readonly commands: Command[];
  readonly origin: RegressionOrigin;
  /** Mutants this sequence must keep catching. */
  readonly catches: string[];
}

export interface Lookup {
  findSystem(name: string): SystemDef | undefined;
  /** Mutant name -> the system it belongs to. */
  mutantSystems: ReadonlyMap<string, string>;
}

/** Validates one command against the system's op schemas. */
export function parseCommand(system: SystemDef, source: string, at: string, raw: unknown): Command {
  if (!isPlainObject(raw)) throw new InputError(source, at, `expected a command object, got ${JSON.stringify(raw)}`);
  const op = raw.op;
  if (typeof op !== 'string') throw new InputError(source, `${at}.op`, 'missing or non-string op');
  const schema = system.ops[op];
  if (schema === undefined) {
    throw new InputError(source, `${at}.op`, `unknown op '${op}' for system ${system.name}; known: ${Object.keys(system.ops).join(', ')}`);
  }
  return parseFields(source, at, raw, schema, ['op']) as Command;
}

export function parseConfig(system: SystemDef, source: string, at: string, raw: unknown): JsonObject {
  const config = parseFields(source, at, raw, system.configSchema);
  const problem = system.validateConfig?.(config) ?? null;
  if (problem !== null) throw new InputError(source, at, problem);
  return config;
}

/** Parses and validates a regression file's text. Errors name the file and the JSON path. */
export function parseRegression(text: string, source: string, lookup: Lookup): Regression {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InputError(source, '$', `not valid JSON (${(error as Error).message})`);
  }
  const top = parseFields(source, '$', raw, { format: 'int', system: 'string', description: 'string' }, [
    'config',
    'commands',
    'origin',
    'catches',
  ]);
  if (top.format !== REGRESSION_FORMAT) {
    throw new InputError(source, '$.format', `unsupported format ${top.format}; this tool reads format ${REGRESSION_FORMAT}`);
  }
  const system = lookup.findSystem(top.system as string);
  if (system === undefined) throw new InputError(source, '$.system', `unknown system '${top.system}'`);
  const config = parseConfig(system, source, '$.config', top.config);
  if (!Array.isArray(top.commands)) throw new InputError(source, '$.commands', 'expected an array of commands');
  if (top.commands.length === 0) throw new InputError(source, '$.commands', 'a regression needs at least one command');
  const commands = top.commands.map((command, index) => parseCommand(system, source, `$.commands[${index}]`, command));
  const origin = parseFields(source, '$.origin', top.origin, { tool: 'string', date: 'string' }, ['seed', 'path', 'mutant', 'check']);
  const catchesRaw = top.catches ?? [];
  if (!Array.isArray(catchesRaw)) throw new InputError(source, '$.catches', 'expected an array of mutant names');
  const catches = catchesRaw.map((name, index) => {
    if (typeof name !== 'string') throw new InputError(source, `$.catches[${index}]`, 'expected a mutant name');
    const mutantSystem = lookup.mutantSystems.get(name);
    if (mutantSystem === undefined) throw new InputError(source, `$.catches[${index}]`, `unknown mutant '${name}'`);
    if (mutantSystem !== system.name) throw new InputError(source, `$.catches[${index}]`, `mutant '${name}' belongs to system ${mutantSystem}, not ${system.name}`);
    return name;
  });
  return {
    format: REGRESSION_FORMAT,
    system: system.name,
    description: top.description as string,
    config,
    commands,
    origin: origin as unknown as RegressionOrigin,
    catches,
  };
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(file, '$', `cannot read file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

export function readRegression(file: string, lookup: Lookup): Regression {
  return parseRegression(readText(file), file, lookup);
}

/**
 * Reads a regression file whose system may have to be built from its config (a user's
 * allocator module): `systemFor` resolves it; failures name the file and the config.
 */
export async function loadRegression(
  file: string,
  mutantSystems: ReadonlyMap<string, string>,
  systemFor: (name: string, rawConfig: unknown) => Promise<SystemDef | undefined>,
): Promise<{ regression: Regression; system: SystemDef }> {
  const text = readText(file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined; // parseRegression reports the syntax error with its position
  }
  let system: SystemDef | undefined;
  if (isPlainObject(raw) && typeof raw.system === 'string') {
    try {
      system = await systemFor(raw.system, raw.config);
    } catch (error) {
      throw new InputError(file, '$.config', (error as Error).message);
    }
  }
  const regression = parseRegression(text, file, { findSystem: (name) => (system?.name === name ? system : undefined), mutantSystems });
  return { regression, system: system! };
}

/** Serialises a regression with a fixed key order, so the same finding gives the same bytes. */
export function serializeRegression(regression: Regression): string {
  const origin: JsonObject = { tool: regression.origin.tool };
  if (regression.origin.seed !== undefined) origin.seed = regression.origin.seed;
  if (regression.origin.path !== undefined) origin.path = regression.origin.path;
  origin.date = regression.origin.date;
  if (regression.origin.mutant !== undefined) origin.mutant = regression.origin.mutant;
  if (regression.origin.check !== undefined) origin.check = regression.origin.check;
  const value: JsonObject = {
    format: regression.format,
    system: regression.system,
    description: regression.description,
    config: regression.config,
    origin,
    catches: regression.catches,
    commands: regression.commands as Json[],
  };
  // One command per line keeps files diffable and readable.
  const head = JSON.stringify({ ...value, commands: [] }, null, 2).replace(/\n {2}"commands": \[\]\n\}$/, '');
  const body = regression.commands.map((command) => `    ${JSON.stringify(command)}`).join(',\n');
  return `${head}\n  "commands": [\n${body}\n  ]\n}\n`;
}

/** Writes atomically (temp file + rename); refuses to overwrite unless `force`. */
export function writeRegression(file: string, regression: Regression, force: boolean): void {
  if (existsSync(file) && !force) {
    throw new InputError(file, '$', 'file exists; pass --force to overwrite');
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, serializeRegression(regression));
  renameSync(temp, file);
}

/** 32-bit FNV-1a of a string, as 8 hex digits: stable slugs for findings. */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

export function regressionPath(root: string, system: string, slug: string): string {
  return path.join(root, system, `${slug}.json`);
}

export interface ReplayResult {
  readonly file: string;
  readonly regression: Regression;
  /** Outcome against the real implementation: must be ok. */
  readonly real: RunOutcome;
  /** Outcome against each mutant named in `catches`: each must fail. */
  readonly mutants: { readonly name: string; readonly outcome: RunOutcome }[];
}

export function replayRegression(
  file: string,
  regression: Regression,
  system: SystemDef,
  mutants: readonly Mutant[],
  implFactory?: ImplFactory,
): ReplayResult {
  const real = runSequence(system, regression.config, regression.commands, implFactory ? { implFactory } : {});
  const results = regression.catches.map((name) => {
    const mutant = mutants.find((candidate) => candidate.name === name);
    if (mutant === undefined) throw new InputError(file, '$.catches', `unknown mutant '${name}'`);
    return { name, outcome: runSequence(system, regression.config, regression.commands, { implFactory: mutant.createImpl }) };
  });
  return { file, regression, real, mutants: results };
}

/**
 * What is wrong with a replay, or [] if it holds: the real implementation passes, every named
 * mutant fails, and the mutant the file was found against still fails first with the check that
 * caught it then (a fixed, seed-independent proof that this check fires).
 */
export function replayProblems(result: ReplayResult): string[] {
  const problems: string[] = [];
  if (!result.real.ok) problems.push(`fails against the implementation: ${result.real.failure.check} at step ${result.real.failure.step}`);
  const { origin } = result.regression;
  for (const entry of result.mutants) {
    if (entry.outcome.ok) problems.push(`${entry.name} is no longer caught`);
    else if (origin.mutant === entry.name && origin.check !== undefined && entry.outcome.failure.check !== origin.check) {
      problems.push(`${entry.name} is now caught first by ${entry.outcome.failure.check}, not ${origin.check}`);
    }
  }
  return problems;
}

/** The UTC day for `origin.date`; SOURCE_DATE_EPOCH (seconds) pins it for reproducible files. */
export function originDate(nowMs: number, sourceDateEpoch: string | undefined): string {
  const ms = sourceDateEpoch !== undefined && /^\d+$/.test(sourceDateEpoch) ? Number(sourceDateEpoch) * 1000 : nowMs;
  return new Date(ms).toISOString().slice(0, 10);
}
