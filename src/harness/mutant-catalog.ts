/**
 * Loads the bug catalog (mutants/index.ts) at run time.
 *
 * The implementations in src/ never import mutants/: the catalog is loaded by path, as a plugin,
 * only by the tools that need it (mutant report, regression replay, fuzz against a mutant).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import type { Mutant } from './system';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CATALOG_PATH = path.join(PROJECT_ROOT, 'mutants', 'index.ts');

let cached: readonly Mutant[] | undefined;

export async function loadMutants(): Promise<readonly Mutant[]> {
  if (cached === undefined) {
    const module = (await import(pathToFileURL(CATALOG_PATH).href)) as { MUTANTS: readonly Mutant[] };
    cached = module.MUTANTS;
  }
  return cached;
}

export async function findMutant(name: string): Promise<Mutant | undefined> {
  return (await loadMutants()).find((mutant) => mutant.name === name);
}
