/**
 * Seeds. One fixed default seed is shared by `npm test`, `npm run mutants` and the default fuzz
 * campaign; campaign runs derive their own seeds from (campaign seed, system, run index) with
 * seedrandom, so run i is the same whatever the shard or worker count.
 */
import seedrandom from 'seedrandom';

export const DEFAULT_SEED = 20261130;

/** The fast-check seed of run `runIndex` of a campaign on `system`. */
export function deriveRunSeed(campaignSeed: string | number, system: string, runIndex: number): number {
  return seedrandom(`${campaignSeed}/${system}/${runIndex}`).int32();
}

/** A deterministic PRNG for campaign-level choices (swarm weights, fault sites) of one run. */
export function runRandom(campaignSeed: string | number, system: string, runIndex: number, purpose: string): () => number {
  return seedrandom(`${campaignSeed}/${system}/${runIndex}/${purpose}`);
}
