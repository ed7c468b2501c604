import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateItem } from '../../src/content/items.js';
import { chunkItem } from '../../src/content/ingest/chunker.js';
import { FRONT_MATTER_MAX_CHARS, markdownFiles, markdownToText, postFromMarkdown, readPostFile, readableBody } from '../../src/content/sources/posts.js';
import { CORPORA, tempDir } from '../helpers.js';
import { splitSentences } from '../../src/ai/local/extractive-text.js';
import { squash } from '../../src/text.js';

const opts = { bodyMaxChars: 200_000 };

const POST = `---
id: slow-web
title: "The case for a slower web"
author: Ada Example
category: Culture
publishedAt: 2025-03-04T09:30:00Z
description: Why pages that load less can say more.
image: /demo/img/p01.svg
---
# The case for a slower web

Pages used to be *small*. Then they were **not**; see [the archive](https://example.com/archive).

- first point
- second point

\`\`\`
const x = 1;
  indented();
\`\`\`

> A quoted line &amp; an entity.
`;

describe('a post’s table', () => {
  it('reads a row as a sentence: its first cell, then each cell after its heading, apart by a dash, a stop at its end', () => {
    const md = 'Key dates\n\n| Date | What happens |\n|---|---|\n| 8 July 2026 | Act **passed** |\n| 1 January 2027 | Rules apply. |\n\nAfter.';
    expect(markdownToText(md)).toBe('Key dates\n\n8 July 2026 — What happens: Act passed.\n1 January 2027 — What happens: Rules apply.\n\nAfter.');
  });

  it('starts a row with a capital, so that it does not run on from the row before it', () => {
    const md = '| Date | What happens |\n|---|---|\n| 8 July 2026 | Act passed |\n| by 8 January 2027 | List published |';
    const text = markdownToText(md);
    expect(text).toBe('8 July 2026 — What happens: Act passed.\nBy 8 January 2027 — What happens: List published.');
    expect(splitSentences(squash(text)).map((s) => s.text)).toEqual([
      '8 July 2026 — What happens: Act passed.',
      'By 8 January 2027 — What happens: List published.',
    ]);
  });

  it('leaves out empty cells and empty rows, reads headings as plain text, and a table of headings alone as its headings', () => {
    const md = '| **Metric** | `2024` | Change |\n|---|---|---|\n| Revenue | €2.31m | |\n| | | |\n| People who left | | -3 |';
    expect(markdownToText(md)).toBe('Revenue — 2024: €2.31m.\nPeople who left — Change: -3.');
    expect(markdownToText('| Date | What happens |\n|---|---|')).toBe('Date — What happens.');
  });

  it('reads a cell’s inline HTML as the text it shows', () => {
    expect(markdownToText('| a | b |\n|---|---|\n| <b>x</b> | 1 < 2 |')).toBe('X — b: 1 < 2.');
  });
});

