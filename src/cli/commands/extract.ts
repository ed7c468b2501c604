/**
 * `salon extract FILE... [--url URL] [--json]`: extracts the article of saved HTML files (plain
 * or gzipped) and prints one JSON object per file and line, `{file, title, byline,
 * publishedTime, siteName, excerpt, text}` or `{file, error}`. One bad file never stops the rest;
 * the exit code is 0 only when every file was extracted.
 */
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { loadConfig } from '../../config.js';
import { extractArticle, type ExtractedArticle } from '../../content/extract/index.js';
import { parseArgs, type Command } from '../command.js';
import { printable } from '../printable.js';

const GZIP_MAGIC = [0x1f, 0x8b];
const USAGE = 'extract FILE... [--url URL] [--json]';

/** The file's bytes, gunzipped when they start with the gzip magic bytes (whatever the name). */
export async function readHtmlFile(file: string): Promise<Buffer> {
  const bytes = await readFile(file);
  return bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1] ? gunzipSync(bytes) : bytes;
}

type Line = { file: string } & (Pick<ExtractedArticle, 'title' | 'byline' | 'publishedTime' | 'siteName' | 'excerpt' | 'text'> | { error: string });

function readable(line: Line): string {
  if ('error' in line) return `${line.file}: error: ${printable(line.error)}\n`;
  const meta = [line.byline && `by ${line.byline}`, line.siteName, line.publishedTime].filter(Boolean).join(' · ');
  return `== ${line.file}\n${line.title}\n${meta ? `${meta}\n` : ''}\n${line.text}\n\n`;
}

const extract: Command = {
  summary: 'print the article extracted from saved HTML files (.html or .html.gz)',
  usage: USAGE,
  flags: ['url', 'json'],
  async run(args) {
    const { positionals: files, options } = parseArgs(args, ['json']);
    const url = options.get('url');
    if (files.length === 0 || url === true) {
      console.error(`usage: salon ${USAGE}`);
      return 2;
    }
    const maxChars = loadConfig().BODY_MAX_CHARS;
    const json = options.has('json');
    let failures = 0;
    for (const file of files) {
      let line: Line;
      try {
        const a = extractArticle(await readHtmlFile(file), { url, maxChars });
        line = { file, title: a.title, byline: a.byline, publishedTime: a.publishedTime, siteName: a.siteName, excerpt: a.excerpt, text: a.text };
      } catch (err) {
        failures++;
        line = { file, error: err instanceof Error ? err.message : String(err) };
      }
      process.stdout.write(json ? `${JSON.stringify(line)}\n` : readable(line));
    }
    return failures === 0 ? 0 : 1;
  },
};
export default extract;
