/**
 * First fit's hot code writes its layout and sentinel constants as literals tagged with their
 * names (`4 /* F64_PER_NODE *\/`, see src/alloc/first-fit-blocks.ts for why). Every tag must name
 * an exported constant of the first-fit modules and carry its value, so a changed layout cannot
 * leave a stale literal behind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as blocks from '../src/alloc/first-fit-blocks.js';
import * as index from '../src/alloc/first-fit-index.js';
import * as offsets from '../src/alloc/first-fit-offsets.js';
import * as allocator from '../src/alloc/first-fit.js';

const ALLOC = path.resolve(__dirname, '..', 'src', 'alloc');
const CONSTANTS: Record<string, unknown> = { ...blocks, ...index, ...offsets, ...allocator };
/** A literal (with an optional minus sign) followed by a comment holding one upper-case name. */
const TAG = /(-?\b\d+)\s*\/\*\s*([A-Z][A-Z0-9_]*)\s*\*\//g;

/** Every tagged literal of a source text: [line, literal, name]. */
function taggedLiterals(source: string): [number, number, string][] {
  const found: [number, number, string][] = [];
  for (const match of source.matchAll(TAG)) {
    const line = source.slice(0, match.index).split('\n').length;
    found.push([line, Number(match[1]), match[2]!]);
  }
  return found;
}

describe('first fit: tagged literals', () => {
  const files = readdirSync(ALLOC).filter((file) => /^first-fit.*\.ts$/.test(file));

  it('finds the tags in each hot file (the scan is not vacuous)', () => {
    const count = (file: string) =>
      taggedLiterals(readFileSync(path.join(ALLOC, file), 'utf8')).length;
    for (const file of [
      'first-fit.ts',
      'first-fit-index.ts',
      'first-fit-offsets.ts',
      'first-fit-blocks.ts',
    ])
      expect(count(file), file).toBeGreaterThan(0);
    // 95 when this was written: alloc's and free's paths hold most of them.
    expect(files.reduce((sum, file) => sum + count(file), 0)).toBeGreaterThan(80);
  });

  it.each(files)('%s: each tag carries the value of the constant it names', (file) => {
    for (const [line, literal, name] of taggedLiterals(
      readFileSync(path.join(ALLOC, file), 'utf8'),
    ))
      expect(
        { at: `${file}:${line}`, name, literal },
        `${file}:${line} tags ${literal} as ${name}`,
      ).toEqual({ at: `${file}:${line}`, name, literal: CONSTANTS[name] });
  });

  it('tells a stale literal and an unknown name apart from a good tag', () => {
    const check = (source: string) =>
      taggedLiterals(source).filter(([, literal, name]) => CONSTANTS[name] !== literal).length;
    expect(check('f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */]; x === -1 /* NIL */')).toBe(0);
    expect(check('f64[node * 8 /* F64_PER_NODE */ + 1 /* SIZE */]')).toBe(1);
    expect(check('x === 1 /* NIL */')).toBe(1);
    expect(check('x === -1 /* NO_SUCH_CONSTANT */')).toBe(1);
  });
});
