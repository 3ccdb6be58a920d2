/**
 * Resolves what a campaign runs: registered systems by name (or `all`), optionally against a
 * mutant of the catalog instead of the real implementation. Shared by the fuzz CLI and its
 * worker threads so both build exactly the same targets from the same plain-data spec.
 */
import { SYSTEMS, findSystem, systemNames } from '../harness/registry';
import { findMutant } from '../harness/mutant-catalog';
import type { ImplFactory } from '../harness/runner';
import type { SystemDef } from '../harness/system';
import { UsageError } from './args';
import { loadUserAllocator, UserAllocatorError } from '../alloc/user-allocator';
import { userAllocatorSystemFromModule } from '../systems/user-allocator';

/** Plain data: stored in the campaign summary so a resume rebuilds the same targets. */
export interface TargetSpec {
  /** Comma-separated system names or 'all'. */
  readonly systems: string;
  /** Run against this mutant of the catalog (its system only). */
  readonly mutant?: string;
  /** A user's allocator module (path relative to the working directory). */
  readonly allocator?: string;
}

export interface Target {
  readonly system: SystemDef;
  /** Replaces the system's implementation (a mutant). */
  readonly implFactory?: ImplFactory;
  /** Mutants a finding on this target keeps catching (written to the regression file). */
  readonly catches: readonly string[];
}

export async function resolveTargets(spec: TargetSpec): Promise<Target[]> {
  if (spec.allocator !== undefined) {
    if (spec.mutant !== undefined || spec.systems !== 'all') throw new UsageError('--allocator runs only the user-allocator system; drop --system/--mutant');
    try {
      return [{ system: userAllocatorSystemFromModule(await loadUserAllocator(spec.allocator)), catches: [] }];
    } catch (error) {
      if (error instanceof UserAllocatorError) throw new UsageError(error.message);
      throw error;
    }
  }
  if (spec.mutant !== undefined) {
    const mutant = await findMutant(spec.mutant);
    if (mutant === undefined) throw new UsageError(`unknown mutant '${spec.mutant}' (npm run mutants lists them)`);
    if (spec.systems !== 'all' && spec.systems !== mutant.system) {
      throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}, not ${spec.systems}`);
    }
    return [{ system: findSystem(mutant.system)!, implFactory: mutant.createImpl, catches: [mutant.name] }];
  }
  if (spec.systems === 'all') return SYSTEMS.map((system) => ({ system, catches: [] }));
  const names = spec.systems.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
  if (names.length === 0) throw new UsageError('--system needs a name, a comma-separated list, or all');
  return names.map((name) => {
    const system = findSystem(name);
    if (system === undefined) throw new UsageError(`unknown system '${name}'; known: ${systemNames().join(', ')}, all`);
    return { system, catches: [] };
  });
}
