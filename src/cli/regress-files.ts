/**
 * The regression files `npm run regress` works on: the project it reads, FILE arguments resolved
 * from the working directory or the project root, the walk of folders, and loading one file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadRegression, type Lookup } from '../harness/regression.js';
import { loadProject, type Project } from '../project.js';
import { UsageError } from './args.js';
import { notARegression } from './preflight.js';

export async function project(configFile: string | undefined): Promise<Project> {
  return loadProject(configFile === undefined ? {} : { configFile });
}

export async function lookup(known: Project): Promise<Lookup> {
  const registry = known.registry;
  return {
    findSystem: (name) => registry.findSystem(name),
    mutantSystems: await registry.mutantSystems(),
  };
}

/** A FILE argument: from the working directory, else from the project root. */
export function resolveArgument(known: Project, entry: string): string {
  const fromCwd = path.resolve(entry);
  if (existsSync(fromCwd) || path.isAbsolute(entry)) return fromCwd;
  const fromRoot = path.resolve(known.root, entry);
  return existsSync(fromRoot) ? fromRoot : fromCwd;
}

/** Every .json file under the given files/directories (default: the regressions folder), sorted. */
export function regressionFiles(known: Project, targets: readonly string[]): string[] {
  const roots =
    targets.length > 0
      ? targets.map((entry) => resolveArgument(known, entry))
      : [known.regressionsDir];
  const files: string[] = [];
  const walk = (entry: string, named: boolean): void => {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(entry);
    } catch {
      if (targets.length === 0 && entry === known.regressionsDir) return; // no regressions yet
      throw new UsageError(`no such file or directory: ${entry}`);
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(entry).sort()) walk(path.join(entry, name), false);
    } else if (entry.endsWith('.json')) {
      // A stray JSON file in a folder (notes.json) is named and skipped; one named on the command line is read.
      const reason = named ? null : notARegression(entry);
      if (reason === null) files.push(entry);
      else console.error(`warning: ${shown(entry)}: ${reason}; skipped`);
    }
  };
  for (const root of roots) walk(root, true);
  return files;
}

/** How a file is named in output: relative to the working directory. */
export function shown(file: string): string {
  return path.relative(process.cwd(), file) || file;
}

export async function loadFile(known: Project, file: string) {
  return loadRegression(file, await known.registry.mutantSystems(), (name, rawConfig) =>
    known.registry.systemForFile(name, rawConfig),
  );
}
