/**
 * Resolves the systems a campaign runs: registered systems by name (or `all`). Shared by the
 * fuzz CLI and its worker threads so both see exactly the same definitions.
 */
import { SYSTEMS, findSystem, systemNames } from '../harness/registry';
import type { SystemDef } from '../harness/system';
import { UsageError } from './args';

export interface TargetSpec {
  /** Comma-separated system names or 'all'. */
  readonly systems: string;
}

export async function resolveTargets(spec: TargetSpec): Promise<SystemDef[]> {
  if (spec.systems === 'all') return [...SYSTEMS];
  const names = spec.systems.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
  if (names.length === 0) throw new UsageError('--system needs a name, a comma-separated list, or all');
  return names.map((name) => {
    const system = findSystem(name);
    if (system === undefined) throw new UsageError(`unknown system '${name}'; known: ${systemNames().join(', ')}, all`);
    return system;
  });
}