describe('postFromMarkdown', () => {
  it('reads the front matter and keeps the markdown as the body; its text is what is indexed', () => {
    const item = validateItem(postFromMarkdown(POST, 'ignored-name.md'), opts);
    expect(item).toMatchObject({
      id: 'post_slow-web',
      kind: 'post',
      title: 'The case for a slower web',
      author: 'Ada Example',
      category: 'Culture',
      publishedAt: '2025-03-04T09:30:00.000Z',
      description: 'Why pages that load less can say more.',
      image: '/demo/img/p01.svg',
      source: 'markdown',
    });
    // The leading heading repeats the title, so it is not part of the body.
    expect(item.body.startsWith('Pages used to be *small*. Then they were **not**; see [the archive](https://example.com/archive).')).toBe(true);
    expect(item.body).toContain('- first point');
    const text =
      'Pages used to be small. Then they were not; see the archive.\n\nfirst point\nsecond point\n\nconst x = 1;\n  indented();\n\nA quoted line & an entity.';
    expect(readableBody(item)).toBe(text);
    // The chunks hold the text, not the markup.
    const body = chunkItem(item, { size: 1000, overlap: 100 }).filter((c) => c.part === 'body');
    expect(body.map((c) => c.text).join('\n')).toBe(text);
    // Other kinds' bodies are text already.
    expect(readableBody({ kind: 'news', body: '**as is**' })).toBe('**as is**');
  });

  it('falls back to the file name for the id, the first heading for the title, the body for the description', () => {
    const item = validateItem(postFromMarkdown('# Hello World\n\nSome text here. More text.', 'My First Post!.md'), opts);
    expect(item).toMatchObject({
      id: 'post_My-First-Post',
      title: 'Hello World',
      description: 'Some text here. More text.',
      body: 'Some text here. More text.',
    });
    // Without a description, the description is the start of the body's text, not its markup.
    expect(validateItem(postFromMarkdown('# T\n\nSome **bold** words.', 'b.md'), opts)).toMatchObject({
      description: 'Some bold words.',
      body: 'Some **bold** words.',
    });
  });

  it('takes a heading’s text without its closing #s, reading its line once however it ends', () => {
    expect(postFromMarkdown('Intro.\n\n## Hello World ## \n\nText.', 'h.md').title).toBe('Hello World');
    expect(postFromMarkdown('#   \n\nText.', 'h.md').title).toBe(' ');
    expect(postFromMarkdown('# ##\n\nText.', 'h.md').title).toBe('#');
    for (const run of [' ', ' #', '\t#']) {
      const title = postFromMarkdown(`# a${run.repeat(200_000)}b\n\nText.`, 'h.md').title as string;
      expect(title.startsWith('a') && title.endsWith('b') && title.length).toBe(run.length * 200_000 + 2);
    }
    // A backtracking pattern takes minutes on these; the test's own timeout is the guard.
  }, 10_000);

  it('accepts date: as publishedAt and unquoted YAML dates', () => {
    const item = validateItem(postFromMarkdown('---\ntitle: T\ndate: 2024-01-02\n---\nBody.', 'a.md'), opts);
    expect(item.publishedAt).toBe('2024-01-02T00:00:00.000Z');
  });

  it('fails clearly on bad front matter', () => {
    expect(() => postFromMarkdown('---\ntitle: [unclosed\n---\nx', 'bad.md')).toThrow(/bad\.md: front matter is not valid YAML/);
    expect(() => postFromMarkdown('---\n- a\n- b\n---\nx', 'list.md')).toThrow(/list\.md: front matter must be a mapping/);
    expect(() => postFromMarkdown('---\nid: "not valid!"\ntitle: x\n---\n', 'x.md')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CONTENT' }));
    expect(() => validateItem(postFromMarkdown('no title anywhere', 'x.md'), opts)).toThrow(/title/);
  });

  it('refuses front matter past FRONT_MATTER_MAX_CHARS before parsing it, whose keys YAML compares pairwise', () => {
    const keys = (n: number) => `---\n${Array.from({ length: n }, (_, i) => `k${i}: v`).join('\n')}\ntitle: T\n---\nBody.`;
    expect(postFromMarkdown(keys(100), 'few.md').title).toBe('T');
    expect(() => postFromMarkdown(keys(20_000), 'many.md')).toThrow(
      expect.objectContaining({
        code: 'ERR_INVALID_CONTENT',
        message: expect.stringContaining(`many.md: front matter is longer than ${FRONT_MATTER_MAX_CHARS}`),
      }),
    );
  });

  it('renders adversarial markdown quickly', () => {
    const dir = join(CORPORA, 'markdown/marked-redos/test/specs/redos');
    const inputs = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
    inputs.push('a' + ' '.repeat(50_000) + 'b', '*'.repeat(50_000), '['.repeat(50_000));
    for (const md of inputs) expect(typeof markdownToText(md)).toBe('string');
    // A catastrophic backtracker takes minutes on these; the test's own timeout is the guard.
  }, 10_000);
});

describe('posts folder', () => {
  const { dir, cleanup } = tempDir();
  afterAll(cleanup);

  it('reads every markdown file, reporting a bad one without losing the others', async () => {
    writeFileSync(join(dir, 'b.md'), POST);
    writeFileSync(join(dir, 'a.markdown'), '---\ntitle: A\n---\nText of a.');
    writeFileSync(join(dir, 'c.md'), '---\ntitle: [oops\n---\n');
    writeFileSync(join(dir, 'notes.txt'), 'not a post');
    const files = await markdownFiles(dir);
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['a.markdown', 'b.md', 'c.md']);
    const entries = await Promise.all(files.map((f) => readPostFile(f)));
    expect(entries.map((e) => ('error' in e ? e.error.code : (e.item as { id: string }).id))).toEqual(['post_a', 'post_slow-web', 'ERR_INVALID_CONTENT']);
    const missing = await readPostFile(join(dir, 'nope.md'));
    expect('error' in missing && missing.error.message).toMatch(/cannot be read/);
  });
});
