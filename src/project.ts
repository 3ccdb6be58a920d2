/**
 * A project: what a user's config file (`gpumv.config.ts` or `.mts`/`.js`/`.mjs`) declares, read
 * by every subcommand and by the vitest helpers. The config is found by walking up from the
 * working directory (or given with `--config`); its folder is the project root, and every path
 * the tools write into a file (allocator modules in regression configs, findings) is relative to
 * that root, so a finding replays from any sub-directory.
 *
 *   // gpumv.config.ts
 *   import { defineConfig } from 'gpu-memory-verifier';
 *   import { mySystem } from './verify/my-system';
 *   import { MY_MUTANTS } from './verify/my-mutants';
 *   export default defineConfig({
 *     systems: [mySystem],
 *     mutants: MY_MUTANTS,
 *     allocators: ['src/my-allocator.mjs'],
 *     executables: ['build/my_allocator_driver'],
 *     regressions: 'verify/regressions',
 *     seed: 'team-seed-1',
 *     builtins: false,
 *   });
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { Registry } from './harness/registry.js';
import { parseWith, Str, Bool, Strict } from './harness/schema.js';
import type { AnyMutant, AnySystem } from './harness/system.js';
import { InputError } from './harness/json.js';
import { BUILTIN_SYSTEMS, loadBuiltinMutants } from './systems/index.js';
import { USER_ALLOCATOR_SYSTEM, userAllocatorSystemFromModule } from './systems/user-allocator.js';
import {
  ALLOCATOR_POLICIES,
  loadUserAllocator,
  UserAllocatorError,
} from './user-allocator-module.js';
import { nativeResolvers } from './native/native-systems.js';
import type { AllocatorPolicy } from './alloc/allocator.js';
import {
  exportNames,
  importUserModule,
  isTypeScriptFile,
  registerTypeScript,
} from './load-module.js';
import { DEFAULT_SEED } from './harness/seed.js';

/** File names a config may have, in the order they are looked for in each folder. */
export const CONFIG_FILE_NAMES = [
  'gpumv.config.ts',
  'gpumv.config.mts',
  'gpumv.config.js',
  'gpumv.config.mjs',
] as const;

/** What a config file exports (as its default export). */
export interface GpumvConfig {
  /** Your systems (written with defineSystem), fuzzed and replayed with the built-in ones. */
  readonly systems?: readonly AnySystem[];
  /** Your mutants: implementations with a planted bug that a check of the system must catch. */
  readonly mutants?: readonly AnyMutant[];
  /**
   * Allocator modules (paths relative to the config's folder) exporting createAllocator; each is
   * fuzzed as the `user-allocator` system against the policy it exports.
   */
  readonly allocators?: readonly string[];
  /**
   * Native driver executables (paths relative to the config's folder) built with
   * include/gpumv_driver.h; each is fuzzed as the native system its hello declares
   * (docs/native.md).
   */
  readonly executables?: readonly string[];
  /** Folder of the stored regressions (default `regressions`), replayed by `regress replay` and the vitest helper. */
  readonly regressions?: string;
  /** Folder campaigns write their findings to (default `.fuzz/findings`); `regress save` moves one into regressions. */
  readonly findings?: string;
  /** Default campaign and test seed (default: the harness's fixed seed). */
  readonly seed?: string;
  /** Include the built-in systems and their mutants (default true). */
  readonly builtins?: boolean;
}

/** Identity, for type inference in a config file. */
export function defineConfig(config: GpumvConfig): GpumvConfig {
  return config;
}

