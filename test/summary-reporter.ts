/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, so CI logs say how many
 * tests ran in a form any reader can check.
 */
import type { Reporter, TestModule } from 'vitest/node';

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
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
