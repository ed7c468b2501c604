/** The corpora gate of vitest.config.ts: which test files need the shared corpora, and what happens without them. */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { corporaExclusions, filesNeedingCorpora } from './corpora-gate.js';

const ROOT = join(__dirname, '..');

describe('corpora gate', () => {
  it('finds the files that read the corpora, directly or through a helper', () => {
    const files = filesNeedingCorpora(ROOT);
    expect(files).toContain(join('test', 'content', 'extract-corpus.test.ts'));
    // Through test/search/corpus.ts and test/fixtures-servers/hn-server.ts.
    expect(files).toContain(join('test', 'search', 'indexer.test.ts'));
    expect(files).toContain(join('test', 'content', 'content-api.test.ts'));
    expect(files).not.toContain(join('test', 'rooms', 'hub.test.ts'));
  });

  it('leaves nothing out where the corpora are, skips with a message where they are not, and fails in CI', () => {
    expect(corporaExclusions(ROOT, {})).toEqual([]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const skipped = corporaExclusions(ROOT, { SALON_CORPORA: '/nonexistent/corpora' });
      expect(skipped).toEqual(filesNeedingCorpora(ROOT));
      expect(warn.mock.calls[0][0]).toContain('set SALON_CORPORA');
    } finally {
      warn.mockRestore();
    }
    expect(() => corporaExclusions(ROOT, { SALON_CORPORA: '/nonexistent/corpora', SALON_REQUIRE_CORPORA: '1' })).toThrow(/SALON_REQUIRE_CORPORA=1/);
  });
});
