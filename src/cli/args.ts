/**
 * A small argument parser for the CLIs: `--name value`, `--name=value`, boolean flags and
 * positionals. User mistakes become a UsageError: one line on stderr and exit code 2, never a
 * stack trace.
 */
import { InputError } from '../harness/json';
import { ReplayPathError } from '../harness/property';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ParsedArgs {
  readonly positionals: string[];
  readonly options: Map<string, string>;
  readonly flags: Set<string>;
}

/**
 * `valued` names options that take a value; `booleans` names flags. Anything else is an error.
 */
export function parseArgs(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    if (booleans.includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
    } else if (valued.includes(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
      options.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positionals, options, flags };
}

export function intOption(args: ParsedArgs, name: string, min: number): number | undefined {
  const raw = args.options.get(name);
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    throw new UsageError(`--${name} must be an integer >= ${min}, got '${raw}'`);
  }
  return Number(raw);
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

/** Runs a CLI main: usage and input errors print one line and exit 2; findings exit 1. */
export async function runMain(main: () => Promise<number>): Promise<void> {
  // A closed pipe (`npm run fuzz | head`) ends the output, not the process with a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  try {
    process.exitCode = await main();
  } catch (error) {
    if (error instanceof UsageError || error instanceof InputError || error instanceof ReplayPathError) {
      console.error(`error: ${error.message}`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
}
