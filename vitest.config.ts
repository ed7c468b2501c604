import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more parallel files only make timing-sensitive socket tests flaky.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
