import { configDefaults, defineConfig } from 'vitest/config';
import { corporaExclusions } from './test/corpora-gate.js';
import FileSizeSequencer from './test/file-order.js';

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
    // Files share their worker process and its loaded modules: importing the app afresh for each of
    // 143 files took a third of the suite (import 204 s of 640 s; the suite 455 s → 305 s shared).
    // Each file starts its own apps, stores and servers; between-files.ts fails one that leaves fake
    // timers on, and no module keeps state a test depends on between files (docs/architecture.md).
    isolate: false,
    setupFiles: ['./test/between-files.ts'],
    // Largest files first, as CI (which has no results cache) runs them, whatever a local run's cache holds.
    sequence: { sequencer: FileSizeSequencer },
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
