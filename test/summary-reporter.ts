/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, so CI logs say how many
 * tests ran in a form any reader can check, and the files that took longest before it: CI must
 * finish well inside its time, and a file that grows slow shows there first. A run that went wrong
 * outside its tests says so on the same line (countsLine).
 */
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/** How many of the slowest files the reporter names. */
export const SLOWEST_FILES = 8;

/** `slowest files: a.test.ts 41.2 s, …` for the `n` files whose tests and hooks took longest. */
export function slowestFilesLine(files: readonly { file: string; ms: number }[], n = SLOWEST_FILES): string {
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, n);
  return `slowest files: ${slowest.map((f) => `${f.file} ${(f.ms / 1000).toFixed(1)} s`).join(', ')}`;
}

/** What a run's tests came to, and what went wrong outside them. */
export interface RunCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** Tests that began and never ended: their worker died (a process.exit, a crash) mid-file. */
  unfinished: number;
  /** Errors outside any test (vitest's unhandled errors): a worker that exited, an unhandled rejection. */
  errors: number;
}

/**
 * `vitest: N passed, N failed, N skipped`, then `, N unfinished` and `, N errors outside tests`
 * where there are any: a worker that died mid-file left its tests pending, which read as skipped,
 * and the line said `0 failed` of a run that failed.
 */
export function countsLine(c: RunCounts): string {
  const extra = [c.unfinished && `${c.unfinished} unfinished`, c.errors && `${c.errors} errors outside tests`].filter(Boolean);
  return `vitest: ${[`${c.passed} passed`, `${c.failed} failed`, `${c.skipped} skipped`, ...extra].join(', ')}`;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let unfinished = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else if (state === 'pending') unfinished++;
        else skipped++;
      }
      // A file that failed with no failed test (it did not load, or a hook threw) counts as one.
      failed += mod.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
    }
    const files = testModules.map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration }));
    if (files.length > 1) process.stdout.write(`\n${slowestFilesLine(files)}`);
    process.stdout.write(`\n${countsLine({ passed, failed, skipped, unfinished, errors: unhandledErrors.length })}\n`);
  }
}
