/**
 * Resolves what a campaign runs: registered systems by name (or `all`), optionally against a
 * mutant of the catalog instead of the real implementation. Shared by the fuzz CLI and its
 * worker threads so both build exactly the same targets from the same plain-data spec.
 */
import type { Registry } from '../harness/registry';
import type { ImplFactory } from '../harness/runner';
import type { AnySystem } from '../harness/system';
import type { TargetSpec } from '../harness/campaign';
import { UsageError } from './args';
import { loadUserAllocator, UserAllocatorError } from '../alloc/user-allocator';
import { userAllocatorSystemFromModule } from '../systems/user-allocator';
import { BUILTIN_REGISTRY } from '../systems/index';

export type { TargetSpec };

export interface Target {
  readonly system: AnySystem;
  /** Replaces the system's implementation (a mutant). */
  readonly implFactory?: ImplFactory;
  /** Mutants a finding on this target keeps catching (written to the regression file). */
  readonly catches: readonly string[];
}

export async function resolveTargets(spec: TargetSpec, registry: Registry = BUILTIN_REGISTRY): Promise<Target[]> {
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
    const mutant = await registry.findMutant(spec.mutant);
    if (mutant === undefined) throw new UsageError(`unknown mutant '${spec.mutant}' (npm run mutants lists them)`);
    if (spec.systems !== 'all' && spec.systems !== mutant.system) {
      throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}, not ${spec.systems}`);
    }
    const system = registry.findSystem(mutant.system);
    if (system === undefined) throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}, which is built from a file's config: replay its files instead`);
    return [{ system, implFactory: mutant.createImpl, catches: [mutant.name] }];
  }
  if (spec.systems === 'all') return registry.systems.map((system) => ({ system, catches: [] }));
  const names = spec.systems.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
  if (names.length === 0) throw new UsageError('--system needs a name, a comma-separated list, or all');
  return names.map((name) => {
    const system = registry.findSystem(name);
    if (system === undefined) throw new UsageError(`unknown system '${name}'; known: ${registry.systemNames().join(', ')}, all`);
    return { system, catches: [] };
  });
}