// The config's plain-data fields are checked by a schema; systems and mutants by shape.
const ConfigFileSchema = Strict(
  {
    systems: Type.Optional(
      Type.Array(Type.Unknown(), { description: 'systems written with defineSystem' }),
    ),
    mutants: Type.Optional(Type.Array(Type.Unknown(), { description: 'mutants of your systems' })),
    allocators: Type.Optional(
      Type.Array(Str({ description: 'allocator module, relative to the config folder' })),
    ),
    executables: Type.Optional(
      Type.Array(Str({ description: 'native driver executable, relative to the config folder' })),
    ),
    regressions: Type.Optional(
      Str({ description: 'regressions folder, relative to the config folder' }),
    ),
    findings: Type.Optional(Str({ description: 'findings folder, relative to the config folder' })),
    seed: Type.Optional(Str({ description: 'default seed' })),
    builtins: Type.Optional(Bool({ description: 'include the built-in systems' })),
  },
  { description: 'a gpumv config' },
);

export interface Project {
  /** The folder of the config file (or the working directory when there is none). */
  readonly root: string;
  /** The config file, if one was found. */
  readonly configFile: string | null;
  readonly registry: Registry;
  readonly regressionsDir: string;
  readonly findingsDir: string;
  /** The default seed (`--seed` overrides it). */
  readonly seed: string;
  /** Allocator modules of the config, as written there (relative to root). */
  readonly allocators: readonly string[];
  /** Native driver executables of the config, relative to root. */
  readonly executables: readonly string[];
  /** Whether the built-in systems are included. */
  readonly builtins: boolean;
}

/** The config file governing `dir`: the first of CONFIG_FILE_NAMES found walking up from it. */
export function findConfigFile(dir: string): string | null {
  let current = path.resolve(dir);
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = path.join(current, name);
      if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

function isSystem(value: unknown): value is AnySystem {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AnySystem).name === 'string' &&
    typeof (value as AnySystem).apply === 'function' &&
    typeof (value as AnySystem).commandArb === 'function'
  );
}

function isMutant(value: unknown): value is AnyMutant {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AnyMutant).name === 'string' &&
    typeof (value as AnyMutant).system === 'string' &&
    typeof (value as AnyMutant).createImpl === 'function'
  );
}

/** A module path as it is written into files: relative to the project root, with forward slashes. */
export function projectRelative(root: string, file: string): string {
  const relative = path.relative(root, path.resolve(root, file));
  return (relative === '' ? '.' : relative).split(path.sep).join('/');
}

/**
 * Builds the user-allocator system for a module path relative to the project root (what a
 * regression file's config holds, whichever folder the tool runs from).
 */
export async function userAllocatorForProject(
  root: string,
  modulePath: string,
  policy?: AllocatorPolicy,
): Promise<AnySystem> {
  const absolute = path.resolve(root, modulePath);
  if (isTypeScriptFile(absolute))
    await registerTypeScript().catch((error: unknown) =>
      Promise.reject(new UserAllocatorError(modulePath, (error as Error).message)),
    );
  const loaded = await loadUserAllocator(absolute).catch((error: unknown) => {
    if (error instanceof UserAllocatorError)
      throw new UserAllocatorError(modulePath, error.message.slice(error.modulePath.length + 2));
    throw error;
  });
  return userAllocatorSystemFromModule(
    loaded,
    policy ?? loaded.policy,
    projectRelative(root, absolute),
  );
}

/** The resolver of user-allocator files: the module named in the config, relative to the project root. */
function userAllocatorResolver(root: string) {
  return async (rawConfig: unknown): Promise<AnySystem> => {
    const config =
      typeof rawConfig === 'object' && rawConfig !== null
        ? (rawConfig as Record<string, unknown>)
        : {};
    const modulePath = config.allocatorModule;
    if (typeof modulePath !== 'string')
      throw new Error(
        `user-allocator config: allocatorModule must be a string, got ${JSON.stringify(modulePath)}`,
      );
    const policy = ALLOCATOR_POLICIES.find((candidate) => candidate === config.policy);
    if (policy === undefined)
      throw new UserAllocatorError(
        modulePath,
        `the config names an unknown policy ${JSON.stringify(config.policy)}`,
      );
    return userAllocatorForProject(root, modulePath, policy);
  };
}

