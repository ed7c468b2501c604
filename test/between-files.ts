/**
 * Runs with every test file (vitest.config.ts, setupFiles). Test files share their worker process
 * (isolate: false), so what one file leaves switched on in the process would reach the files after
 * it: a file that ends with fake timers fails here, and the next file starts with real ones.
 */
import { afterAll, vi } from 'vitest';

afterAll(() => {
  if (!vi.isFakeTimers()) return;
  vi.useRealTimers();
  throw new Error('this test file left fake timers on: restore them (vi.useRealTimers) in its afterEach or finally');
});
