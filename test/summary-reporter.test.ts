import { describe, expect, it } from 'vitest';
import { SLOWEST_FILES, slowestFilesLine } from './summary-reporter.js';

describe('the summary reporter', () => {
  it('names the slowest files first, in seconds, and no more than it was asked for', () => {
    const files = Array.from({ length: SLOWEST_FILES + 3 }, (_, i) => ({ file: `test/f${i}.test.ts`, ms: ((i * 7) % 11) * 1000 + 250 }));
    const line = slowestFilesLine(files);
    expect(line.startsWith('slowest files: test/f3.test.ts 10.3 s, test/f6.test.ts 9.3 s, ')).toBe(true);
    expect(line.split(', ')).toHaveLength(SLOWEST_FILES);
    expect(line).not.toContain('test/f0.test.ts');
    expect(slowestFilesLine(files.slice(0, 2), 5)).toBe('slowest files: test/f1.test.ts 7.3 s, test/f0.test.ts 0.3 s');
  });
});
