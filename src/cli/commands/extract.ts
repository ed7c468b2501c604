/**
 * `salon extract FILE... [--url URL] [--json]`: extracts the article of saved HTML files (plain
 * or gzipped) and prints one JSON object per file and line, `{file, title, byline,
 * publishedTime, siteName, excerpt, text}` or `{file, error}`. One bad file never stops the rest;
 * the exit code is 0 only when every file was extracted.
 */
import { stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { loadConfig } from '../../config.js';
import { extractArticle, type ExtractedArticle } from '../../content/extract/index.js';
import { LOCAL_FILE_MAX_BYTES, readLocalFile } from '../../local-files.js';
import { parseArgs, type Command } from '../command.js';
import { printable, printableJson } from '../printable.js';

const GZIP_MAGIC = [0x1f, 0x8b];
const USAGE = 'extract FILE... [--url URL] [--json]';
/** The most bytes a page may hold, read and then unpacked: a saved page is far smaller. */
const HTML_FILE_MAX_BYTES = LOCAL_FILE_MAX_BYTES;
const MAX_MIB = HTML_FILE_MAX_BYTES / (1024 * 1024);

/**
 * The file's bytes, gunzipped when they start with the gzip magic bytes (whatever the name), at
 * most HTML_FILE_MAX_BYTES either way. Read whole and unpacked unbounded, a FIFO or `/dev/zero`
 * never ended and a small gzip bomb ran the command out of memory, stopping the files after it.
 */
export async function readHtmlFile(file: string): Promise<Buffer> {
  // stat first: a missing file's error names it and its ENOENT, as the command always printed.
  await stat(file);
  const bytes = await readLocalFile(file, HTML_FILE_MAX_BYTES);
  if (bytes[0] !== GZIP_MAGIC[0] || bytes[1] !== GZIP_MAGIC[1]) return bytes;
  try {
    return gunzipSync(bytes, { maxOutputLength: HTML_FILE_MAX_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`it unpacks to more than ${MAX_MIB} MiB`);
    throw err;
  }
}

type Line = { file: string } & (Pick<ExtractedArticle, 'title' | 'byline' | 'publishedTime' | 'siteName' | 'excerpt' | 'text'> | { error: string });

/**
 * A file's result as text for a terminal. What the page says (title, byline, site name, text) goes
 * through printable as an error does: extraction keeps the controls a page holds, and a `<title>`
 * holding `ESC ] 0 ; … BEL` retitled the terminal of an operator reading a saved page.
 */
function readable(line: Line): string {
  if ('error' in line) return `${printable(line.file)}: error: ${printable(line.error)}\n`;
  const meta = [line.byline && `by ${line.byline}`, line.siteName, line.publishedTime].filter(Boolean).join(' · ');
  return printable(`== ${line.file}\n${line.title}\n${meta ? `${meta}\n` : ''}\n${line.text}\n\n`);
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
      process.stdout.write(json ? `${printableJson(line)}\n` : readable(line));
    }
    return failures === 0 ? 0 : 1;
  },
};
export default extract;
