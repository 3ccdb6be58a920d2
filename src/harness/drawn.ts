/**
 * Drawn arbitraries: fast-check arbitraries that can also draw their value straight from the
 * random stream.
 *
 * A `Drawn` is an ordinary fast-check arbitrary (its generation, bias and shrinking are those of
 * the fast-check arbitrary it wraps, unchanged) with a second way to produce a value: `draw`
 * makes the very calls to `mrng.nextInt` that the wrapped arbitrary's unbiased generation makes,
 * with the same bounds and in the same order, and builds the same value, without fast-check's
 * per-part bookkeeping (a Value and a shrink context for every integer, tuple and mapped part).
 * The builders below cover what command generators use: integers, booleans, constants, tuples,
 * maps, arrays, options and weighted choices. Any other arbitrary has no `draw`, and a generator
 * built with one stays a plain fast-check arbitrary.
 *
 * `drawnFirst` turns a drawn arbitrary into one whose unbiased generation is the fast draw: it
 * keeps a copy of the random stream taken before the draw, and a shrink replays fast-check's own
 * generation from that copy first, so a failing case shrinks through exactly the values and
 * contexts it did before. Biased generation (property tests) is fast-check's own.
 *
 * Why: a campaign run of the residency manager spent about a tenth of its time in fast-check's
 * generation of the command sequence (src/harness/property.ts draws every sequence this way when
 * the system's ops are drawn). properties/drawn.test.ts checks, over many seeds, plans and
 * configs, that the draws equal fast-check's values and leave the stream where it leaves it.
 */
import fc from 'fast-check';

/** A fast-check arbitrary with a fast draw of the same values (see the header). */
export class Drawn<T> extends fc.Arbitrary<T> {
  constructor(
    /** The fast-check arbitrary: generation, bias and shrinking. */
    readonly arbitrary: fc.Arbitrary<T>,
    /** Its unbiased value from `mrng`, drawn with the same calls in the same order. */
    readonly draw: (mrng: fc.Random) => T,
  ) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    return this.arbitrary.generate(mrng, biasFactor);
  }

  canShrinkWithoutContext(value: unknown): value is T {
    return this.arbitrary.canShrinkWithoutContext(value);
  }

  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    return this.arbitrary.shrink(value, context);
  }

  /** fast-check's map of the wrapped arbitrary, with the mapper applied to the draw. */
  override map<U>(mapper: (t: T) => U, unmapper?: (possiblyU: unknown) => T): Drawn<U> {
    const draw = this.draw;
    return new Drawn(this.arbitrary.map(mapper, unmapper), (mrng) => mapper(draw(mrng)));
  }
}

/** fc.integer({ min, max }). */
export function drawnInteger(min: number, max: number): Drawn<number> {
  return new Drawn(fc.integer({ min, max }), (mrng) => mrng.nextInt(min, max));
}

/** fc.nat({ max }). */
export function drawnNat(max: number): Drawn<number> {
  return new Drawn(fc.nat({ max }), (mrng) => mrng.nextInt(0, max));
}

/** fc.boolean(): an integer in [0, 1], 1 being true. */
export function drawnBoolean(): Drawn<boolean> {
  return new Drawn(fc.boolean(), (mrng) => mrng.nextInt(0, 1) === 1);
}

/** fc.constantFrom(...values): one draw of an index, none for a single value. */
export function drawnConstantFrom<T>(...values: readonly T[]): Drawn<T> {
  if (values.length === 1) return drawnConstant(values[0]!);
  const last = values.length - 1;
  return new Drawn(fc.constantFrom(...values), (mrng) => values[mrng.nextInt(0, last)]!);
}

/** fc.constant(value): the same value, no draw. */
export function drawnConstant<T>(value: T): Drawn<T> {
  return new Drawn(fc.constant(value), () => value);
}

/** fc.tuple(...parts): the parts drawn in order. */
export function drawnTuple<Ts extends unknown[]>(
  ...parts: { [K in keyof Ts]: Drawn<Ts[K]> }
): Drawn<Ts> {
  const draws = parts.map((part) => part.draw);
  const arbitraries = parts.map((part) => part.arbitrary) as {
    [K in keyof Ts]: fc.Arbitrary<Ts[K]>;
  };
  return new Drawn(fc.tuple<Ts>(...arbitraries), (mrng) => {
    const values = new Array(draws.length);
    for (let i = 0; i < draws.length; i++) values[i] = draws[i]!(mrng);
    return values as Ts;
  });
}

