import { describe, expect, it } from 'vitest';
import { SLOWEST_FILES, countsLine, slowestFilesLine } from './summary-reporter.js';

describe('the summary reporter', () => {
  it('names the slowest files first, in seconds, and no more than it was asked for', () => {
    const files = Array.from({ length: SLOWEST_FILES + 3 }, (_, i) => ({ file: `test/f${i}.test.ts`, ms: ((i * 7) % 11) * 1000 + 250 }));
    const line = slowestFilesLine(files);
    expect(line.startsWith('slowest files: test/f3.test.ts 10.3 s, test/f6.test.ts 9.3 s, ')).toBe(true);
    expect(line.split(', ')).toHaveLength(SLOWEST_FILES);
    expect(line).not.toContain('test/f0.test.ts');
    expect(slowestFilesLine(files.slice(0, 2), 5)).toBe('slowest files: test/f1.test.ts 7.3 s, test/f0.test.ts 0.3 s');
  });

  it('keeps the plain counts line for a clean run, and names unfinished tests and errors outside tests where there are any', () => {
    expect(countsLine({ passed: 5, failed: 0, skipped: 1, unfinished: 0, errors: 0 })).toBe('vitest: 5 passed, 0 failed, 1 skipped');
    // A worker that died mid-file: its tests never ended, and vitest reports the exit as an unhandled error.
    expect(countsLine({ passed: 2277, failed: 0, skipped: 0, unfinished: 1, errors: 1 })).toBe(
      'vitest: 2277 passed, 0 failed, 0 skipped, 1 unfinished, 1 errors outside tests',
    );
    expect(countsLine({ passed: 3, failed: 1, skipped: 0, unfinished: 0, errors: 2 })).toBe('vitest: 3 passed, 1 failed, 0 skipped, 2 errors outside tests');
  });
});
