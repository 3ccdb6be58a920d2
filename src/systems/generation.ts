/** Generation helpers shared by the systems' command arbitraries. */
import fc from 'fast-check';
import type { Command, GenerationPlan } from '../harness/system';

/**
 * One command drawn from per-op arbitraries with weights: the system's defaults, overridden by
 * the plan (swarm testing turns op kinds off or reweights them per run). At least one op keeps
 * a positive weight.
 */
export function weightedOps<K extends string>(
  arbs: Record<K, fc.Arbitrary<Command>>,
  defaults: Record<K, number>,
  plan?: GenerationPlan,
): fc.Arbitrary<Command> {
  const entries = (Object.keys(arbs) as K[])
    .map((op) => ({ arbitrary: arbs[op], weight: plan?.weights?.[op] ?? defaults[op] }))
    .filter((entry) => entry.weight > 0);
  if (entries.length === 0) throw new Error('generation plan disables every op');
  return fc.oneof(...entries) as fc.Arbitrary<Command>;
}