/** The constraints of `drawnArray`: fast-check's, without the ones that change how items are drawn. */
export interface DrawnArrayConstraints {
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly size?: fc.SizeForArbitrary;
}

/**
 * fc.array(item, constraints): the length in [minLength, the length fast-check generates up to],
 * then the items in order. That bound is the built arbitrary's own (it depends on the size and
 * the global configuration); an arbitrary without one has no draw of its own: each draw is then
 * fast-check's generation.
 */
export function drawnArray<T>(item: Drawn<T>, constraints: DrawnArrayConstraints): Drawn<T[]> {
  const arbitrary = fc.array(item.arbitrary, constraints);
  const minLength = constraints.minLength ?? 0;
  const maxGenerated = (arbitrary as unknown as { readonly maxGeneratedLength?: unknown })
    .maxGeneratedLength;
  if (typeof maxGenerated !== 'number')
    return new Drawn(arbitrary, (mrng) => arbitrary.generate(mrng, undefined).value);
  const draw = item.draw;
  return new Drawn(arbitrary, (mrng) => {
    const length = mrng.nextInt(minLength, maxGenerated);
    const items: T[] = new Array(length);
    for (let i = 0; i < length; i++) items[i] = draw(mrng);
    return items;
  });
}

/** fc.option(item, { freq, nil }): weight 1 for `nil` against freq - 1 for the item. */
export function drawnOption<T, N>(item: Drawn<T>, freq: number, nil: N): Drawn<T | N> {
  const draw = item.draw;
  const top = freq - 1;
  return new Drawn(fc.option(item.arbitrary, { freq, nil }), (mrng) =>
    mrng.nextInt(0, top) < 1 ? nil : draw(mrng),
  );
}

/** A weighted entry of `drawnOneof`. */
export interface DrawnWeighted<T> {
  readonly arbitrary: Drawn<T>;
  readonly weight: number;
}

/**
 * fc.oneof(...entries) without constraints: an index in [0, total weight) picks the entry, whose
 * value is drawn next. (fast-check's depth benefit is 0 here: a drawn arbitrary is built bottom
 * up, so no choice is drawn inside itself, and its own depth is 0 whenever it draws.)
 */
export function drawnOneof<T>(...entries: readonly DrawnWeighted<T>[]): Drawn<T> {
  const arbitrary = fc.oneof(
    ...entries.map((entry) => ({ arbitrary: entry.arbitrary.arbitrary, weight: entry.weight })),
  );
  const draws = entries.map((entry) => entry.arbitrary.draw);
  const cumulated: number[] = [];
  let total = 0;
  for (const entry of entries) {
    total += entry.weight;
    cumulated.push(total);
  }
  const top = total - 1;
  return new Drawn(arbitrary, (mrng) => {
    const selected = mrng.nextInt(0, top);
    let index = 0;
    while (selected >= cumulated[index]!) index++;
    return draws[index]!(mrng);
  });
}

/** The shrink context of a value `drawnFirst` drew: the stream as it was before the draw. */
class Replay {
  constructor(readonly mrng: fc.Random) {}
}

/** The arbitrary whose unbiased generation is the drawn arbitrary's draw (see the header). */
class DrawnFirst<T> extends fc.Arbitrary<T> {
  constructor(private readonly drawn: Drawn<T>) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    if (biasFactor !== undefined) return this.drawn.arbitrary.generate(mrng, biasFactor);
    const before = mrng.clone();
    return new fc.Value(this.drawn.draw(mrng), new Replay(before));
  }

  canShrinkWithoutContext(value: unknown): value is T {
    return this.drawn.arbitrary.canShrinkWithoutContext(value);
  }

  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    const arbitrary = this.drawn.arbitrary;
    if (!(context instanceof Replay)) return arbitrary.shrink(value, context);
    // fast-check's own generation of the same value, for its shrink context.
    const generated = arbitrary.generate(context.mrng.clone(), undefined);
    return arbitrary.shrink(generated.value, generated.context);
  }
}

/** An arbitrary that generates `drawn`'s values by its fast draw and shrinks as fast-check does. */
export function drawnFirst<T>(drawn: Drawn<T>): fc.Arbitrary<T> {
  return new DrawnFirst(drawn);
}
