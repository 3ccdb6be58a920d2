/**
 * Plain JSON values and the field schemas that validate them.
 *
 * Commands, configs and observations are plain data so that a sequence can be written to a
 * regression file, read back without fast-check, and replayed byte for byte. Every read of an
 * external file goes through `parseFields`, which names the file and the JSON path of the first
 * bad field.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Field kinds a command or config may use. */
export type FieldType =
  | 'int'
  | 'nat'
  | 'bool'
  | 'string'
  | 'int[]'
  | 'nat[]'
  | '(nat|null)[]'
  | 'json';

export type FieldSchema = Readonly<Record<string, FieldType>>;

/** A malformed input: names the source (file or argument) and the JSON path. */
export class InputError extends Error {
  constructor(
    readonly source: string,
    readonly jsonPath: string,
    readonly detail: string,
  ) {
    super(`${source}: ${jsonPath}: ${detail}`);
    this.name = 'InputError';
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkField(source: string, at: string, type: FieldType, value: unknown): Json {
  const fail = (what: string): never => {
    throw new InputError(source, at, `expected ${what}, got ${JSON.stringify(value) ?? String(value)}`);
  };
  switch (type) {
    case 'int':
      if (!Number.isSafeInteger(value)) fail('an integer');
      return value as number;
    case 'nat':
      if (!Number.isSafeInteger(value) || (value as number) < 0) fail('a non-negative integer');
      return value as number;
    case 'bool':
      if (typeof value !== 'boolean') fail('true or false');
      return value as boolean;
    case 'string':
      if (typeof value !== 'string') fail('a string');
      return value as string;
    case 'int[]':
    case 'nat[]':
    case '(nat|null)[]': {
      if (!Array.isArray(value)) fail('an array');
      const element: FieldType = type === 'int[]' ? 'int' : 'nat';
      return (value as unknown[]).map((item, index) =>
        type === '(nat|null)[]' && item === null ? null : checkField(source, `${at}[${index}]`, element, item),
      );
    }
    case 'json':
      return value as Json;
  }
}

/**
 * Validates `value` as an object holding exactly the fields of `schema` (plus any names in
 * `extra`, which are returned untouched). Unknown fields are errors: a typo in a regression
 * file must not be silently ignored.
 */
export function parseFields(
  source: string,
  at: string,
  value: unknown,
  schema: FieldSchema,
  extra: readonly string[] = [],
): JsonObject {
  if (!isPlainObject(value)) {
    throw new InputError(source, at, `expected an object, got ${JSON.stringify(value)}`);
  }
  const out: JsonObject = {};
  for (const key of extra) if (Object.hasOwn(value, key)) out[key] = value[key] as Json;
  for (const [key, type] of Object.entries(schema)) {
    if (!Object.hasOwn(value, key)) throw new InputError(source, `${at}.${key}`, `missing field (${type})`);
    out[key] = checkField(source, `${at}.${key}`, type, value[key]);
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(schema, key) && !extra.includes(key)) {
      throw new InputError(source, `${at}.${key}`, `unknown field; expected one of: ${[...Object.keys(schema), ...extra].join(', ')}`);
    }
  }
  return out;
}

/** Structural equality of two JSON values (key order ignored). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  for (const key of aKeys) if (!(key in b) || !jsonEqual(a[key], b[key])) return false;
  return true;
}

/**
 * A readable diff of two JSON values: one line per differing leaf, `path: model => impl`.
 * Bounded to `maxLines` so a huge state cannot flood a report.
 */
export function jsonDiff(model: Json | undefined, impl: Json | undefined, maxLines = 40): string[] {
  const lines: string[] = [];
  const walk = (a: Json | undefined, b: Json | undefined, at: string): void => {
    if (lines.length >= maxLines) return;
    if (jsonEqual(a, b)) return;
    const bothObjects =
      a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b);
    if (!bothObjects) {
      lines.push(`${at || '(root)'}: model ${JSON.stringify(a)} => impl ${JSON.stringify(b)}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) lines.push(`${at}.length: model ${a.length} => impl ${b.length}`);
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${at}[${i}]`);
      return;
    }
    const ao = a as JsonObject;
    const bo = b as JsonObject;
    for (const key of new Set([...Object.keys(ao), ...Object.keys(bo)])) walk(ao[key], bo[key], `${at}.${key}`);
  };
  walk(model, impl, '');
  if (lines.length >= maxLines) lines.push('... (diff truncated)');
  return lines;
}
