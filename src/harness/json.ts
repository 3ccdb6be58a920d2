/**
 * Plain JSON values, the error that names a bad input, and JSON equality and diffs.
 *
 * Commands, configs and observations are plain data so that a sequence can be written to a
 * regression file, read back without fast-check, and replayed byte for byte. Every read of an
 * external file is checked by a schema (schema.ts), and an `InputError` names the file and the
 * JSON path of the first bad field.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

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

/**
 * Structural equality of two JSON values (key order ignored). The runner compares the two
 * observations of every step with it, so members are compared in place where they are equal
 * or not objects, and only nested objects and arrays recurse.
 */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameMember(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  for (let i = 0; i < aKeys.length; i++) {
    const key = aKeys[i]!;
    if (!(key in b) || !sameMember(a[key], b[key])) return false;
  }
  return true;
}

/** jsonEqual of two members: identical values (and unequal non-objects) answered without a call. */
function sameMember(a: Json | undefined, b: Json | undefined): boolean {
  return a === b || (typeof a === 'object' && jsonEqual(a, b));
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
      a !== null &&
      b !== null &&
      typeof a === 'object' &&
      typeof b === 'object' &&
      Array.isArray(a) === Array.isArray(b);
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
    for (const key of new Set([...Object.keys(ao), ...Object.keys(bo)]))
      walk(ao[key], bo[key], `${at}.${key}`);
  };
  walk(model, impl, '');
  if (lines.length >= maxLines) lines.push('... (diff truncated)');
  return lines;
}
