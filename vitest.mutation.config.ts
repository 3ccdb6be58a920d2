/**
 * Vitest config for mutation runs (stryker.config.mjs): every property suite except those that
 * hold no behaviour of the mutated code (src/alloc, src/residency, src/gpu, src/harness):
 * cli-args (src/cli is not mutated) and package (packs and installs the project: minutes, and
 * nothing it checks is in the mutated files). Otherwise as vitest.config.ts; coverage is
 * Stryker's own (perTest).
 *
 * MUTATION_SUITES=residency-set,self-checks narrows a local run to the suites whose file name
 * starts with one of the given prefixes (with `--mutate` on the files those suites hold): a
 * smaller dry run, and a suite someone else is changing cannot fail it. The nightly job and
 * `npm run mutation` leave it unset.
 */
import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const LEFT_OUT = ['cli-args.test.ts', 'package.test.ts'];
const suites = readdirSync('properties').filter(
  (name) => name.endsWith('.test.ts') && !LEFT_OUT.includes(name),
);
const only = (process.env.MUTATION_SUITES ?? '')
  .split(',')
  .map((prefix) => prefix.trim())
  .filter((prefix) => prefix !== '');
const unknown = only.filter((prefix) => !suites.some((suite) => suite.startsWith(prefix)));
if (unknown.length > 0)
  throw new Error(
    `MUTATION_SUITES: no suite starts with ${unknown.join(', ')} (suites: ${suites.join(', ')})`,
  );
const chosen =
  only.length === 0
    ? suites
    : suites.filter((suite) => only.some((prefix) => suite.startsWith(prefix)));

export default defineConfig({
  test: {
    include: chosen.map((suite) => `properties/${suite}`),
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
