import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['properties/**/*.test.ts'],
    // At least two files at a time: vitest's default (one worker per core but one) runs the files
    // one by one on two cores, leaving a core idle whenever a file waits on its child processes
    // (docs/measurements.md, `npm test`).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 120_000,
    hookTimeout: 120_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts', 'models/**/*.ts'],
      exclude: ['src/cli/**'],
      reporter: ['text-summary', 'text'],
      thresholds: { lines: 92, functions: 92, branches: 82, statements: 90 },
    },
  },
});
