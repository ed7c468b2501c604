/**
 * The one renderer for chat messages, assistant answers and post bodies: a small, safe markdown
 * subset (bold, italic, inline and fenced code, lists, quotes, http/https/mailto links, line
 * breaks; documents also headings and rules). A link leads where its text says: one whose text
 * names another site, or whose address carries credentials, shows as plain text.
 *
 * Three layers keep it inert: markdown-it runs with raw HTML off and a link allow-list; its
 * output goes through DOMPurify with an explicit tag and attribute allow-list; the result is a
 * DocumentFragment that lit inserts as nodes, so no HTML string is ever parsed into the live page.
 * A character's run of combining marks, modifiers or joiners is cut to MAX_CLUSTER_EXTENDERS
 * before parsing: the browser lays out one long cluster in quadratic time.
 */
import markdownIt, { type MarkdownIt } from 'markdown-it';
import DOMPurify from 'dompurify';
import { clampClusters } from '../../../src/protocol/clusters.js';

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
/** Longest document (a post's body) shown; the server keeps bodies to BODY_MAX_CHARS (200,000) anyway. */
export const MAX_DOCUMENT_CHARS = 200_000;
/** A document is rendered in segments of about this many characters, cut at blank lines outside code fences. */
const SEGMENT_TARGET_CHARS = 3_000;
/** Deepest nesting of lists and quotes markdown-it will build. */
const MAX_NESTING = 20;
const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const LINK_REL = 'noopener noreferrer nofollow';
const ALLOWED_TAGS = ['p', 'br', 'strong', 'em', 'code', 'pre', 'a', 'ul', 'ol', 'li', 'blockquote'];
const ALLOWED_ATTR = ['href', 'target', 'rel', 'start'];
/**
 * Blocks that take their direction from their own text (`dir="auto"`, set after sanitising: no
 * input chooses it): a Hebrew or Arabic paragraph lays out right to left, an English one beside it
 * left to right. Code stays left to right.
 */
const AUTO_DIRECTION_BLOCKS = 'p, li, blockquote, h2, h3, h4, h5, h6';
/** A document's headings start at h2 (the page's title is its h1). */
const DOCUMENT_TAGS = [...ALLOWED_TAGS, 'h2', 'h3', 'h4', 'h5', 'h6', 'hr'];

/**
 * True when `href` is an absolute http, https or mailto URL without credentials: in
 * `https://bank.example@evil.example/` the reader sees the bank and the link leads elsewhere.
 */
