/**
 * The command lines of every CLI and benchmark go through one parser (src/cli/args.ts) and behave
 * the same: -h/--help is help, and an unknown option, a missing value, a value for a flag, a
 * stray positional or a bad number is a one-line UsageError naming the option, with a hint to
 * use --help.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  COMMANDS,
  HelpRequested,
  parseCommand,
  reportCliError,
  UsageError,
  type CommandSpec,
} from '../src/cli/args.js';

const ROOT = path.resolve(__dirname, '..');
const ENTRIES = Object.entries(COMMANDS) as [string, CommandSpec][];

/** What parsing `argv` does: help, a usage error's message, or the parsed values. */
function outcome(
  spec: CommandSpec,
  argv: string[],
):
  | { help: string }
  | { error: string }
  | { values: Record<string, unknown>; positionals: string[] } {
  try {
    const parsed = parseCommand(spec, argv, 'HELP TEXT');
    return { values: { ...parsed.values }, positionals: parsed.positionals };
  } catch (error) {
    if (error instanceof HelpRequested) return { help: error.text };
    if (error instanceof UsageError) return { error: error.message };
    throw error;
  }
}

/** A usage error: one line, ending with the hint to that command's --help. */
function usageError(spec: CommandSpec, argv: string[]): string {
  const result = outcome(spec, argv);
  expect(result, JSON.stringify(argv)).toHaveProperty('error');
  const message = (result as { error: string }).error;
  expect(message).not.toContain('\n');
  expect(message.endsWith(` (see ${spec.usage} --help)`), message).toBe(true);
  return message;
}

const BAD_VALUES: Record<string, string> = {
  int: 'x',
  'int-list': '1,x',
  number: 'x',
  duration: '5',
};

describe.each(ENTRIES)('%s', (_name, spec) => {
  it('prints help for -h and --help, even after other options or mistakes', () => {
    for (const argv of [['-h'], ['--help'], ['--no-such-option', '--help'], ['stray', '-h']]) {
      expect(outcome(spec, argv), JSON.stringify(argv)).toEqual({ help: 'HELP TEXT' });
    }
  });

  it('takes --help after -- as an argument, not as help', () => {
    const result = outcome(spec, ['--', '--help']);
    if (spec.positionals) expect(result).toMatchObject({ positionals: ['--help'] });
    else expect(usageError(spec, ['--', '--help'])).toMatch(/^unexpected argument '--help'/);
  });

  it('rejects an unknown option, naming it', () => {
    expect(usageError(spec, ['--no-such-option'])).toMatch(/^unknown option --no-such-option /);
    expect(usageError(spec, ['--no-such-option=1'])).toMatch(/^unknown option --no-such-option /);
    expect(usageError(spec, ['-x'])).toMatch(/^unknown option -x /);
    expect(usageError(spec, ['--constructor'])).toMatch(/^unknown option --constructor /);
  });

  it(spec.positionals ? 'takes positional arguments' : 'rejects positional arguments', () => {
    if (spec.positionals)
      expect(outcome(spec, ['a', 'b'])).toMatchObject({ positionals: ['a', 'b'] });
    else expect(usageError(spec, ['stray'])).toMatch(/^unexpected argument 'stray'/);
  });

  it('parses no arguments to no values', () => {
    const result = outcome(spec, []);
    expect(result).toHaveProperty('values');
    for (const [name, option] of Object.entries(spec.options)) {
      expect((result as { values: Record<string, unknown> }).values[name]).toBe(
        option.type === 'boolean' ? false : undefined,
      );
    }
  });

  for (const [name, option] of Object.entries(spec.options)) {
    if (option.type === 'boolean') {
      it(`--${name} is a flag that takes no value`, () => {
        expect(outcome(spec, [`--${name}`])).toMatchObject({ values: { [name]: true } });
        expect(usageError(spec, [`--${name}=yes`])).toMatch(
          new RegExp(`^--${name} takes no value`),
        );
      });
      continue;
    }
    it(`--${name} needs a value`, () => {
      expect(usageError(spec, [`--${name}`])).toMatch(new RegExp(`^--${name} needs a value`));
      // The next option is not taken for the value.
      expect(usageError(spec, [`--${name}`, '--help-me'])).toMatch(
        new RegExp(`^--${name} needs a value`),
      );
    });
    const bad = BAD_VALUES[option.type];
    if (bad !== undefined) {
      it(`--${name} rejects a bad ${option.type}, naming the option`, () => {
        expect(usageError(spec, [`--${name}`, bad])).toMatch(new RegExp(`^--${name} must .*got '`));
        expect(usageError(spec, [`--${name}=${bad}`])).toMatch(new RegExp(`^--${name} must `));
      });
    }
  }
});

