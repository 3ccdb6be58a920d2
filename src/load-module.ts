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
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);
let tsxRegistered: Promise<void> | undefined;

/** Whether loading `file` needs the TypeScript hooks. */
export function isTypeScriptFile(file: string): boolean {
  return TYPESCRIPT_EXTENSIONS.has(path.extname(file));
}

/** What loading a TypeScript file without tsx installed says (tsx is an optional peer dependency). */
export const TSX_MISSING =
  'a TypeScript file needs the tsx package to load: npm install --save-dev tsx (or write the file as .mjs)';

/**
 * Registers tsx's hooks in this thread (once); the repo's own tsx-run tools already have them.
 * tsx is an optional peer dependency (projects written in JavaScript do not need it): without
 * it, this rejects with TSX_MISSING.
 */
export function registerTypeScript(): Promise<void> {
  tsxRegistered ??= (async () => {
    if (process.execArgv.some((arg) => /tsx/.test(arg)) || isRunningTypeScript()) return;
    let api: { register(): unknown };
    try {
      api = await import('tsx/esm/api');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND')
        throw new Error(TSX_MISSING);
      throw error;
    }
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
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ModuleLoadError';
  }
}

/** A loaded module's named exports (and those of its default export object), sorted: what a 'no such export' error lists. */
export function exportNames(loaded: Record<string, unknown>): string[] {
  const names = new Set(Object.keys(loaded).filter((name) => name !== 'default'));
  const fallback = loaded.default;
  if (typeof fallback === 'object' && fallback !== null)
    for (const name of Object.keys(fallback)) names.add(name);
  return [...names].sort();
}

/** Imports `file` (absolute, or relative to `baseDir`), TypeScript included. */
export async function importUserModule(
  file: string,
  baseDir = process.cwd(),
): Promise<Record<string, unknown>> {
  const absolute = path.resolve(baseDir, file);
  if (!existsSync(absolute)) throw new ModuleLoadError(file, 'no such file');
  if (isTypeScriptFile(absolute)) {
    try {
      await registerTypeScript();
    } catch (error) {
      throw new ModuleLoadError(file, (error as Error).message);
    }
  }
  try {
    return (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ModuleLoadError(file, `failed to load: ${loadErrorText(error, absolute)}`);
  }
}

/**
 * One line for an error loading `absolute`: where in the file (when the error says) and what.
 * Node's syntax errors carry the line in their stack's first line (`file:///...:3`); tsx's
 * (esbuild's) in their message (`/path/file.ts:3:7: ERROR: ...`); an error the module throws
 * while it runs, in the stack frame of the file.
 */
export function loadErrorText(error: unknown, absolute: string): string {
  if (!(error instanceof Error)) return String(error);
  const url = pathToFileURL(absolute).href;
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const esbuild = new RegExp(`${escaped(absolute)}:(\\d+):(\\d+): ERROR: (.*)`).exec(error.message);
  if (esbuild !== null) return `line ${esbuild[1]}:${esbuild[2]}: ${esbuild[3]}`;
  // A first line that only announces the errors ("Parse failed with 1 error:") is joined with the next.
  const lines = error.message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const head = lines[0] ?? '';
  const text = head.endsWith(':') && lines[1] !== undefined ? `${head} ${lines[1]}` : head;
  const what = `${error.name === 'Error' ? '' : `${error.name}: `}${text}`;
  if (error.name === 'SyntaxError' && !isTypeScriptFile(absolute)) {
    // Node keeps the place of a module's syntax error out of the error; `node --check` prints it.
    const check = spawnSync(process.execPath, ['--check', absolute], { encoding: 'utf8' });
    const line = new RegExp(`^${escaped(absolute)}:(\\d+)`, 'm').exec(check.stderr ?? '');
    if (line !== null) return `line ${line[1]}: ${what}`;
  }
  const stack = error.stack ?? '';
  const located = new RegExp(`(?:${escaped(url)}|${escaped(absolute)}):(\\d+)(?::(\\d+))?`).exec(
    stack,
  );
  return located === null
    ? what
    : `line ${located[1]}${located[2] === undefined ? '' : `:${located[2]}`}: ${what}`;
}