export function isSafeHref(href: string): boolean {
  try {
    const url = new URL(href);
    return SAFE_PROTOCOLS.has(url.protocol) && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * A site named in a link's text: what follows `//` (`https://bank.example`, `//bank.example`), or a
 * word starting `www.`, up to a path, a space or a bracket; after `https://` also past a space or a
 * line break, which the reader reads across (`https://` and `bank.example` on the next line).
 */
const WRITTEN_SITE = /\/\/([^\s/?#\\<>"'()[\]]+)|\b(www\.[^\s/?#\\<>"'()[\]]+)|\bhttps?:\/\/\s+([^\s/?#\\<>"'()[\]]+)/gi;

/**
 * An e-mail address written in a link's text, its domain captured. Tried only where a word starts
 * (the lookbehind): from inside one, a long word without an `@` cost time growing with its square.
 */
const WRITTEN_MAILBOX = /(?<![^\s@<>()[\]"',;:/\\])[^\s@<>()[\]"',;:/\\]+@([^\s@<>()[\]"',;:/?#\\]+)/g;

/** Bidi embeddings, overrides and isolates: in a link's text they show it in another order than it is written. */
const BIDI_IN_TEXT = /[\u202A-\u202E\u2066-\u2069]/;
/** What shows nothing (zero-width spaces and joiners, soft hyphens, word joiners…): `https:/` U+200B `/bank.example` reads as `https://bank.example`. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
/** Slashes that are not `/` but look it (NFKC folds the fullwidth one, not these). */
const LOOKALIKE_SLASHES = /[\u2044\u2215\u29F8]/g;

/** A link's text as a reader takes it in: compatibility forms folded, what shows nothing gone, lookalike slashes read as `/`. */
function asRead(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '').replace(LOOKALIKE_SLASHES, '/');
}

/** `url`'s host name without a leading `www.` or a trailing dot. */
function siteOf(url: URL): string {
  return url.hostname.replace(/^www\./, '').replace(/\.$/, '');
}

/**
 * True when a link's text names a site other than the one the link leads to (a stranger's
 * `[https://bank.example/login](https://evil.example/)`), or writes one that is no address or
 * carries a name before an `@`. Only a site written as one counts (after `//`, or starting `www.`):
 * `[Node.js](https://nodejs.org)` is a name. An e-mail address in the text must be the one a
 * `mailto:` link writes to, or be on the site a web link leads to. The text is read as it shows
 * (`asRead`), and one holding a bidi control is misleading: U+202E `elpmaxe.knab.www` shows as
 * `www.bank.example`.
 */
export function misleadingLinkText(text: string, href: string): boolean {
  if (BIDI_IN_TEXT.test(text)) return true;
  let site: string;
  let mailbox: string | null;
  try {
    const url = new URL(href);
    site = siteOf(url);
    mailbox = url.protocol === 'mailto:' ? decodeURIComponent(url.pathname).toLowerCase() : null;
  } catch {
    return true;
  }
  const read = asRead(text);
  for (const m of read.matchAll(WRITTEN_MAILBOX)) {
    const written = m[0].replace(/[.,;:!?]+$/, '').toLowerCase();
    if (mailbox !== null ? written !== mailbox : writtenSite(m[1]) !== site) return true;
  }
  for (const m of read.matchAll(WRITTEN_SITE)) {
    try {
      const written = new URL(`https://${(m[1] ?? m[2] ?? m[3]).replace(/[.,;:!?]+$/, '')}`);
      if (written.username || written.password || siteOf(written) !== site) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** A link's whole text written as a bare host name, perhaps with a path (`paypal.com`, `Node.js`, `example.org/docs`). */
const BARE_DOMAIN = /^((?:[\p{L}\p{N}-]+\.)+\p{L}{2,63})\.?(?:[/?#]\S*)?$/u;

/**
 * The site a link leads to, when its whole text is a bare host name of another site
 * (`[paypal.com](https://evil.example/)`), else null. Such a link is kept, with its site shown
 * after its text: without a list of domain endings `Node.js` cannot be told from `paypal.com`, and
 * `[Node.js](https://nodejs.org/)` must stay a link.
 */
export function siteBehindBareDomain(text: string, href: string): string | null {
  const m = BARE_DOMAIN.exec(asRead(text).trim());
  if (!m) return null;
  try {
    const url = new URL(href);
    if (url.protocol === 'mailto:') return null;
    const site = siteOf(url);
    return writtenSite(m[1]) === site ? null : site;
  } catch {
    return null;
  }
}

/** The site of a domain written in text (`bank.example.`), or null when it is no host name. */
function writtenSite(domain: string): string | null {
  try {
    return siteOf(new URL(`https://${domain.replace(/[.,;:!?]+$/, '')}`));
  } catch {
    return null;
  }
}

/** Which markdown: a chat message's, or a document's (a post body), which adds headings and rules. */
type Profile = 'message' | 'document';

function createParser(profile: Profile): MarkdownIt {
  const md = markdownIt('zero', { html: false, linkify: false, typographer: false, breaks: true, maxNesting: MAX_NESTING });
  md.enable(['emphasis', 'backticks', 'fence', 'link', 'newline', 'escape', 'entity', 'list', 'blockquote']);
  if (profile === 'document') {
    md.enable(['heading', 'lheading', 'hr']);
    // The page's title is its h1: a `#` heading becomes h2 like `##`, the rest keep their level.
    const shift = (tag: string) => (tag === 'h1' ? 'h2' : tag);
    md.renderer.rules.heading_open = (tokens, idx) => `<${shift(tokens[idx].tag)}>`;
    md.renderer.rules.heading_close = (tokens, idx) => `</${shift(tokens[idx].tag)}>\n`;
  }
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
    const text = el.textContent ?? '';
    if (!href || !isSafeHref(href) || misleadingLinkText(text, href)) el.removeAttribute('href');
    else {
      const site = siteBehindBareDomain(text, href);
      if (site) el.append(` (${site})`);
    }
    el.setAttribute('target', '_blank');
    el.setAttribute('rel', LINK_REL);
  });
  return purifier;
}

const parsers: Partial<Record<Profile, MarkdownIt>> = {};
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

function toHtml(text: string, profile: Profile = 'message'): string {
  const md = (parsers[profile] ??= createParser(profile));
  // Data is cut where it comes in; this catches what the page puts together (an answer's streamed pieces).
  const shown = clampClusters(text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text);
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
const SANITIZE_DOCUMENT = { ...SANITIZE, ALLOWED_TAGS: DOCUMENT_TAGS };

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const MAX_LINE_CHARS = MAX_MARKDOWN_CHARS / 2;
const LINE_PIECES = new RegExp(`[^]{1,${MAX_LINE_CHARS}}`, 'g');

/**
 * A document cut into segments a message's bounds can take: each about SEGMENT_TARGET_CHARS,
 * ending at a blank line outside a code fence, never longer than MAX_MARKDOWN_CHARS (a longer
 * paragraph or line is cut there). Each segment is then parsed on its own with the message
 * guards, so a long post costs what its segments cost and one hostile paragraph only turns
 * itself into plain text.
 */
export function documentSegments(text: string): string[] {
  const segments: string[] = [];
  let current: string[] = [];
  let size = 0;
  let fence: string | null = null;
  const close = () => {
    // A code block cut in two stays a code block on both sides.
    if (fence !== null) current.push(fence);
    if (current.length) segments.push(current.join('\n'));
    current = fence !== null ? [fence] : [];
    size = fence !== null ? fence.length + 1 : 0;
  };
  // A line longer than half a segment (no real line is) is taken in pieces.
  const lines = text.split('\n').flatMap((line) => (line.length > MAX_LINE_CHARS ? (line.match(LINE_PIECES) ?? []) : [line]));
  for (const line of lines) {
    if (size + line.length + 1 > MAX_MARKDOWN_CHARS) close();
    const mark = FENCE.exec(line)?.[1];
    if (mark && (fence === null || (mark[0] === fence[0] && mark.length >= fence.length))) fence = fence === null ? mark : null;
    if (!line.trim() && fence === null && size >= SEGMENT_TARGET_CHARS) {
      close();
      continue;
    }
    current.push(line);
    size += line.length + 1;
  }
  fence = null;
  close();
  return segments;
}

function documentHtml(text: string): string {
  const shown = text.length > MAX_DOCUMENT_CHARS ? `${text.slice(0, MAX_DOCUMENT_CHARS)}…` : text;
  // Before segmenting, which cuts a long line (an overlong cluster is one) into pieces.
  return documentSegments(clampClusters(shown).replace(/\r\n?/g, '\n'))
    .map((segment) => toHtml(segment, 'document'))
    .join('\n');
}

const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const PDF = '\u202C';
const PDI = '\u2069';

/**
 * `text` with its bidi embeddings, overrides and isolates (U+202A–202E, U+2066–2069) kept to
 * itself: each one left open is closed at the end (PDF, PDI, innermost first), and a PDF or PDI
 * that closes nothing opened in `text` is dropped (it would close an embedding or isolate around
 * it). Line breaks end every one, as a paragraph's end does.
 */
export function containBidi(text: string): string {
  if (!BIDI_CONTROL.test(text)) return text;
  let out = '';
  const open: string[] = [];
  const closeAll = () => {
    while (open.length) out += open.pop();
  };
  for (const ch of text) {
    if (ch >= '\u202A' && ch <= '\u202E' && ch !== PDF) {
      open.push(PDF);
    } else if (ch >= '\u2066' && ch <= '\u2068') {
      open.push(PDI);
    } else if (ch === PDF) {
      // A PDF inside an isolate opened after its embedding closes nothing (UAX #9, X7).
      if (open.at(-1) !== PDF) continue;
      open.pop();
    } else if (ch === PDI) {
      // A PDI closes its isolate and whatever was opened inside it (X6a).
      const at = open.lastIndexOf(PDI);
      if (at < 0) continue;
      open.length = at;
    } else if (ch === '\n' || ch === '\u2029') {
      closeAll();
    }
    out += ch;
  }
  closeAll();
  return out;
}

/**
 * Keeps the bidi controls of each text node of a rendered fragment to that node (containBidi):
 * an override in a message cannot reorder the text after its paragraph, its inline element or
 * its line, nor a stray PDI end an isolate the page put around it.
 */
function containBidiIn(fragment: DocumentFragment): DocumentFragment {
  const walker = document.createTreeWalker(fragment, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue ?? '';
    const contained = containBidi(text);
    if (contained !== text) node.nodeValue = contained;
  }
  return fragment;
}

/** Marks each block of a rendered fragment `dir="auto"`. */
function autoDirection(fragment: DocumentFragment): DocumentFragment {
  for (const block of Array.from(fragment.querySelectorAll(AUTO_DIRECTION_BLOCKS))) block.setAttribute('dir', 'auto');
  return fragment;
}

/** A document (a post's body) → an inert DocumentFragment: headings from h2, the message subset otherwise. */
export function renderDocument(text: string): DocumentFragment {
  purifier ??= createPurifier();
  return autoDirection(containBidiIn(purifier.sanitize(documentHtml(text), { ...SANITIZE_DOCUMENT, RETURN_DOM_FRAGMENT: true })));
}

/** renderDocument as a sanitised HTML string (for inspection). */
export function renderDocumentToString(text: string): string {
  purifier ??= createPurifier();
  return purifier.sanitize(documentHtml(text), SANITIZE_DOCUMENT);
}

/** Markdown → sanitised HTML string (for inspection; the page inserts `renderMarkdown`'s nodes). */
export function renderMarkdownToString(text: string): string {
  purifier ??= createPurifier();
  return purifier.sanitize(toHtml(text), SANITIZE);
}

/** Markdown → an inert DocumentFragment, ready for lit to insert as nodes. */
export function renderMarkdown(text: string): DocumentFragment {
  purifier ??= createPurifier();
  return autoDirection(containBidiIn(purifier.sanitize(toHtml(text), { ...SANITIZE, RETURN_DOM_FRAGMENT: true })));
}
