import { configDefaults, defineConfig } from 'vitest/config';
import { corporaExclusions } from './test/corpora-gate.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that read the shared corpora are left out, with a message, where they are absent.
    exclude: [...configDefaults.exclude, ...corporaExclusions(import.meta.dirname)],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more parallel files only make timing-sensitive socket tests flaky.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
