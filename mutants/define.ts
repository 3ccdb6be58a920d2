/**
 * How a catalog entry is built: a mutant is a subclass of a system's implementation, turned into
 * that system's side the same way as the real one.
 */
import type { AnySystem, ConfigOf, Mutant, RunEnv, SideOf } from '../src/harness/system.js';

/** Returns the entry builder of one system; `makeSide` wraps an implementation class into a side. */
export function mutantsOf<Sys extends AnySystem, Impl>(
  system: Sys,
  makeSide: (Implementation: Impl, config: ConfigOf<Sys>, env: RunEnv) => SideOf<Sys>,
): (
  name: string,
  expectedCheck: string,
  description: string,
  Implementation: Impl,
) => Mutant<ConfigOf<Sys>, SideOf<Sys>> {
  return (name, expectedCheck, description, Implementation) => ({
    name,
    system: system.name,
    description,
    expectedCheck,
    createImpl: (config, env) => makeSide(Implementation, config, env),
  });
}
