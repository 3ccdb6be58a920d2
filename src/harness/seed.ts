/**
 * Seeds. One fixed default seed is shared by `npm test`, `npm run mutants` and the default fuzz
 * campaign; campaign runs derive their own seeds from (campaign seed, system, run index) with
 * seedrandom, so run i is the same whatever the shard or worker count. A run's stream starts
 * with its fast-check seed; the run's campaign-level draws (swarm weights, fault sites, config
 * bias) follow on the same stream, so planning a run seeds one generator, not one per purpose.
 */
import seedrandom from 'seedrandom';

export const DEFAULT_SEED = 20261130;

/**
 * A campaign seed (a config's `seed`, any string) as a fast-check seed: an integer string is
 * that integer, any other string the first int32 of its seedrandom stream (the same string, the
 * same seed).
 */
export function seedNumber(seed: string | number): number {
  if (typeof seed === 'number') return seed;
  const trimmed = seed.trim();
  if (/^-?\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return Number(trimmed);
  return seedrandom(seed).int32();
}

/** The stream of run `runIndex` of a campaign on `system`: its first int32 is the run's fast-check seed. */
export function runStream(
  campaignSeed: string | number,
  system: string,
  runIndex: number,
): seedrandom.PRNG {
  return seedrandom(`${campaignSeed}/${system}/${runIndex}`);
}
