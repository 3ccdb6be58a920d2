/**
 * Regression files: `regressions/<system>/<slug>.json`, a shrunk failing sequence kept forever.
 *
 * A file replays without fast-check: it holds the config and the plain-data commands. It must
 * pass against the real implementation and fail against every mutant it names in `catches`, so
 * a regression never silently loses its teeth.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';
import { InputError, isPlainObject, type Json, type JsonObject } from './json.js';
import { runSequence, type ImplFactory, type RunOutcome } from './runner.js';
import { Int, parseWith, Str, Strict, Type, type Static, type TSchema } from './schema.js';
import type { AnyMutant, AnySystem, Command } from './system.js';
import { writeFileAtomic } from './files.js';
import { present } from '../assert.js';

/**
 * Regression file format. 2: files carry `"$schema"` (the path of schema/regression.schema.json
 * from the file), so an editor validates a hand-edited file; otherwise as format 1, which is
 * still read (and rewritten as format 2 by `regress migrate`).
 */
export const REGRESSION_FORMAT = 2;
/** Formats this tool reads. */
const READABLE_FORMATS = [1, 2] as const;

/** Where the regression file schema lives (written by `npm run schemas`). */
export const REGRESSION_SCHEMA_FILE = path.join(PACKAGE_ROOT, 'schema', 'regression.schema.json');
/** Where the campaign summary schema lives. */
export const SUMMARY_SCHEMA_FILE = path.join(
  PACKAGE_ROOT,
  'schema',
  'campaign-summary.schema.json',
);

export const RegressionOriginSchema = Strict({
  tool: Str({ description: "how the sequence was found: 'regress save', 'fuzz', 'hand-written'" }),
  seed: Type.Optional(Type.Union([Int(), Str()])),
  path: Type.Optional(Str({ description: 'fast-check replay path under that seed' })),
  date: Str({
    description: 'UTC day the file was written (SOURCE_DATE_EPOCH makes it reproducible)',
  }),
  mutant: Type.Optional(Str({ description: 'mutant the sequence was found against, if any' })),
  check: Type.Optional(Str({ description: 'the check that failed when it was found' })),
});
export type RegressionOrigin = Static<typeof RegressionOriginSchema>;

/** The fields every regression file has; `config` and `commands` are checked by the system's own schemas. */
function regressionFileSchema<Cfg extends TSchema, Cm extends TSchema, Sy extends TSchema>(
  config: Cfg,
  command: Cm,
  system: Sy,
) {
  return Strict({
    $schema: Type.Optional(
      Str({ description: 'path of the JSON Schema an editor validates this file with' }),
    ),
    format: Type.Union(READABLE_FORMATS.map((format) => Type.Literal(format))),
    system,
    description: Str(),
    config,
    origin: RegressionOriginSchema,
    catches: Type.Optional(
      Type.Array(Str(), { description: 'mutants this sequence must keep catching' }),
    ),
    commands: Type.Array(command, { minItems: 1 }),
  });
}

/** The system-independent part of a file: what is checked before the system is known. */
const RegressionEnvelopeSchema = regressionFileSchema(Type.Unknown(), Type.Unknown(), Str());

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

/**
 * The JSON Schema of regression files for these systems: one branch per system (`oneOf` on
 * `system`), each with that system's config schema and its commands' schemas.
 */
export function regressionJsonSchema(
  systems: readonly {
    readonly name: string;
    readonly configSchema: TSchema;
    readonly commandSchemas: Readonly<Record<string, TSchema>>;
  }[],
): JsonObject {
  const branches = systems.map((system) =>
    regressionFileSchema(
      system.configSchema,
      Type.Union(Object.values(system.commandSchemas)),
      Type.Literal(system.name),
    ),
  );
  return JSON.parse(
    JSON.stringify({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://gpu-memory-verifier.invalid/schema/regression.schema.json',
      title: 'gpu-memory-verifier regression file',
      description:
        'A shrunk failing sequence kept forever: it must pass against the implementation and fail against every mutant in catches.',
      oneOf: branches,
    }),
  ) as JsonObject;
}

export interface Lookup {
  findSystem(name: string): AnySystem | undefined;
  /** Mutant name -> the system it belongs to. */
  mutantSystems: ReadonlyMap<string, string>;
}

