#!/usr/bin/env node
/**
 * `gpumv`: the one command of the installed package, with the tools as subcommands. Each
 * subcommand is its own module (src/cli/<name>.ts, also run by the repo's npm scripts); this
 * entry picks it, and, outside this repository (where `npm run fuzz --` does not exist), rewrites
 * that spelling in what the tools print as `npx gpumv fuzz`.
 */
import { readFileSync } from 'node:fs';
import { commandContext, respellCommands } from '../harness/command-line.js';
import path from 'node:path';

const SUBCOMMANDS: Readonly<Record<string, { readonly module: string; readonly summary: string }>> =
  {
    fuzz: {
      module: 'fuzz',
      summary:
        'fixed-seed fuzz campaigns of your systems and allocators (findings, summary, resume, shards)',
    },
    regress: {
      module: 'regress',
      summary: 'save, replay, show, list and migrate regression files',
    },
    mutants: {
      module: 'mutants',
      summary: 'run every mutant against its system: caught, by which check, how fast',
    },
    schemas: {
      module: 'schemas',
      summary: 'write the JSON schemas of regression files and campaign summaries',
    },
    bench: {
      module: '../../bench/run',
      summary: 'benchmarks: implementation vs model (vs peers), measured in one run',
    },
  };

const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

function version(): string {
  for (const candidate of ['../../package.json', '../../../package.json']) {
    try {
      return (
        JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }
      ).version;
    } catch {
      // the next candidate (sources vs compiled layout)
    }
  }
  return 'unknown';
}

const GPUMV = commandContext() === 'repository' ? 'npm run gpumv --' : 'npx gpumv';

const HELP = `usage: ${GPUMV} <command> [options]     (${GPUMV} <command> --help for its options)

${Object.entries(SUBCOMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(8)} ${summary}`)
  .join('\n')}

Every command reads the project's config, gpumv.config.{ts,mts,js,mjs}, found walking up from
the working directory (or --config FILE): your systems, mutants, allocator modules, regressions
folder and default seed. Paths written into files are relative to the config's folder.

  include-dir    print the folder of gpumv_driver.h, the C header of native drivers
                 (c++ -I"$(gpumv include-dir)" ...; docs/native.md)
  -h, --help     this help
  -v, --version  the package version`;

/**
 * What the tools print for `npm run <tool> --` users (help texts, usage lines), respelled as
 * `npx gpumv <tool>` outside this repository (see src/harness/command-line.ts).
 */
function respellStream(stream: NodeJS.WriteStream): void {
  const context = commandContext();
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(
      typeof chunk === 'string' ? respellCommands(chunk, context) : chunk,
      ...rest,
    )) as typeof stream.write;
}

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
  console.log(HELP);
  process.exit(name === undefined ? 2 : 0);
}
if (name === 'include-dir') {
  // The folder of include/gpumv_driver.h, for a native driver's build (-I"$(gpumv include-dir)").
  const here = new URL('.', import.meta.url).pathname;
  console.log(path.resolve(here, extension === '.ts' ? '../..' : '../../..', 'include'));
  process.exit(0);
}
if (name === '-v' || name === '--version') {
  console.log(version());
  process.exit(0);
}
const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
if (subcommand === undefined) {
  console.error(
    `error: unknown command '${name}'; commands: ${Object.keys(SUBCOMMANDS).join(', ')} (see ${GPUMV} --help)`,
  );
  process.exit(2);
}
respellStream(process.stdout);
respellStream(process.stderr);
// The subcommand's module reads process.argv as if it had been started itself.
process.argv = [
  process.argv[0]!,
  new URL(`./${subcommand.module}${extension}`, import.meta.url).pathname,
  ...rest,
];
await import(`./${subcommand.module}${extension}`);
