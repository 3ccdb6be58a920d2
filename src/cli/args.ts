/**
 * The one argument parser of every CLI and benchmark, built on `node:util` parseArgs (strict).
 *
 * Every command line the project accepts is declared in COMMANDS below (its options, their
 * types, whether it takes positionals), so they all behave the same, and one test checks them:
 * - `-h`/`--help` anywhere before `--` prints that command's help and exits 0;
 * - an unknown option, a missing value, a value given to a flag, an unexpected positional, or a
 *   bad integer, number or duration is a UsageError: one line `error: ...` naming the option
 *   with a hint to use --help, exit code 2 (runMain, or parseOrExit for the benchmarks);
 * - `--name value` and `--name=value` both work; a value may start with '-' when it is a
 *   negative number (`--seed -5`), otherwise write `--name=-value`;
 * - integers are checked by intOption, durations by parseDuration, positive numbers by
 *   numberOption, all at parse time, before any work starts.
 * Defaults and checks that depend on several options stay with the command.
 */
import { parseArgs as parseArgv } from 'node:util';
import { InputError } from '../harness/json.js';
import { ModuleLoadError } from '../load-module.js';
import { UserAllocatorError } from '../user-allocator-module.js';
import { ReplayPathError } from '../harness/property.js';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `-h`/`--help` was given: runMain prints `text` on stdout and exits 0. */
export class HelpRequested extends Error {
  constructor(readonly text: string) {
    super('help requested');
    this.name = 'HelpRequested';
  }
}

// --- option tables ---------------------------------------------------------------------------

export type OptionSpec =
  | { readonly type: 'boolean' }
  | { readonly type: 'string' }
  /** A safe integer in min..max. */
  | { readonly type: 'int'; readonly min: number; readonly max?: number }
  /** Comma-separated integers, each in min..max. */
  | { readonly type: 'int-list'; readonly min: number; readonly max?: number }
  /** A positive finite number (fractions allowed). */
  | { readonly type: 'number' }
  /** 30s, 45m, 8h, 1500ms; the value is in milliseconds. */
  | { readonly type: 'duration' };

export type OptionTable = { readonly [name: string]: OptionSpec };

export interface CommandSpec<T extends OptionTable = OptionTable> {
  /** How users invoke the command, for the hint of an error: 'npm run regress -- save'. */
  readonly usage: string;
  /** Every option but help, which every command has (`-h`/`--help`). */
  readonly options: T;
  /** Whether the command takes positional arguments (files, a subcommand's name). */
  readonly positionals: boolean;
}

type ValueOf<S extends OptionSpec> = S extends { readonly type: 'boolean' }
  ? boolean
  : S extends { readonly type: 'string' }
    ? string | undefined
    : S extends { readonly type: 'int-list' }
      ? number[] | undefined
      : number | undefined;

/** Parsed values: flags are booleans; other options are undefined when not given. */
export type OptionValues<T extends OptionTable> = { readonly [K in keyof T]: ValueOf<T[K]> };

export interface ParsedArgs<T extends OptionTable = OptionTable> {
  readonly positionals: string[];
  readonly values: OptionValues<T>;
}

const SEED_MIN = -(2 ** 31);

/**
 * Every command line of the project. The commands' help texts live with the commands; a test
 * runs the parser on each of these tables.
 */
