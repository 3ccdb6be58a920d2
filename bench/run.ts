/**
 * `npm run bench -- <name> [args]`: runs bench/<name>.ts. Benchmarks print ratios measured in
 * one run (implementation vs model, ours vs a peer); tests never assert on time.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.startsWith('_'))
  .map((file) => file.slice(0, -3))
  .sort();
const [name, ...rest] = process.argv.slice(2);

if (name === undefined || name === '--help' || name === '-h') {
  console.log(`usage: npm run bench -- <name> [args]\n\nbenchmarks: ${available.join(', ')}\n\nEach prints operations per second for the implementation, the model and any peer, measured in one run, and their ratios.`);
  process.exit(name === undefined ? 2 : 0);
}
const file = path.join(here, `${name}.ts`);
if (!existsSync(file)) {
  console.error(`bench: unknown benchmark '${name}'; available: ${available.join(', ')}`);
  process.exit(2);
}
process.argv = [process.argv[0]!, file, ...rest];
await import(pathToFileURL(file).href);
