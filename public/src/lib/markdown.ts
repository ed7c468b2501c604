/**
 * The one renderer for chat messages and assistant answers: a small, safe markdown subset
 * (bold, italic, inline and fenced code, lists, quotes, http/https/mailto links, line breaks).
 *
 * Three layers keep it inert: markdown-it runs with raw HTML off and a link allow-list; its
 * output goes through DOMPurify with an explicit tag and attribute allow-list; the result is a
 * DocumentFragment that lit inserts as nodes, so no HTML string is ever parsed into the live page.
 */
import markdownIt, { type MarkdownIt } from 'markdown-it';
import DOMPurify from 'dompurify';

/** Longest text parsed as markdown (the server's message cap); the rest of a longer text shows as plain text. */
export const MAX_MARKDOWN_CHARS = 4_000;
/**
 * Most tokens (blocks plus inline pieces) a message may produce before its markdown is ignored and
 * it shows as plain text: real messages stay far below; `*a*a*a…` would build thousands of elements.
 */
export const MAX_TOKENS = 1_500;
/**
 * Most emphasis and link punctuation (`*`, `_`, `[`, `]`, backticks) outside code fences before a
 * text is shown as plain text without being parsed: runs like `*a*a*a…` or `[[[[…` are what make
 * markdown parsers slow, and no real message needs hundreds of them.
 */
export const MAX_MARKUP_CHARS = 400;
/** Longest text shown at all; beyond it a message is cut with an ellipsis. */
export const MAX_SHOWN_CHARS = 20_000;
/** Deepest nesting of lists and quotes markdown-it will build. */
const MAX_NESTING = 20;
const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const LINK_REL = 'noopener noreferrer nofollow';
const ALLOWED_TAGS = ['p', 'br', 'strong', 'em', 'code', 'pre', 'a', 'ul', 'ol', 'li', 'blockquote'];
const ALLOWED_ATTR = ['href', 'target', 'rel', 'start'];

/** True when `href` is an absolute http, https or mailto URL. */
export function isSafeHref(href: string): boolean {
  try {
    return SAFE_PROTOCOLS.has(new URL(href).protocol);
  } catch {
    return false;
  }
}

function createParser(): MarkdownIt {
  const md = markdownIt('zero', { html: false, linkify: false, typographer: false, breaks: true, maxNesting: MAX_NESTING });
  md.enable(['emphasis', 'backticks', 'fence', 'link', 'newline', 'escape', 'entity', 'list', 'blockquote']);
  md.validateLink = isSafeHref;
  const renderToken = md.renderer.renderToken.bind(md.renderer);
  md.renderer.rules.link_open = (tokens, idx, options) => {
    tokens[idx].attrSet('target', '_blank');
    tokens[idx].attrSet('rel', LINK_REL);
    return renderToken(tokens, idx, options);
  };
  // Fence info strings become a class attribute by default; nothing here uses it.
  md.renderer.rules.fence = (tokens, idx) => `<pre><code>${md.utils.escapeHtml(tokens[idx].content)}</code></pre>\n`;
  return md;
}

function createPurifier(): ReturnType<typeof DOMPurify> {
  const purifier = DOMPurify(window);
  purifier.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName !== 'A') return;
    const el = node as Element;
    const href = el.getAttribute('href');
    if (!href || !isSafeHref(href)) el.removeAttribute('href');
    el.setAttribute('target', '_blank');
    el.setAttribute('rel', LINK_REL);
  });
  return purifier;
}

let parser: MarkdownIt | undefined;
let purifier: ReturnType<typeof DOMPurify> | undefined;

/** Plain text as paragraphs with line breaks, every character escaped. */
function plainHtml(md: MarkdownIt, text: string): string {
  if (!text.trim()) return '';
  return text
    .split(/\n{2,}/)
    .map((para) => `<p>${md.utils.escapeHtml(para).replace(/\n/g, '<br>\n')}</p>`)
    .join('\n');
}

/** Where to stop parsing markdown: the last paragraph break before the cap, else the cap. */
function markdownEnd(text: string): number {
  if (text.length <= MAX_MARKDOWN_CHARS) return text.length;
  const para = text.lastIndexOf('\n\n', MAX_MARKDOWN_CHARS);
  return para > MAX_MARKDOWN_CHARS / 2 ? para : MAX_MARKDOWN_CHARS;
}

/** Emphasis and link punctuation outside fenced code. */
function markupChars(text: string): number {
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  let n = 0;
  for (let i = 0; i < prose.length; i++) if ('*_[]`'.includes(prose[i])) n++;
  return n;
}

function toHtml(text: string): string {
  const md = (parser ??= createParser());
  const shown = text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
  const end = markdownEnd(shown);
  const head = shown.slice(0, end);
  if (markupChars(head) > MAX_MARKUP_CHARS) return plainHtml(md, shown);
  const env = {};
  const tokens = md.parse(head, env);
  const weight = tokens.reduce((n, t) => n + 1 + (t.children?.length ?? 0), 0);
  const headHtml = weight > MAX_TOKENS ? plainHtml(md, head) : md.renderer.render(tokens, md.options, env);
  return headHtml + plainHtml(md, shown.slice(end));
}

const SANITIZE = { ALLOWED_TAGS, ALLOWED_ATTR, ALLOW_DATA_ATTR: false, ALLOW_ARIA_ATTR: false };

/** Markdown → sanitised HTML string (for inspection; the page inserts `renderMarkdown`'s nodes). */
export function renderMarkdownToString(text: string): string {
  purifier ??= createPurifier();
  return purifier.sanitize(toHtml(text), SANITIZE);
}

/** Markdown → an inert DocumentFragment, ready for lit to insert as nodes. */
export function renderMarkdown(text: string): DocumentFragment {
  purifier ??= createPurifier();
  return purifier.sanitize(toHtml(text), { ...SANITIZE, RETURN_DOM_FRAGMENT: true });
}
