/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, so CI logs say how many
 * tests ran in a form any reader can check, and the files that took longest before it: CI must
 * finish well inside its time, and a file that grows slow shows there first.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the reporter names. */
export const SLOWEST_FILES = 8;

/** `slowest files: a.test.ts 41.2 s, …` for the `n` files whose tests and hooks took longest. */
export function slowestFilesLine(files: readonly { file: string; ms: number }[], n = SLOWEST_FILES): string {
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, n);
  return `slowest files: ${slowest.map((f) => `${f.file} ${(f.ms / 1000).toFixed(1)} s`).join(', ')}`;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed with no failed test (it did not load, or a hook threw) counts as one.
      failed += mod.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
    }
    const files = testModules.map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration }));
    if (files.length > 1) process.stdout.write(`\n${slowestFilesLine(files)}`);
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
