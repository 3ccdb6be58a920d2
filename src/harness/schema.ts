/**
 * One schema language for every piece of data the harness reads or writes: system configs,
 * commands, regression files and campaign summaries.
 *
 * TypeBox is the schema library: a declaration is a JSON Schema object (so `schema/*.json` is the
 * declaration itself, written out), TypeBox's `Static` gives its TypeScript type, and its value
 * checker validates at run time with the JSON pointer of every bad field, which `parseWith`
 * turns into an `InputError` naming the file and the JSON path (`$.commands[3].sizeBytes`).
 */
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { InputError } from './json.js';

export { Type, type Static, type TObject, type TProperties, type TSchema };

/** An integer in the safe range (every count, size and offset of the harness). */
export const Int = (options: { readonly minimum?: number; readonly description?: string } = {}) =>
  Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options });
/** A non-negative safe integer. */
export const Nat = (options: { readonly description?: string } = {}) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...options });
export const Bool = (options: { readonly description?: string } = {}) => Type.Boolean(options);
export const Str = (options: { readonly description?: string } = {}) => Type.String(options);
/** One of a fixed set of strings. */
export const OneOf = <const V extends string>(
  values: readonly V[],
  options: { readonly description?: string } = {},
) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );

/** An object with exactly these fields: an unknown field is an error, a typo in a file is never ignored. */
export function Strict<P extends TProperties>(
  properties: P,
  options: { readonly description?: string; readonly title?: string } = {},
): TObject<P> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** `/commands/3/sizeBytes` under `$` -> `$.commands[3].sizeBytes`. */
export function jsonPathOf(at: string, pointer: string): string {
  if (pointer === '') return at;
  let out = at;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(key) ? `[${key}]` : `.${key}`;
  }
  return out;
}

function shown(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** The allowed values of a union of literals, for a readable message. */
function literalChoices(schema: TSchema): string | null {
  const anyOf = (schema as { anyOf?: readonly TSchema[] }).anyOf;
  if (anyOf === undefined || !anyOf.every((member) => 'const' in member)) return null;
  return anyOf.map((member) => shown((member as TSchema & { const: unknown }).const)).join(', ');
}

/** Reads the value at a JSON pointer (for the "got ..." part of a message). */
function valueAt(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current: unknown = value;
  for (const key of pointer.slice(1).split('/')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return current;
}

/** What is wrong with `value` against `schema`, as (JSON path, detail) of the first bad field, or null. */
export function firstProblem(
  schema: TSchema,
  value: unknown,
  at = '$',
): { readonly jsonPath: string; readonly detail: string } | null {
  if (Value.Check(schema, value)) return null;
  const first = Value.Errors(schema, value).First();
  if (first === undefined) return { jsonPath: at, detail: 'does not match its schema' };
  const jsonPath = jsonPathOf(at, first.path);
  const got = valueAt(value, first.path);
  const message = first.message.replace(/^Expected /, 'expected ');
  if (/required property/.test(first.message)) return { jsonPath, detail: 'missing field' };
  if (/Unexpected property/.test(first.message)) {
    // The error's schema is the object that refused the field.
    const known = Object.keys(
      (first.schema as { properties?: Record<string, unknown> }).properties ?? {},
    );
    return { jsonPath, detail: `unknown field; expected one of: ${known.join(', ')}` };
  }
  const choices = literalChoices(first.schema);
  if (choices !== null)
    return { jsonPath, detail: `expected one of ${choices}, got ${shown(got)}` };
  return { jsonPath, detail: `${message}, got ${shown(got)}` };
}

/**
 * Validates `value` against `schema` and returns it typed; otherwise throws an InputError naming
 * `source` (a file or an argument) and the JSON path of the first bad field.
 */
export function parseWith<T extends TSchema>(
  schema: T,
  value: unknown,
  source: string,
  at = '$',
): Static<T> {
  const problem = firstProblem(schema, value, at);
  if (problem !== null) throw new InputError(source, problem.jsonPath, problem.detail);
  return value as Static<T>;
}