export const COMMANDS = {
  fuzz: {
    usage: 'npm run fuzz --',
    positionals: false,
    options: {
      system: { type: 'string' },
      mutant: { type: 'string' },
      allocator: { type: 'string' },
      exec: { type: 'string' },
      seed: { type: 'string' },
      runs: { type: 'int', min: 1 },
      budget: { type: 'duration' },
      workers: { type: 'int', min: 1, max: 64 },
      shard: { type: 'string' },
      json: { type: 'string' },
      html: { type: 'string' },
      out: { type: 'string' },
      resume: { type: 'string' },
      checkpoint: { type: 'duration' },
      timeout: { type: 'duration' },
      'stop-on-first': { type: 'boolean' },
      'no-preflight': { type: 'boolean' },
      'max-false-oom-share': { type: 'number' },
      config: { type: 'string' },
    },
  },
  'fuzz merge': {
    usage: 'npm run fuzz -- merge',
    positionals: true,
    options: { json: { type: 'string' } },
  },
  /** The verb only: `regress save|replay|list`, each parsed with its own table. */
  regress: { usage: 'npm run regress --', positionals: true, options: {} },
  'regress save': {
    usage: 'npm run regress -- save',
    positionals: false,
    options: {
      system: { type: 'string' },
      seed: { type: 'int', min: SEED_MIN },
      path: { type: 'string' },
      mutant: { type: 'string' },
      slug: { type: 'string' },
      description: { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean' },
      allocator: { type: 'string' },
      finding: { type: 'string' },
      shrink: { type: 'boolean' },
      timeout: { type: 'duration' },
      config: { type: 'string' },
    },
  },
  'regress replay': {
    usage: 'npm run regress -- replay',
    positionals: true,
    options: { config: { type: 'string' }, timeout: { type: 'duration' } },
  },
  'regress list': {
    usage: 'npm run regress -- list',
    positionals: true,
    options: { config: { type: 'string' } },
  },
  'regress show': {
    usage: 'npm run regress -- show',
    positionals: true,
    options: { config: { type: 'string' }, html: { type: 'string' } },
  },
  'regress migrate': {
    usage: 'npm run regress -- migrate',
    positionals: true,
    options: { config: { type: 'string' } },
  },
  mutants: {
    usage: 'npm run mutants --',
    positionals: false,
    options: {
      system: { type: 'string' },
      mutant: { type: 'string' },
      seed: { type: 'int', min: SEED_MIN },
      runs: { type: 'int', min: 1 },
      json: { type: 'string' },
      commands: { type: 'boolean' },
      config: { type: 'string' },
    },
  },
  schemas: {
    usage: 'npm run schemas --',
    positionals: false,
    options: { out: { type: 'string' }, config: { type: 'string' } },
  },
  /** The benchmark's name only: `bench NAME`, each benchmark parsed with its own table. */
  bench: { usage: 'npm run bench --', positionals: true, options: {} },
  'bench alloc': {
    usage: 'npm run bench -- alloc',
    positionals: false,
    options: {
      live: { type: 'int-list', min: 1 },
      seconds: { type: 'number' },
      only: { type: 'string' },
      workload: { type: 'string' },
      /** Internal: the child process measuring one contestant. */
      case: { type: 'string' },
    },
  },
  'bench campaign': {
    usage: 'npm run bench -- campaign',
    positionals: false,
    options: {
      systems: { type: 'string' },
      runs: { type: 'int', min: 1 },
      seconds: { type: 'number' },
      repeat: { type: 'int', min: 1 },
    },
  },
  'bench residency-manager': {
    usage: 'npm run bench -- residency-manager',
    positionals: false,
    options: {
      seconds: { type: 'number' },
      objects: { type: 'int', min: 1 },
    },
  },
  'bench native': {
    usage: 'npm run bench -- native',
    positionals: false,
    options: { runs: { type: 'int', min: 1 } },
  },
  'bench native-residency': {
    usage: 'npm run bench -- native-residency',
    positionals: false,
    options: {
      runs: { type: 'int', min: 1 },
      pair: { type: 'string' },
      passes: { type: 'int', min: 2 },
    },
  },
  'bench residency-set': {
    usage: 'npm run bench -- residency-set',
    positionals: false,
    options: {},
  },
  'bench upload-pages': { usage: 'npm run bench -- upload-pages', positionals: false, options: {} },
} as const satisfies Record<string, CommandSpec>;

// --- value checks ----------------------------------------------------------------------------

/** An integer option's value: a safe integer in min..max, or a UsageError naming the option. */
export function intOption(
  name: string,
  raw: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got '${raw}'`);
  }
  return value;
}

/** A positive finite number (`--seconds 0.5`), or a UsageError naming the option. */
export function numberOption(name: string, raw: string): number {
  const value = Number(raw);
  if (
    !/^(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(raw.trim()) ||
    !Number.isFinite(value) ||
    value <= 0
  ) {
    throw new UsageError(`--${name} must be a positive number, got '${raw}'`);
  }
  return value;
}

/** Durations: 30s, 45m, 8h, 1500ms; returns milliseconds. */
export function parseDuration(raw: string, name = 'budget'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw.trim());
  if (match === null) throw new UsageError(`--${name} must look like 30s, 45m or 8h, got '${raw}'`);
  const value = Number(match[1]);
  const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
  if (!(value > 0)) throw new UsageError(`--${name} must be positive, got '${raw}'`);
  return value * unitMs;
}

function convert(name: string, spec: OptionSpec, raw: string): string | number | number[] {
  switch (spec.type) {
    case 'int':
      return intOption(name, raw, spec.min, spec.max);
    case 'int-list':
      return raw.split(',').map((item) => intOption(name, item.trim(), spec.min, spec.max));
    case 'number':
      return numberOption(name, raw);
    case 'duration':
      return parseDuration(raw, name);
    default:
      return raw;
  }
}

// --- parsing ---------------------------------------------------------------------------------

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/** The arguments before `--` (everything after it is a positional). */
function optionArgs(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end < 0 ? argv : argv.slice(0, end);
}

/**
 * Parses `argv` against the command's table. Throws HelpRequested(help) for -h/--help (which
 * wins over any other mistake on the line) and a one-line UsageError for any mistake.
 */
export function parseCommand<T extends OptionTable>(
  spec: CommandSpec<T>,
  argv: readonly string[],
  help: string | (() => string),
): ParsedArgs<T> {
  const hint = ` (see ${spec.usage} --help)`;
  if (optionArgs(argv).some((arg) => arg === '--help' || arg === '-h'))
    throw new HelpRequested(typeof help === 'string' ? help : help());

  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    ...HELP_OPTION,
  };
  for (const [name, option] of Object.entries(spec.options))
    options[name] = { type: option.type === 'boolean' ? 'boolean' : 'string' };

  // A pass that never throws: its tokens name the culprit of a strict-mode error, and let a
  // negative number be a value (`--seed -5`), which strict mode would call ambiguous.
  const tokens = parseArgv({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  }).tokens as Token[];
  const args = [...argv];
  for (const token of [...tokens].reverse()) {
    if (
      token.kind === 'option' &&
      Object.hasOwn(options, token.name) &&
      options[token.name]?.type === 'string' &&
      token.inlineValue === false &&
      /^-\.?\d/.test(token.value ?? '')
    ) {
      args.splice(token.index, 2, `${token.rawName}=${token.value}`);
    }
  }

  let parsed: ReturnType<typeof parseArgv>;
  try {
    parsed = parseArgv({ args, options, strict: true, allowPositionals: spec.positionals });
  } catch (error) {
    if (!String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) throw error;
    throw new UsageError(diagnose(tokens, options, spec.positionals, error as Error) + hint);
  }

  const values: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(spec.options)) {
    const raw = (parsed.values as Record<string, string | boolean | undefined>)[name];
    if (option.type === 'boolean') values[name] = raw === true;
    else if (raw !== undefined) {
      try {
        values[name] = convert(name, option, raw as string);
      } catch (error) {
        if (error instanceof UsageError) throw new UsageError(error.message + hint);
        throw error;
      }
    }
  }
  return { positionals: parsed.positionals, values: values as OptionValues<T> };
}

/** The tokens of node's parseArgs (`tokens: true`), as far as they are used here. */
type Token =
  | {
      readonly kind: 'option';
      readonly name: string;
      readonly rawName: string;
      readonly index: number;
      readonly value?: string;
      readonly inlineValue?: boolean;
    }
  | { readonly kind: 'positional'; readonly index: number; readonly value: string }
  | { readonly kind: 'option-terminator'; readonly index: number };

/** One line naming what strict parsing rejected, found from the tokens of the loose pass. */
function diagnose(
  tokens: readonly Token[],
  options: Record<string, { type: 'string' | 'boolean' }>,
  positionals: boolean,
  error: Error,
): string {
  for (const token of tokens) {
    if (token.kind === 'option-terminator') break;
    if (token.kind === 'positional') {
      if (!positionals) return `unexpected argument '${token.value}'`;
      continue;
    }
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) return `unknown option ${token.rawName}`;
    const name = token.rawName.startsWith('--') ? token.rawName : `--${token.name}`;
    if (option.type === 'boolean' && token.value !== undefined) return `${name} takes no value`;
    if (option.type === 'string') {
      if (token.value === undefined) return `${name} needs a value`;
      if (!token.inlineValue && token.value.startsWith('-'))
        return `${name} needs a value, not '${token.value}' (write ${name}=VALUE for a value starting with '-')`;
    }
  }
  for (const token of tokens) {
    if (token.kind === 'positional' && !positionals) return `unexpected argument '${token.value}'`;
  }
  return error.message.split('\n')[0]!;
}

// --- running ---------------------------------------------------------------------------------

/** Prints help or a user mistake; returns the exit code, or undefined for any other error. */
export function reportCliError(error: unknown): number | undefined {
  if (error instanceof HelpRequested) {
    console.log(error.text);
    return 0;
  }
  if (
    error instanceof UsageError ||
    error instanceof InputError ||
    error instanceof ReplayPathError ||
    error instanceof ModuleLoadError ||
    error instanceof UserAllocatorError
  ) {
    console.error(`error: ${error.message}`);
    return 2;
  }
  return undefined;
}

/**
 * For scripts without a main function (the benchmarks): runs `body`; help or a user mistake
 * it throws is printed as runMain prints it, and the process exits (0 or 2).
 */
export function orExit<R>(body: () => R): R {
  try {
    return body();
  } catch (error) {
    const code = reportCliError(error);
    if (code === undefined) throw error;
    process.exit(code);
  }
}

/** parseCommand for the benchmarks: help exits 0, a mistake prints one line and exits 2. */
export function parseOrExit<T extends OptionTable>(
  spec: CommandSpec<T>,
  help: string | (() => string),
  argv: readonly string[] = process.argv.slice(2),
): ParsedArgs<T> {
  return orExit(() => parseCommand(spec, argv, help));
}

/** Runs a CLI main: help exits 0; usage and input errors print one line and exit 2; findings exit 1. */
export async function runMain(main: () => Promise<number>): Promise<void> {
  // A closed pipe (`npm run fuzz | head`) ends the output, not the process with a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  try {
    process.exitCode = await main();
  } catch (error) {
    const code = reportCliError(error);
    if (code === undefined) throw error;
    process.exitCode = code;
  }
}
