/**
 * Seeds. One fixed default seed is shared by `npm test`, `npm run mutants` and the default fuzz
 * campaign; campaign runs derive their own seeds from (campaign seed, system, run index) with
 * seedrandom, so run i is the same whatever the shard or worker count. A run's stream starts
 * with its fast-check seed; the run's campaign-level draws (swarm weights, fault sites, config
 * bias) follow on the same stream, so planning a run seeds one generator, not one per purpose.
 */
import seedrandom from 'seedrandom';

export const DEFAULT_SEED = 20261130;

/** The stream of run `runIndex` of a campaign on `system`: its first int32 is the run's fast-check seed. */
export function runStream(campaignSeed: string | number, system: string, runIndex: number): seedrandom.PRNG {
  return seedrandom(`${campaignSeed}/${system}/${runIndex}`);
}

