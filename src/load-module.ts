/**
 * Loads a user's module (a config file, a system, an allocator) whether it is JavaScript or
 * TypeScript.
 *
 * TypeScript goes through tsx's module hooks (`tsx/esm/api` `register`), registered once per
 * thread, the first time a TypeScript file is loaded. Why tsx: Node 20 cannot strip types
 * itself; tsx transpiles without type-checking (a user's type errors are their compiler's job,
 * not a reason to refuse a fuzz run), handles ESM and CommonJS and resolves the extension-less
 * and `.js`-for-`.ts` imports TypeScript projects write. Registering the hooks (rather than
 * tsx's namespaced `tsImport`) keeps one instance of every module: a user's system that imports
 * this package gets the same module the CLI runs, so `instanceof ContractError` and the like hold.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);
let tsxRegistered: Promise<void> | undefined;

/** Whether loading `file` needs the TypeScript hooks. */
export function isTypeScriptFile(file: string): boolean {
  return TYPESCRIPT_EXTENSIONS.has(path.extname(file));
}

/** Registers tsx's hooks in this thread (once); the repo's own tsx-run tools already have them. */
export function registerTypeScript(): Promise<void> {
  tsxRegistered ??= (async () => {
    if (process.execArgv.some((arg) => /tsx/.test(arg)) || isRunningTypeScript()) return;
    const api = await import('tsx/esm/api');
    api.register();
  })();
  return tsxRegistered;
}

/** Whether this very module was loaded as TypeScript (the repo's scripts run the sources). */
function isRunningTypeScript(): boolean {
  return import.meta.url.endsWith('.ts');
}

/** A module that cannot be loaded; the message is one line naming the file. */
export class ModuleLoadError extends Error {
  constructor(readonly file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'ModuleLoadError';
  }
}

/** Imports `file` (absolute, or relative to `baseDir`), TypeScript included. */
export async function importUserModule(file: string, baseDir = process.cwd()): Promise<Record<string, unknown>> {
  const absolute = path.resolve(baseDir, file);
  if (!existsSync(absolute)) throw new ModuleLoadError(file, 'no such file');
  if (isTypeScriptFile(absolute)) await registerTypeScript();
  try {
    return (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ModuleLoadError(file, `failed to load: ${text}`);
  }
}
