/**
 * Resolves what a campaign runs: registered systems by name (or `all`), optionally against a
 * mutant of the catalog instead of the real implementation. Shared by the fuzz CLI and its
 * worker threads so both build exactly the same targets from the same plain-data spec.
 */
import path from 'node:path';
import type { ImplFactory } from '../harness/runner.js';
import type { AnySystem } from '../harness/system.js';
import type { TargetSpec } from '../harness/campaign.js';
import { UsageError } from './args.js';
import { UserAllocatorError } from '../user-allocator-module.js';
import { USER_ALLOCATOR_SYSTEM } from '../systems/user-allocator.js';
import { projectRelative, userAllocatorForProject, type Project } from '../project.js';
import { ModuleLoadError } from '../load-module.js';
import { isNativeSystem, nativeTargetForProject } from '../native/native-systems.js';
import { DriverStartError } from '../native/driver.js';

export type { TargetSpec };

export interface Target {
  readonly system: AnySystem;
  /** Replaces the system's implementation (a mutant). */
  readonly implFactory?: ImplFactory;
  /** Mutants a finding on this target keeps catching (written to the regression file). */
  readonly catches: readonly string[];
}

/**
 * The system name a regression file records for a target: campaign targets of several user
 * allocators are named `user-allocator:<module>` (several native drivers `<system>:<executable>`)
 * to tell them apart; their files say `user-allocator` (the module is in the config).
 */
export function fileSystemName(name: string): string {
  const colon = name.indexOf(':');
  const base = colon === -1 ? name : name.slice(0, colon);
  return colon !== -1 && (base === USER_ALLOCATOR_SYSTEM || isNativeSystem(base)) ? base : name;
}

/** The user-allocator system of a module (relative to the project root), named `name`. */
async function allocatorTarget(
  project: Project,
  modulePath: string,
  name: string,
): Promise<Target> {
  try {
    const system = await userAllocatorForProject(project.root, modulePath);
    return { system: name === system.name ? system : { ...system, name }, catches: [] };
  } catch (error) {
    if (error instanceof UserAllocatorError || error instanceof ModuleLoadError)
      throw new UsageError(error.message);
    throw error;
  }
}

/** The native system a driver executable (relative to the project root) declares; one that cannot start is a usage error. */
function nativeTarget(project: Project, executable: string, several = false): Target {
  try {
    const system = nativeTargetForProject(project.root, executable);
    return {
      system: several ? { ...system, name: `${system.name}:${executable}` } : system,
      catches: [],
    };
  } catch (error) {
    if (error instanceof DriverStartError) throw new UsageError(error.message);
    throw error;
  }
}

/** Allocator targets for modules (relative to the root): `user-allocator` alone, else one name per module. */
async function allocatorTargets(project: Project, modules: readonly string[]): Promise<Target[]> {
  return Promise.all(
    modules.map((modulePath) =>
      allocatorTarget(
        project,
        modulePath,
        modules.length === 1 ? USER_ALLOCATOR_SYSTEM : `${USER_ALLOCATOR_SYSTEM}:${modulePath}`,
      ),
    ),
  );
}

/** The spec's allocator as the project records it: relative to the project root. */
export function allocatorSpecPath(project: Project, typed: string, cwd = process.cwd()): string {
  return projectRelative(project.root, path.resolve(cwd, typed));
}

export async function resolveTargets(spec: TargetSpec, project: Project): Promise<Target[]> {
  const registry = project.registry;
  if (spec.exec !== undefined) {
    if (spec.mutant !== undefined || spec.systems !== 'all' || spec.allocator !== undefined)
      throw new UsageError(
        '--exec runs only the native driver; drop --system/--mutant/--allocator',
      );
    return [nativeTarget(project, spec.exec)];
  }
  if (spec.allocator !== undefined) {
    if (spec.mutant !== undefined || spec.systems !== 'all')
      throw new UsageError(
        '--allocator runs only the user-allocator system; drop --system/--mutant',
      );
    return allocatorTargets(project, [spec.allocator]);
  }
  if (spec.mutant !== undefined) {
    const mutant = await registry.findMutant(spec.mutant);
    if (mutant === undefined)
      throw new UsageError(`unknown mutant '${spec.mutant}' (npm run mutants lists them)`);
    if (spec.systems !== 'all' && spec.systems !== mutant.system) {
      throw new UsageError(
        `mutant ${mutant.name} belongs to system ${mutant.system}, not ${spec.systems}`,
      );
    }
    const system = registry.findSystem(mutant.system);
    if (system === undefined)
      throw new UsageError(
        `mutant ${mutant.name} belongs to system ${mutant.system}, which is built from a file's config: replay its files instead`,
      );
    return [{ system, implFactory: mutant.createImpl, catches: [mutant.name] }];
  }
  if (spec.systems === 'all')
    return [
      ...registry.systems.map((system) => ({ system, catches: [] })),
      ...(await allocatorTargets(project, project.allocators)),
      ...project.executables.map((executable) =>
        nativeTarget(project, executable, project.executables.length > 1),
      ),
    ];
  const names = spec.systems
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0)
    throw new UsageError('--system needs a name, a comma-separated list, or all');
  return names.map((name) => {
    const system = registry.findSystem(name);
    if (system === undefined)
      throw new UsageError(
        `unknown system '${name}'; known: ${registry.systemNames().join(', ')}, all`,
      );
    return { system, catches: [] };
  });
}
