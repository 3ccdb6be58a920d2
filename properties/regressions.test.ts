/**
 * Replays every file in regressions/: it must pass against the real implementation and fail
 * against every mutant it names. Also checks the file format's error messages.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { jsonFilesUnder as allFiles } from './support.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_REGISTRY, BUILTIN_SYSTEMS } from '../src/systems/index.js';
import { MUTANTS } from '../mutants/index.js';
import {
  loadRegression,
  parseRegression,
  serializeRegression,
  writeRegression,
  REGRESSION_FORMAT,
  type Lookup,
} from '../src/harness/regression.js';
import { replayRegressions } from '../src/vitest.js';
import { projectFromConfig } from '../src/project.js';
import { InputError } from '../src/harness/json.js';

const ROOT = path.resolve(__dirname, '..', 'regressions');
const lookup: Lookup = {
  findSystem: (name) => BUILTIN_REGISTRY.findSystem(name),
  mutantSystems: new Map(MUTANTS.map((mutant) => [mutant.name, mutant.system])),
};
const systemForFile = (name: string, rawConfig: unknown) =>
  BUILTIN_REGISTRY.systemForFile(name, rawConfig);

const files = allFiles(ROOT);

describe('regressions/', () => {
  it('holds at least one file per registered mutant-bearing system', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    const name = path.relative(ROOT, file);
    it(`${name}: is stored in canonical form, in the current format (round-trips byte for byte)`, async () => {
      const { regression, format } = await loadRegression(
        file,
        lookup.mutantSystems,
        systemForFile,
      );
      expect(format, 'an old format: run npm run regress -- migrate').toBe(REGRESSION_FORMAT);
      expect(readFileSync(file, 'utf8')).toBe(serializeRegression(regression, file));
    });
  }
});

// Each file passes against the implementation and fails against every mutant it names, the one
// it was found against still first with the check recorded then: a fixed, seed-independent proof
// that the check fires. Replayed by the package's own vitest helper, on the repo's project.
replayRegressions({ project: projectFromConfig({}, path.resolve(__dirname, '..'), null) });

describe('every invariant of every system fires in a stored counterexample', () => {
  it('has, per invariant, a regression whose mutant it catches first', async () => {
    const firing = new Map<string, Set<string>>();
    for (const file of files) {
      const { regression } = await loadRegression(file, lookup.mutantSystems, systemForFile);
      if (regression.origin.mutant === undefined || regression.origin.check === undefined) continue;
      if (!regression.catches.includes(regression.origin.mutant)) continue;
      const checks = firing.get(regression.system) ?? new Set<string>();
      checks.add(regression.origin.check);
      firing.set(regression.system, checks);
    }
    const missing: string[] = [];
    for (const system of BUILTIN_SYSTEMS) {
      for (const invariant of system.invariants) {
        if (!firing.get(system.name)?.has(invariant.name))
          missing.push(`${system.name}/${invariant.name}`);
      }
    }
    expect(missing, 'invariants with no stored counterexample that they catch first').toEqual([]);
  });
});

describe('regression file errors name the file and the JSON path', () => {
  const good = {
    format: 2,
    system: 'residency-set',
    description: 'example',
    config: { slotCount: 2, initialCapacity: 2, objectSizesBytes: [1] },
    origin: { tool: 'hand-written', date: '2026-11-30' },
    catches: [],
    commands: [{ op: 'create' }, { op: 'open', set: 0 }],
  };
  const parse = (value: unknown) => parseRegression(JSON.stringify(value), 'x.json', lookup);
  const errorOf = (value: unknown): InputError => {
    try {
      parse(value);
    } catch (error) {
      if (error instanceof InputError) return error;
      throw error;
    }
    throw new Error('expected an InputError');
  };

  it('accepts a well-formed file, and a format-1 file (read as format 2)', () => {
    expect(parse(good).commands).toHaveLength(2);
    expect(parse({ ...good, format: 1 })).toEqual(parse(good));
  });
  it('rejects invalid JSON', () => {
    expect(() => parseRegression('{', 'bad.json', lookup)).toThrow(
      /^bad\.json: \$: not valid JSON/,
    );
  });
  it('rejects an unknown op with its index', () => {
    const error = errorOf({ ...good, commands: [{ op: 'create' }, { op: 'opn', set: 0 }] });
    expect(error.message).toMatch(/^x\.json: \$\.commands\[1\]\.op: unknown op 'opn'/);
  });
  it('rejects a bad field type', () => {
    expect(errorOf({ ...good, commands: [{ op: 'open', set: -1 }] }).jsonPath).toBe(
      '$.commands[0].set',
    );
    expect(errorOf({ ...good, commands: [{ op: 'open' }] }).message).toMatch(
      /\$\.commands\[0\]\.set: missing field/,
    );
    expect(errorOf({ ...good, commands: [{ op: 'open', set: 0, sett: 1 }] }).message).toMatch(
      /\$\.commands\[0\]\.sett: unknown field/,
    );
  });
  it('rejects an unknown system, format, mutant or a bad config', () => {
    expect(errorOf({ ...good, system: 'nope' }).jsonPath).toBe('$.system');
    expect(errorOf({ ...good, format: 3 }).jsonPath).toBe('$.format');
    expect(errorOf({ ...good, description: 7 }).message).toMatch(
      /^x\.json: \$\.description: expected string, got 7/,
    );
    expect(errorOf({ ...good, origin: { tool: 'x' } }).jsonPath).toBe('$.origin.date');
    expect(errorOf({ ...good, extra: 1 }).message).toMatch(/^x\.json: \$\.extra: unknown field/);
    expect(errorOf({ ...good, catches: ['no-such-mutant'] }).jsonPath).toBe('$.catches[0]');
    expect(errorOf({ ...good, catches: ['bf-chooses-first-fit'] }).message).toMatch(
      /\$\.catches\[0\]: mutant 'bf-chooses-first-fit' belongs to system alloc-best-fit/,
    );
    expect(errorOf({ ...good, commands: [] }).jsonPath).toBe('$.commands');
    expect(errorOf({ ...good, commands: [{ op: 'create', toString: 1 }] }).jsonPath).toBe(
      '$.commands[0].toString',
    );
    expect(
      errorOf({
        ...good,
        config: JSON.parse(
          '{"slotCount":2,"initialCapacity":2,"objectSizesBytes":[1],"__proto__":{}}',
        ),
      }).jsonPath,
    ).toBe('$.config.__proto__');
    expect(errorOf({ ...good, config: { ...good.config, initialCapacity: 1 } }).message).toMatch(
      /\$\.config: initialCapacity must be >= 2/,
    );
    expect(errorOf({ ...good, config: { slotCount: 2 } }).jsonPath).toBe(
      '$.config.initialCapacity',
    );
  });
  it('never overwrites a file without force, and writes the same bytes for the same regression', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'regress-'));
    const file = path.join(dir, 'residency-set', 'a.json');
    const regression = parse(good);
    writeRegression(file, regression, false);
    const first = readFileSync(file, 'utf8');
    expect(() => writeRegression(file, regression, false)).toThrow(/--force/);
    writeFileSync(file, 'changed');
    writeRegression(file, regression, true);
    expect(readFileSync(file, 'utf8')).toBe(first);
    expect(parseRegression(first, file, lookup)).toEqual(regression);
  });
});
