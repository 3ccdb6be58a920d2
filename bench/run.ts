/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts. Benchmarks print ratios measured in
 * one run (implementation vs model, ours vs a peer); tests never assert on time.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// Sources (.ts, the repo's scripts) or compiled (.js, the installed package's `gpumv bench`).
const extension = path.extname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter(
    (file) =>
      file.endsWith(extension) &&
      !file.endsWith('.d.ts') &&
      file !== `run${extension}` &&
      !file.startsWith('_'),
  )
  .map((file) => file.slice(0, -extension.length))
  .sort();
const HELP = `usage: npm run bench -- <name> [args]   (npm run bench -- <name> --help lists a benchmark's args)

benchmarks: ${available.join(', ')}

Each prints operations per second for the implementation, the model and any peer, measured in one run, and their ratios.`;
const [name, ...rest] = process.argv.slice(2);

if (name === undefined) {
  console.log(HELP);
  process.exit(2);
}
// An option before the name: -h/--help prints the help, anything else is unknown.
if (name.startsWith('-')) parseOrExit(COMMANDS.bench, HELP, [name]);
const file = path.join(here, `${name}${extension}`);
if (!available.includes(name) || !existsSync(file)) {
  console.error(
    `error: unknown benchmark '${name}'; available: ${available.join(', ')} (see npm run bench -- --help)`,
  );
  process.exit(2);
}
process.argv = [process.argv[0]!, file, ...rest];
try {
  await import(pathToFileURL(file).href);
} catch (error) {
  // The peers some benchmarks compare with (@thi.ng/malloc, AssemblyScript's TLSF) are the
  // repository's dev dependencies, not the installed package's.
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(
    error instanceof Error ? error.message : '',
  );
  if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || missing === null)
    throw error;
  console.error(
    `error: benchmark '${name}' compares with ${missing[1]}, a dev dependency of the gpu-memory-verifier repository: run it from a clone (npm ci && npm run bench -- ${name})`,
  );
  process.exit(2);
}
