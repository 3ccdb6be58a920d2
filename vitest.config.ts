import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['properties/**/*.test.ts'],
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