describe('values', () => {
  it('converts integers, lists, numbers and durations, in both spellings', () => {
    expect(
      outcome(COMMANDS.fuzz, [
        '--runs',
        '7',
        '--budget=2m',
        '--checkpoint',
        '1500ms',
        '--workers=3',
        '--seed',
        'abc',
      ]),
    ).toEqual({
      values: expect.objectContaining({
        runs: 7,
        budget: 120_000,
        checkpoint: 1500,
        workers: 3,
        seed: 'abc',
      }),
      positionals: [],
    });
    expect(
      outcome(COMMANDS['bench alloc'], ['--live', '100,2000', '--seconds', '0.5']),
    ).toMatchObject({ values: { live: [100, 2000], seconds: 0.5 } });
    expect(outcome(COMMANDS['fuzz merge'], ['a.json', '--json', 'out.json', 'b.json'])).toEqual({
      values: { json: 'out.json' },
      positionals: ['a.json', 'b.json'],
    });
  });

  it('takes a negative number as a value (regress save --seed -5, as property failures print it)', () => {
    expect(outcome(COMMANDS['regress save'], ['--seed', '-5', '--path', '0:1'])).toMatchObject({
      values: { seed: -5, path: '0:1' },
    });
    expect(outcome(COMMANDS['regress save'], ['--seed=-5'])).toMatchObject({
      values: { seed: -5 },
    });
    expect(usageError(COMMANDS['regress save'], ['--seed', `-${2 ** 31 + 1}`])).toMatch(
      /^--seed must be an integer >= -2147483648/,
    );
    expect(usageError(COMMANDS.fuzz, ['--runs', '-3'])).toMatch(
      /^--runs must be an integer >= 1, got '-3'/,
    );
    expect(usageError(COMMANDS.fuzz, ['--budget', '-5m'])).toMatch(
      /^--budget must look like 30s, 45m or 8h/,
    );
  });

  it('checks ranges and forms', () => {
    expect(usageError(COMMANDS.fuzz, ['--workers', '65'])).toMatch(
      /^--workers must be an integer in 1\.\.64, got '65'/,
    );
    expect(usageError(COMMANDS.fuzz, ['--runs', '1.5'])).toMatch(/^--runs must be an integer >= 1/);
    expect(usageError(COMMANDS.fuzz, ['--runs', '9007199254740993'])).toMatch(
      /^--runs must be an integer/,
    );
    expect(usageError(COMMANDS['bench campaign'], ['--seconds', '0'])).toMatch(
      /^--seconds must be a positive number, got '0'/,
    );
    expect(usageError(COMMANDS.mutants, ['--seed', ''])).toMatch(/^--seed must be an integer/);
  });

  it('keeps the last of a repeated option', () => {
    expect(outcome(COMMANDS.mutants, ['--runs', '5', '--runs', '6'])).toMatchObject({
      values: { runs: 6 },
    });
  });
});

describe('every command line is declared and used', () => {
  const sources = [
    ...readdirSync(path.join(ROOT, 'src', 'cli')).map((file) =>
      path.join(ROOT, 'src', 'cli', file),
    ),
    ...readdirSync(path.join(ROOT, 'bench')).map((file) => path.join(ROOT, 'bench', file)),
  ]
    .filter((file) => file.endsWith('.ts') && !file.endsWith('args.ts'))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');

  it.each(Object.keys(COMMANDS))('%s is parsed by its command', (name) => {
    const used =
      sources.includes(`COMMANDS['${name}']`) ||
      (/^[a-z]+$/.test(name) && sources.includes(`COMMANDS.${name},`));
    expect(used, `no CLI or benchmark parses with COMMANDS['${name}']`).toBe(true);
  });

  it('each benchmark has its table', () => {
    const benches = readdirSync(path.join(ROOT, 'bench')).filter(
      (file) => file.endsWith('.ts') && file !== 'run.ts' && !file.startsWith('_'),
    );
    expect(benches.length).toBeGreaterThan(0);
    for (const file of benches)
      expect(Object.keys(COMMANDS)).toContain(`bench ${file.slice(0, -3)}`);
  });
});

describe('reportCliError', () => {
  afterEach(() => vi.restoreAllMocks());

  it('prints help on stdout (exit 0) and a usage error as one stderr line (exit 2)', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(reportCliError(new HelpRequested('the help'))).toBe(0);
    expect(log).toHaveBeenCalledWith('the help');
    expect(reportCliError(new UsageError('bad'))).toBe(2);
    expect(error).toHaveBeenCalledWith('error: bad');
    expect(reportCliError(new Error('a bug'))).toBeUndefined();
  });
});
