// Mutation testing of the shipped code (issue 14). Run through tools/mutation/run.mjs
// (`npm run mutation`, `npm run mutation:incremental`), which gives Stryker the TypeScript 5.9
// JavaScript API it needs to rewrite tsconfig.json; the project itself compiles with typescript 7.
// A subset: `node tools/mutation/run.mjs --mutate src/residency/slot-pool.ts`. See docs/maintainers/mutation.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  // The loader of user allocator modules moved out of src/alloc (it allocates nothing); it is still measured.
  mutate: [
    'src/alloc/**/*.ts',
    'src/residency/**/*.ts',
    'src/gpu/**/*.ts',
    'src/harness/**/*.ts',
    'src/user-allocator-module.ts',
  ],
  // The machine running this locally is shared; the nightly job raises it (--concurrency 2).
  concurrency: 1,
  // Property tests run for seconds; a mutant that loops is cut off at 3x its tests' dry-run time plus this.
  timeoutFactor: 3,
  timeoutMS: 20_000,
  ignorePatterns: ['.fuzz', 'coverage', 'reports', '.stryker-tmp'],
  reporters: ['html', 'json', 'clear-text', 'progress'],
  clearTextReporter: { reportTests: false, reportMutants: true, allowEmojis: false },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Used only with --incremental (npm run mutation:incremental): results of unchanged code and tests are reused.
  incrementalFile: 'reports/stryker-incremental.json',
  thresholds: { high: 90, low: 80, break: null },
  cleanTempDir: 'always',
};