/** Parses and validates a regression file's text. Errors name the file and the JSON path. */
export function parseRegression(text: string, source: string, lookup: Lookup): Regression {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InputError(source, '$', `not valid JSON (${(error as Error).message})`);
  }
  if (
    isPlainObject(raw) &&
    Object.hasOwn(raw, 'format') &&
    !(READABLE_FORMATS as readonly unknown[]).includes(raw.format)
  ) {
    throw new InputError(
      source,
      '$.format',
      `unsupported format ${JSON.stringify(raw.format)}; this tool reads formats ${READABLE_FORMATS.join(' and ')}`,
    );
  }
  const top = parseWith(RegressionEnvelopeSchema, raw, source);
  const system = lookup.findSystem(top.system);
  if (system === undefined)
    throw new InputError(source, '$.system', `unknown system '${top.system}'`);
  const config: JsonObject = system.parseConfig(top.config, source, '$.config');
  const commands: Command[] = top.commands.map((command, index) =>
    system.parseCommand(command, source, `$.commands[${index}]`),
  );
  const catches = (top.catches ?? []).map((name, index) => {
    const mutantSystem = lookup.mutantSystems.get(name);
    if (mutantSystem === undefined)
      throw new InputError(source, `$.catches[${index}]`, `unknown mutant '${name}'`);
    if (mutantSystem !== system.name)
      throw new InputError(
        source,
        `$.catches[${index}]`,
        `mutant '${name}' belongs to system ${mutantSystem}, not ${system.name}`,
      );
    return name;
  });
  return {
    format: REGRESSION_FORMAT,
    system: system.name,
    description: top.description,
    config,
    commands,
    origin: top.origin,
    catches,
  };
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(
      file,
      '$',
      `cannot read file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
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
  systemFor: (name: string, rawConfig: unknown) => Promise<AnySystem | undefined>,
): Promise<{ regression: Regression; system: AnySystem; format: number }> {
  const text = readText(file);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined; // parseRegression reports the syntax error with its position
  }
  let system: AnySystem | undefined;
  if (isPlainObject(raw) && typeof raw.system === 'string') {
    try {
      system = await systemFor(raw.system, raw.config);
    } catch (error) {
      throw new InputError(file, '$.config', (error as Error).message);
    }
  }
  const regression = parseRegression(text, file, {
    findSystem: (name) => (system?.name === name ? system : undefined),
    mutantSystems,
  });
  const format =
    isPlainObject(raw) && typeof raw.format === 'number' ? raw.format : REGRESSION_FORMAT;
  return {
    regression,
    system: present(system, 'a regression file that parsed has its system', file),
    format,
  };
}

/** The `$schema` a file at `file` carries: the schema's path relative to the file, with forward slashes. */
export function schemaReference(file: string, schemaFile = REGRESSION_SCHEMA_FILE): string {
  return path
    .relative(path.dirname(path.resolve(file)), schemaFile)
    .split(path.sep)
    .join('/');
}

/**
 * Serialises a regression as the file `file` (whose location fixes its `$schema` path) with a
 * fixed key order, so the same finding gives the same bytes.
 */
export function serializeRegression(regression: Regression, file: string): string {
  const origin: JsonObject = { tool: regression.origin.tool };
  if (regression.origin.seed !== undefined) origin.seed = regression.origin.seed;
  if (regression.origin.path !== undefined) origin.path = regression.origin.path;
  origin.date = regression.origin.date;
  if (regression.origin.mutant !== undefined) origin.mutant = regression.origin.mutant;
  if (regression.origin.check !== undefined) origin.check = regression.origin.check;
  const value: JsonObject = {
    $schema: schemaReference(file),
    format: REGRESSION_FORMAT,
    system: regression.system,
    description: regression.description,
    config: regression.config,
    origin,
    catches: regression.catches,
    commands: regression.commands as Json[],
  };
  // One command per line keeps files diffable and readable.
  const head = JSON.stringify({ ...value, commands: [] }, null, 2).replace(
    /\n {2}"commands": \[\]\n\}$/,
    '',
  );
  const body = regression.commands.map((command) => `    ${JSON.stringify(command)}`).join(',\n');
  return `${head}\n  "commands": [\n${body}\n  ]\n}\n`;
}

/** Writes atomically (a crash leaves the old file or the new one); refuses to overwrite unless `force`. */
export function writeRegression(file: string, regression: Regression, force: boolean): void {
  if (existsSync(file) && !force) {
    throw new InputError(file, '$', 'file exists; pass --force to overwrite');
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, serializeRegression(regression, file));
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
  system: AnySystem,
  mutants: readonly AnyMutant[],
  implFactory?: ImplFactory,
): ReplayResult {
  const real = runSequence(
    system,
    regression.config,
    regression.commands,
    implFactory ? { implFactory } : {},
  );
  const results = regression.catches.map((name) => {
    const mutant = mutants.find((candidate) => candidate.name === name);
    if (mutant === undefined) throw new InputError(file, '$.catches', `unknown mutant '${name}'`);
    return {
      name,
      outcome: runSequence(system, regression.config, regression.commands, {
        implFactory: mutant.createImpl,
      }),
    };
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
  if (!result.real.ok)
    problems.push(
      `fails against the implementation: ${result.real.failure.check} at step ${result.real.failure.step}`,
    );
  const { origin } = result.regression;
  for (const entry of result.mutants) {
    if (entry.outcome.ok) problems.push(`${entry.name} is no longer caught`);
    else if (
      origin.mutant === entry.name &&
      origin.check !== undefined &&
      entry.outcome.failure.check !== origin.check
    ) {
      problems.push(
        `${entry.name} is now caught first by ${entry.outcome.failure.check}, not ${origin.check}`,
      );
    }
  }
  return problems;
}

/** The UTC day for `origin.date`; SOURCE_DATE_EPOCH (seconds) pins it for reproducible files. */
export function originDate(nowMs: number, sourceDateEpoch: string | undefined): string {
  const ms =
    sourceDateEpoch !== undefined && /^\d+$/.test(sourceDateEpoch)
      ? Number(sourceDateEpoch) * 1000
      : nowMs;
  return new Date(ms).toISOString().slice(0, 10);
}