/** Builds a project from a config object whose relative paths are relative to `root`. */
export function projectFromConfig(
  config: GpumvConfig,
  root: string,
  configFile: string | null,
): Project {
  const builtins = config.builtins ?? true;
  const systems = [...(builtins ? BUILTIN_SYSTEMS : []), ...(config.systems ?? [])];
  const own = config.mutants ?? [];
  const registry = new Registry({
    systems,
    loadMutants: async () => [...(builtins ? await loadBuiltinMutants() : []), ...own],
    resolvers: {
      [USER_ALLOCATOR_SYSTEM]: userAllocatorResolver(root),
      ...nativeResolvers(root),
    },
  });
  return {
    root,
    configFile,
    registry,
    regressionsDir: path.resolve(root, config.regressions ?? 'regressions'),
    findingsDir: path.resolve(root, config.findings ?? path.join('.fuzz', 'findings')),
    seed: config.seed ?? String(DEFAULT_SEED),
    allocators: (config.allocators ?? []).map((file) => projectRelative(root, file)),
    executables: (config.executables ?? []).map((file) => projectRelative(root, file)),
    builtins,
  };
}

/** Checks what a config file exported; every problem names the file and the field. */
export function parseConfig(value: unknown, file: string): GpumvConfig {
  const config = parseWith(ConfigFileSchema, value, file, '$');
  (config.systems ?? []).forEach((system, index) => {
    if (!isSystem(system))
      throw new InputError(
        file,
        `$.systems[${index}]`,
        'expected a system built with defineSystem',
      );
  });
  (config.mutants ?? []).forEach((mutant, index) => {
    if (!isMutant(mutant))
      throw new InputError(
        file,
        `$.mutants[${index}]`,
        'expected a mutant ({ name, system, createImpl, ... })',
      );
  });
  const root = path.dirname(file);
  (config.allocators ?? []).forEach((modulePath, index) => {
    if (!existsSync(path.resolve(root, modulePath)))
      throw new InputError(
        file,
        `$.allocators[${index}]`,
        `no such file ${modulePath} (paths are relative to the config's folder)`,
      );
  });
  (config.executables ?? []).forEach((executable, index) => {
    const problem = executableProblem(path.resolve(root, executable));
    if (problem !== null)
      throw new InputError(
        file,
        `$.executables[${index}]`,
        `${problem} ${executable} (paths are relative to the config's folder)`,
      );
  });
  return config as GpumvConfig;
}

/** Why a native driver cannot be run, or null: no such file, a folder, no execute permission. */
function executableProblem(absolute: string): string | null {
  if (!existsSync(absolute)) return 'no such file';
  if (!statSync(absolute).isFile()) return 'not a file:';
  try {
    accessSync(absolute, constants.X_OK);
  } catch {
    return 'not executable:';
  }
  return null;
}

export interface LoadProjectOptions {
  /** Where to start looking for a config (default: the working directory). */
  readonly cwd?: string;
  /** An explicit config file (`--config`); no search then. */
  readonly configFile?: string;
}

/**
 * Loads the project governing the working directory: its config file if one is found (walking
 * up), else the built-in systems with the working directory as the root.
 */
export async function loadProject(options: LoadProjectOptions = {}): Promise<Project> {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const file =
    options.configFile !== undefined ? path.resolve(cwd, options.configFile) : findConfigFile(cwd);
  if (file === null) return projectFromConfig({}, cwd, null);
  if (!existsSync(file))
    throw new InputError(options.configFile ?? file, '$', 'no such config file');
  const loaded = await importUserModule(file);
  const exported = loaded.default ?? loaded.config;
  if (exported === undefined) {
    throw new InputError(
      file,
      '$',
      `a config file must export its config as the default export (export default defineConfig({ ... })); it exports: ${exportNames(loaded).join(', ') || 'nothing'}`,
    );
  }
  return projectFromConfig(parseConfig(exported, file), path.dirname(file), file);
}
