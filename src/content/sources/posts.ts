/**
 * Posts from markdown files with a YAML front matter block (`---` … `---`): title, author,
 * category, publishedAt (or date), description, image, url, id. A post's body is stored as the
 * markdown it was written in (the post page renders it, sanitised, as it does a post sent through
 * the API); what is indexed, cited and shown as context is its text (`readableBody`).
 */
import { readdir } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import MarkdownIt, { type StateCore, type Token } from 'markdown-it';
import { parse as parseYaml } from 'yaml';
import { SalonError, errors } from '../../errors.js';
import { readLocalFile } from '../../local-files.js';
import { htmlToText } from '../extract/html-text.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { qualifyId, slugify } from '../ids.js';
import { DESCRIPTION_CHARS, excerpt } from '../text.js';

export const MARKDOWN_EXTENSIONS = ['.md', '.markdown'];
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
const EMPTY_FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
/**
 * Longest front matter read, in characters: a post's names a few fields, while the YAML parser
 * checks each key of a mapping against every key before it (100,000 keys, 1 MB, took minutes).
 */
export const FRONT_MATTER_MAX_CHARS = 16_384;

const markdown = new MarkdownIt({ html: true, linkify: false, typographer: false });
/**
 * A table reads as sentences, a row each: its first cell, then each other cell after its column's
 * heading (`1 January 2027 — What happens: Parts, information and pairing rules apply to new
 * devices.`), apart by ` — `, a capital at its start and a stop at its end. Its cells only spaced,
 * a whole table was one sentence in a passage (`Date What happens 8 July 2026 Act passed by 8
 * January …`), quoted whole or never; a row of its cells alone says `€2.31m` without saying of
 * what, the heading row was quoted as a sentence of its own (`Date — What happens.`), and a row
 * starting in lower case (`by 8 January 2027 — …`) ran on from the row before it.
 */
markdown.core.ruler.push('table_rows_as_sentences', (state) => {
  const out: Token[] = [];
  for (let i = 0; i < state.tokens.length; i++) {
    const token = state.tokens[i];
    if (token.type !== 'table_open') {
      out.push(token);
      continue;
    }
    const rows: { heading: boolean; cells: Token[] }[] = [];
    let heading = false;
    for (i++; i < state.tokens.length && state.tokens[i].type !== 'table_close'; i++) {
      const t = state.tokens[i];
      if (t.type === 'thead_open' || t.type === 'thead_close') heading = t.type === 'thead_open';
      else if (t.type === 'tr_open') rows.push({ heading, cells: [] });
      else if (t.type === 'inline') rows.at(-1)?.cells.push(t);
    }
    out.push(...tableAsParagraph(rows, state));
  }
  state.tokens = out;
});

/** The plain text of a cell's inline markup (`**Date**` is `Date`). */
function plainCell(cell: Token): string {
  return (cell.children ?? [])
    .filter((c) => c.type === 'text' || c.type === 'code_inline')
    .map((c) => c.content)
    .join('')
    .trim();
}

/** A table's rows as one paragraph of sentences, a line each (see the rule above); none for a table of empty cells. */
function tableAsParagraph(rows: { heading: boolean; cells: Token[] }[], state: StateCore): Token[] {
  const headings = rows.find((r) => r.heading)?.cells.map(plainCell) ?? [];
  const body = rows.filter((r) => !r.heading);
  const text = (content: string) => Object.assign(new state.Token('text', '', 0), { content });
  const lines: Token[][] = [];
  // A table of headings alone is read as its headings.
  for (const row of body.length ? body : rows.filter((r) => r.heading)) {
    const line: Token[] = [];
    let last = '';
    row.cells.forEach((cell, k) => {
      const plain = plainCell(cell);
      if (!plain) return;
      last = plain;
      if (line.length) line.push(text(' — '));
      if (line.length && body.length && headings[k]) line.push(text(`${headings[k]}: `));
      line.push(...(cell.children ?? []));
    });
    if (!line.length) continue;
    const first = line.find((t) => (t.type === 'text' || t.type === 'code_inline') && t.content.trim());
    if (first?.type === 'text') first.content = first.content.replace(/^\s*\p{Ll}/u, (c) => c.toUpperCase());
    if (!/[.!?:;]$/.test(last)) line.push(text('.'));
    lines.push(line);
  }
  if (!lines.length) return [];
  const inline = new state.Token('inline', '', 0);
  inline.children = lines.flatMap((line, k) => (k ? [new state.Token('hardbreak', 'br', 0), ...line] : line));
  return [new state.Token('paragraph_open', 'p', 1), inline, new state.Token('paragraph_close', 'p', -1)];
}

/** Markdown to plain text: blocks become paragraphs, list items lines, code stays verbatim. */
export function markdownToText(source: string): string {
  return htmlToText(markdown.render(capField(source, FIELD_CAPS.post)));
}

/** Bodies converted lately, by item and version: an ask cites the same few posts again and again. */
const READABLE_CACHE_SIZE = 64;
const readable = new Map<string, string>();

