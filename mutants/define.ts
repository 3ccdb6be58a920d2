/**
 * How a catalog entry is built: a mutant is a subclass of a system's implementation, turned into
 * that system's side the same way as the real one.
 */
import type { JsonObject } from '../src/harness/json';
import type { Mutant, RunEnv } from '../src/harness/system';

/** Returns the entry builder of one system; `makeSide` wraps an implementation class into a side. */
export function mutantsOf<Impl>(
  system: string,
  makeSide: (Implementation: Impl, config: JsonObject, env: RunEnv) => unknown,
): (name: string, expectedCheck: string, description: string, Implementation: Impl) => Mutant {
  return (name, expectedCheck, description, Implementation) => ({
    name,
    system,
    description,
    expectedCheck,
    createImpl: (config, env) => makeSide(Implementation, config, env),
  });
}
