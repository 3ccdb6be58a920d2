/**
 * Runs the repository's TypeScript CLIs (src/cli/*.ts) in a child process as its npm scripts do:
 * `node --import tsx script`, one Node process (the `tsx` command starts a second one around it).
 * A test that signals a CLI needs that: the `tsx` command passes a signal on to its child and,
 * when the child has not confirmed it within about 30 ms (a loaded machine), kills the child and
 * exits 130 itself, so a campaign stopped by one SIGINT seemed to have had two.
 * The loader is named by its path, so a child whose working directory is a project outside the
 * repository loads it too.
 */
import { type SpawnOptions, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = path.resolve(__dirname, '..');
const TSX_LOADER = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** Node's arguments that load tsx: put before a script's path (`node ...TSX_IMPORT script`). */
export const TSX_IMPORT: readonly string[] = ['--import', TSX_LOADER];

/** The command and arguments that run `script` (a path) with `args`. */
export function tsxCommand(script: string, args: readonly string[]): [string, string[]] {
  return [process.execPath, [...TSX_IMPORT, script, ...args]];
}

/** `src/cli/<tool>.ts` of this repository. */
export const cliScript = (tool: string): string => path.join(ROOT, 'src', 'cli', `${tool}.ts`);

/** Runs `script` to its end (spawnSync with utf8 output). */
export function runTs(
  script: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): SpawnSyncReturns<string> {
  const [command, argv] = tsxCommand(script, args);
  return spawnSync(command, argv, { encoding: 'utf8', ...options });
}

export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `script` to its end without blocking, so independent runs can overlap. */
export function runTsAsync(
  script: string,
  args: readonly string[],
  options: SpawnOptions & { cwd: string },
): Promise<Finished> {
  const [command, argv] = tsxCommand(script, args);
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
