/**
 * The package's own assertions (src/assert.ts, docs/maintainers/assertions.md): they pass values
 * through, falsy ones included, and fail with their message and the key that was looked up.
 */
import { describe, expect, it } from 'vitest';
import { AssertionFailed, assert, present } from '../src/assert.js';
import { mergeSummaries } from '../src/harness/campaign.js';
import fc from 'fast-check';
import { createEngineImpl } from '../src/systems/engine-frame-side.js';
import { engineFrameSystem } from '../src/systems/engine-frame.js';
import { thrownBy } from './support.js';

describe('assertions', () => {
  it('present() returns what is there, 0, null and empty strings included', () => {
    expect(present(0, 'zero')).toBe(0);
    expect(present(null, 'null')).toBeNull();
    expect(present('', 'empty')).toBe('');
    expect(present(new Map([['a', 1]]).get('a'), 'a')).toBe(1);
  });

  it('present() and assert() fail with their message and the detail', () => {
    const missing = thrownBy(() => present(new Map<string, number>().get('b'), 'no entry', 'b'));
    expect(missing).toBeInstanceOf(AssertionFailed);
    expect((missing as Error).message).toBe('no entry: b');
    expect((missing as Error).name).toBe('AssertionFailed');
    expect(() => present(undefined, 'no entry')).toThrow(/^no entry$/);
    expect(() => assert(false, 'broken', 7)).toThrow(new AssertionFailed('broken: 7'));
    expect(() => assert(true, 'fine')).not.toThrow();
  });

  it('fire where the code looks a key up: merging no summaries, a heap the engine does not have', () => {
    expect(() => mergeSummaries([])).toThrow(/nothing to merge/);
    const [config] = fc.sample(engineFrameSystem.configArb(), { seed: 1, numRuns: 1 });
    const side = createEngineImpl(config!, { probe() {} });
    expect(side.engine.heldBlocks(0)).toBeDefined();
    expect(() => side.engine.heldBlocks(99)).toThrow(
      new AssertionFailed('no such backing heap: 99'),
    );
  });
});
