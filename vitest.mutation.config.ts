/**
 * Vitest config for mutation runs (stryker.config.mjs): the suites that hold the behaviour of the
 * mutated code (src/alloc, src/residency, src/gpu, src/harness). Left out: cli-args (src/cli is not
 * mutated). Everything else is as in vitest.config.ts; coverage is Stryker's own (perTest).
 *
 * MUTATION_SUITES=residency-set,self-checks narrows a local run to the suites whose file name
 * starts with one of the given prefixes (with `--mutate` on the files those suites hold): a
 * smaller dry run, and a suite someone else is changing cannot fail it. The nightly job and
 * `npm run mutation` leave it unset.
 */
import { defineConfig } from 'vitest/config';

const SUITES = [
  'alloc',
  'alloc-user',
  'deferred-free',
  'residency-manager',
  'residency-set',
  'ring-upload',
  'regressions',
  'campaign',
  'files',
  'schemas',
  'self-checks*',
  'misuse*',
];

const only = (process.env.MUTATION_SUITES ?? '').split(',').map((prefix) => prefix.trim()).filter((prefix) => prefix !== '');
const unknown = only.filter((prefix) => !SUITES.some((suite) => suite.startsWith(prefix) || prefix.startsWith(suite.replace('*', ''))));
if (unknown.length > 0) throw new Error(`MUTATION_SUITES: no suite starts with ${unknown.join(', ')} (suites: ${SUITES.join(', ')})`);
const include = (only.length === 0 ? SUITES : only.map((prefix) => `${prefix}*`)).map((suite) => `properties/${suite}.test.ts`);

export default defineConfig({
  test: {
    include,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
