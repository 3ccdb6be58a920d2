/**
 * A registry is data: the systems a tool works on and where their mutants come from. The harness
 * takes one as input and imports no system; src/systems/index.ts builds the built-in one, and a
 * user's config file can build another.
 */
import type { AnyMutant, AnySystem } from './system.js';

/** Builds a system from a regression file's config (e.g. a user's allocator module it names). */
export type SystemResolver = (rawConfig: unknown) => Promise<AnySystem>;

export interface RegistrySpec {
  readonly systems: readonly AnySystem[];
  /** Loads the bug catalog (lazily: only the tools that need mutants pay for loading them). */
  readonly loadMutants?: () => Promise<readonly AnyMutant[]>;
  /** Systems that are built from the config a file holds, by system name. */
  readonly resolvers?: Readonly<Record<string, SystemResolver>>;
}

export class Registry {
  readonly systems: readonly AnySystem[];
  private readonly byName = new Map<string, AnySystem>();
  private mutantsLoaded: Promise<readonly AnyMutant[]> | undefined;

  constructor(private readonly spec: RegistrySpec) {
    this.systems = spec.systems;
    for (const system of spec.systems) {
      if (this.byName.has(system.name))
        throw new Error(`registry: two systems are named ${system.name}`);
      this.byName.set(system.name, system);
    }
  }

  systemNames(): string[] {
    return this.systems.map((system) => system.name);
  }

  findSystem(name: string): AnySystem | undefined {
    return this.byName.get(name);
  }

  /** Whether files of this system build it from their config (no registered instance). */
  resolvesFromConfig(name: string): boolean {
    return Object.hasOwn(this.spec.resolvers ?? {}, name);
  }

  /** The system a regression file names: registered by name, or built by its resolver from the file's config. */
  async systemForFile(name: string, rawConfig: unknown): Promise<AnySystem | undefined> {
    const resolver = this.spec.resolvers?.[name];
    if (resolver !== undefined && Object.hasOwn(this.spec.resolvers ?? {}, name))
      return resolver(rawConfig);
    return this.findSystem(name);
  }

  async mutants(): Promise<readonly AnyMutant[]> {
    this.mutantsLoaded ??= this.spec.loadMutants?.() ?? Promise.resolve([]);
    const mutants = await this.mutantsLoaded;
    for (const mutant of mutants) {
      if (!this.byName.has(mutant.system) && !this.resolvesFromConfig(mutant.system)) {
        throw new Error(`registry: mutant ${mutant.name} names an unknown system ${mutant.system}`);
      }
    }
    return mutants;
  }

  async findMutant(name: string): Promise<AnyMutant | undefined> {
    return (await this.mutants()).find((mutant) => mutant.name === name);
  }

  /** Mutant name -> the system it belongs to (what a regression file's `catches` is checked against). */
  async mutantSystems(): Promise<ReadonlyMap<string, string>> {
    return new Map((await this.mutants()).map((mutant) => [mutant.name, mutant.system]));
  }
}
