/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts. Benchmarks print ratios measured in
 * one run (implementation vs model, ours vs a peer); tests never assert on time.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.startsWith('_'))
  .map((file) => file.slice(0, -3))
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
const file = path.join(here, `${name}.ts`);
if (!available.includes(name) || !existsSync(file)) {
  console.error(`error: unknown benchmark '${name}'; available: ${available.join(', ')} (see npm run bench -- --help)`);
  process.exit(2);
}
process.argv = [process.argv[0]!, file, ...rest];
await import(pathToFileURL(file).href);