/**
 * The text of an item's body: a post's body is markdown, rendered here to plain paragraphs; other
 * kinds' bodies are text already. A stored item (with its id and updatedAt) has its text cached.
 */
export function readableBody(item: { kind: string; body: string; id?: string; updatedAt?: string }): string {
  if (item.kind !== 'post' || !item.body.trim()) return item.body;
  const key = item.id !== undefined && item.updatedAt !== undefined ? `${item.id}@${item.updatedAt}` : undefined;
  const cached = key === undefined ? undefined : readable.get(key);
  if (cached !== undefined) return cached;
  const text = markdownToText(item.body);
  if (key !== undefined) {
    if (readable.size >= READABLE_CACHE_SIZE) readable.delete(readable.keys().next().value as string);
    readable.set(key, text);
  }
  return text;
}

/** Splits a document into its front matter (parsed) and the markdown after it. */
export function splitFrontMatter(text: string, ref: string): { data: Record<string, unknown>; content: string } {
  const empty = EMPTY_FRONT_MATTER.exec(text);
  if (empty) return { data: {}, content: text.slice(empty[0].length) };
  const m = FRONT_MATTER.exec(text);
  if (!m) return { data: {}, content: text.replace(/^\uFEFF/, '') };
  if (m[1].length > FRONT_MATTER_MAX_CHARS) throw new errors.ERR_INVALID_CONTENT(`${ref}: front matter is longer than ${FRONT_MATTER_MAX_CHARS} characters`);
  let data: unknown;
  try {
    data = parseYaml(m[1], { schema: 'core', maxAliasCount: 20 });
  } catch (err) {
    throw new errors.ERR_INVALID_CONTENT(`${ref}: front matter is not valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new errors.ERR_INVALID_CONTENT(`${ref}: front matter must be a mapping of fields`);
  return { data: data as Record<string, unknown>, content: text.slice(m[0].length) };
}

function scalar(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v;
}

/** The text of the first ATX heading (`## Title ##` is `Title`), in time linear in its line. */
function firstHeading(content: string): string | undefined {
  // Not `(.+?)[ \t#]*$`: that read the rest of a run of spaces or #s from each of its characters,
  // and a heading of 40,000 spaces and a letter held the event loop 4 s.
  const line = /^#{1,6}[ \t]+(.+)$/m.exec(content)?.[1];
  if (line === undefined) return undefined;
  let end = line.length;
  while (end > 1 && ' \t#'.includes(line[end - 1])) end--;
  return line.slice(0, end);
}

/**
 * The post item (unvalidated; the pipeline validates) for a markdown document. `fileName`
 * supplies the id when the front matter has none.
 */
export function postFromMarkdown(text: string, fileName: string, source = 'markdown'): Record<string, unknown> {
  const { data, content } = splitFrontMatter(text, fileName);
  const fm = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, scalar(v)]));
  const rawId = typeof fm.id === 'string' && fm.id.trim() ? fm.id.trim() : slugify(basename(fileName, extname(fileName)));
  if (!rawId) throw new errors.ERR_INVALID_CONTENT(`${fileName}: no id in the front matter and no usable file name`);
  const id = qualifyId('post', rawId);
  const heading = firstHeading(content);
  const title = fm.title ?? heading;
  // A leading heading that repeats the title is not part of the body.
  const body = capField(heading && heading === title ? content.replace(/^\s*#{1,6}[ \t]+.*\n?/, '') : content, FIELD_CAPS.post).trim();
  return {
    id,
    kind: 'post',
    title: title ?? '',
    url: fm.url ?? null,
    description: typeof fm.description === 'string' && fm.description.trim() ? fm.description : excerpt(markdownToText(body), DESCRIPTION_CHARS),
    body,
    comments: [],
    category: fm.category ?? null,
    publishedAt: fm.publishedAt ?? fm.date ?? null,
    image: fm.image ?? null,
    author: fm.author ?? null,
    channel: null,
    thumbnail: null,
    siteName: fm.siteName ?? null,
    source,
  };
}

/** One file of a folder of posts: the item, or why it cannot be one. */
export type PostEntry = { ref: string; item: Record<string, unknown> } | { ref: string; error: SalonError };

/** Reads and converts one markdown file. */
export async function readPostFile(path: string, source = 'markdown'): Promise<PostEntry> {
  try {
    return { ref: path, item: postFromMarkdown((await readLocalFile(path)).toString('utf8'), basename(path), source) };
  } catch (err) {
    if (err instanceof SalonError) return { ref: path, error: err };
    return { ref: path, error: new errors.ERR_INVALID_CONTENT(`${path} cannot be read (${(err as Error).message})`) };
  }
}

/** The markdown files of a folder (not recursive), sorted by name. */
export async function markdownFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => MARKDOWN_EXTENSIONS.includes(extname(n).toLowerCase()) && !n.startsWith('.'))
    .sort()
    .map((n) => join(dir, n));
}
