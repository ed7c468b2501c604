/** Validates the offline demo content in fixtures/demo: shapes, counts, categories, images. */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CONTENT_ID_SUFFIX } from '../src/content/types.js';

const DEMO = join(__dirname, '../fixtures/demo');
const IMG_DIR = join(DEMO, 'img');
const CATEGORIES = ['Tech', 'Science', 'Crypto', 'Politics', 'Business', 'Health', 'Culture'];
const MIN_ITEMS = 40;
const MIN_PER_CATEGORY = 4;
const MIN_BODY_CHARS = 1500;
const MIN_COMMENTS = 3;
const MAX_COMMENTS = 8;
const VIDEO_DESCRIPTION_CHARS = { min: 300, max: 1200 };
const DATE_RANGE = { from: Date.parse('2026-01-01T00:00:00Z'), to: Date.parse('2026-12-01T00:00:00Z') };
const IMAGE_REF = /^\/demo\/img\/[A-Za-z0-9_-]+\.svg$/;

interface DemoComment {
  by: string;
  text: string;
  time: number;
}
interface DemoNews {
  id: string;
  title: string;
  url: string;
  description: string;
  body: string;
  comments: DemoComment[];
  category: string;
  publishedAt: string;
  image: string;
  author: string;
  siteName: string;
}
interface DemoVideo {
  id: string;
  title: string;
  description: string;
  url: string;
  channel: string;
  publishedAt: string;
  thumbnail: string;
  category: string;
}
interface DemoPost {
  file: string;
  meta: Record<string, unknown>;
  body: string;
}

const NEWS_STRING_FIELDS = ['id', 'title', 'url', 'description', 'body', 'category', 'publishedAt', 'image', 'author', 'siteName'];
const VIDEO_STRING_FIELDS = ['id', 'title', 'description', 'url', 'channel', 'publishedAt', 'thumbnail', 'category'];
const POST_STRING_FIELDS = ['id', 'title', 'author', 'category', 'publishedAt', 'description', 'image'];

function readJsonArray(name: string): unknown[] {
  const parsed: unknown = JSON.parse(readFileSync(join(DEMO, name), 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${name} is not a JSON array`);
  return parsed;
}

function readPosts(): DemoPost[] {
  const dir = join(DEMO, 'posts');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
      if (!m) throw new Error(`${file}: missing --- front matter ---`);
      const meta: unknown = parseYaml(m[1]);
      if (typeof meta !== 'object' || meta === null) throw new Error(`${file}: front matter is not a mapping`);
      return { file, meta: meta as Record<string, unknown>, body: m[2].trim() };
    });
}

/** Names of `fields` that are not non-empty strings on `obj`. */
function badStringFields(obj: Record<string, unknown>, fields: string[]): string[] {
  return fields.filter((f) => typeof obj[f] !== 'string' || (obj[f] as string).trim() === '');
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function inDemoYear(iso: string): boolean {
  const t = Date.parse(iso);
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(iso) && t >= DATE_RANGE.from && t < DATE_RANGE.to;
}

const TAG = /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
const BAD_TEXT_AMP = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;

/**
 * A small XML well-formedness check, enough for hand-written SVG: every tag parses, attributes are
 * quoted, tags nest and close, there is one root, and text holds no stray `<` or bare `&`.
 * Returns a problem description or null.
 */
function xmlProblem(xml: string): string | null {
  const src = xml.replace(/^\uFEFF?<\?xml[^?]*\?>\s*/, '').replace(/<!--[\s\S]*?-->/g, '');
  const stack: string[] = [];
  let roots = 0;
  let pos = 0;
  while (pos < src.length) {
    const lt = src.indexOf('<', pos);
    const text = src.slice(pos, lt === -1 ? src.length : lt);
    if (BAD_TEXT_AMP.test(text)) return `bare & in text near offset ${pos}`;
    if (stack.length === 0 && text.trim() !== '') return `text outside the root element near offset ${pos}`;
    if (lt === -1) break;
    TAG.lastIndex = lt;
    const m = TAG.exec(src);
    if (!m) return `malformed tag at offset ${lt}: ${src.slice(lt, lt + 40)}`;
    const [whole, closing, name, attrs, selfClosing] = m;
    if (BAD_TEXT_AMP.test(attrs)) return `bare & in attributes of <${name}>`;
    const attrNames = [...attrs.matchAll(/([A-Za-z_][\w.:-]*)\s*=/g)].map((a) => a[1]);
    if (new Set(attrNames).size !== attrNames.length) return `duplicate attribute on <${name}>`;
    if (closing) {
      if (attrs || selfClosing) return `closing tag </${name}> with attributes`;
      const open = stack.pop();
      if (open !== name) return `</${name}> closes <${open ?? 'nothing'}>`;
    } else {
      if (stack.length === 0) roots++;
      if (!selfClosing) stack.push(name);
    }
    pos = lt + whole.length;
  }
  if (stack.length) return `unclosed <${stack.join('> <')}>`;
  if (roots !== 1) return `expected one root element, found ${roots}`;
  return null;
}

/** Problems that make an SVG unsafe or not self-contained. */
function svgSafetyProblems(svg: string): string[] {
  const problems: string[] = [];
  if (/<script/i.test(svg)) problems.push('<script');
  if (/<foreignObject/i.test(svg)) problems.push('<foreignObject');
  if (/\son[a-z]+\s*=/i.test(svg)) problems.push('on* event attribute');
  if (/href\s*=\s*["']\s*(?:https?:|\/\/|data:|javascript:)/i.test(svg)) problems.push('external or scripted href');
  if (/url\(\s*["']?\s*(?:https?:|\/\/|data:)/i.test(svg)) problems.push('external url()');
  if (/@import|@font-face/i.test(svg)) problems.push('CSS import or web font');
  return problems;
}

const news = readJsonArray('news.json') as DemoNews[];
const videos = readJsonArray('videos.json') as DemoVideo[];
const posts = readPosts();

describe('demo news (fixtures/demo/news.json)', () => {
  it('has every field with the right type', () => {
    for (const n of news) {
      const raw = n as unknown as Record<string, unknown>;
      expect(badStringFields(raw, NEWS_STRING_FIELDS), `news ${n.id}`).toEqual([]);
      expect(Array.isArray(n.comments), `news ${n.id} comments`).toBe(true);
      expect(inDemoYear(n.publishedAt), `news ${n.id} publishedAt ${n.publishedAt}`).toBe(true);
      expect(n.image, `news ${n.id} image`).toMatch(IMAGE_REF);
      const url = new URL(n.url);
      expect(url.protocol, `news ${n.id} url`).toBe('https:');
      expect(url.hostname, `news ${n.id} url must use a fictional .example domain`).toMatch(/\.example$/);
    }
  });

  it('has bodies of several paragraphs and at least 1,500 characters', () => {
    for (const n of news) {
      expect(n.body.length, `news ${n.id} body`).toBeGreaterThanOrEqual(MIN_BODY_CHARS);
      expect(n.body.split(/\n\s*\n/).length, `news ${n.id} paragraphs`).toBeGreaterThanOrEqual(3);
    }
  });

  it('has 3 to 8 HN-style comments each, posted after the article', () => {
    for (const n of news) {
      expect(n.comments.length, `news ${n.id} comments`).toBeGreaterThanOrEqual(MIN_COMMENTS);
      expect(n.comments.length, `news ${n.id} comments`).toBeLessThanOrEqual(MAX_COMMENTS);
      const published = Date.parse(n.publishedAt) / 1000;
      for (const c of n.comments) {
        expect(c.by, `news ${n.id} comment author`).toMatch(/^[A-Za-z0-9_-]{2,15}$/);
        expect(typeof c.text === 'string' && c.text.trim().length > 20, `news ${n.id} comment by ${c.by}`).toBe(true);
        expect(Number.isInteger(c.time), `news ${n.id} comment time`).toBe(true);
        expect(c.time, `news ${n.id} comment by ${c.by} predates the article`).toBeGreaterThan(published);
      }
    }
  });
});

describe('demo videos (fixtures/demo/videos.json)', () => {
  it('has every field with the right type', () => {
    for (const v of videos) {
      const raw = v as unknown as Record<string, unknown>;
      expect(badStringFields(raw, VIDEO_STRING_FIELDS), `video ${v.id}`).toEqual([]);
      expect(inDemoYear(v.publishedAt), `video ${v.id} publishedAt ${v.publishedAt}`).toBe(true);
      expect(v.thumbnail, `video ${v.id} thumbnail`).toMatch(IMAGE_REF);
      const url = new URL(v.url);
      expect(`${url.origin}${url.pathname}`, `video ${v.id} url`).toBe('https://video.example/watch');
      expect(url.searchParams.get('v'), `video ${v.id} url`).toBe(v.id);
    }
  });

  it('has real descriptions of 300 to 1,200 characters', () => {
    for (const v of videos) {
      expect(v.description.length, `video ${v.id}`).toBeGreaterThanOrEqual(VIDEO_DESCRIPTION_CHARS.min);
      expect(v.description.length, `video ${v.id}`).toBeLessThanOrEqual(VIDEO_DESCRIPTION_CHARS.max);
    }
  });
});

describe('demo posts (fixtures/demo/posts/*.md)', () => {
  it('has front matter with every field as a string', () => {
    for (const p of posts) {
      expect(badStringFields(p.meta, POST_STRING_FIELDS), p.file).toEqual([]);
      expect(inDemoYear(p.meta.publishedAt as string), `${p.file} publishedAt`).toBe(true);
      expect(p.meta.image, `${p.file} image`).toMatch(IMAGE_REF);
    }
  });

  it('has markdown bodies of at least 1,500 characters with headings', () => {
    for (const p of posts) {
      expect(p.body.length, p.file).toBeGreaterThanOrEqual(MIN_BODY_CHARS);
      expect(p.body, `${p.file} has no markdown heading`).toMatch(/^#{1,3} \S/m);
    }
  });
});

describe('demo collection', () => {
  const all = [
    ...news.map((n) => ({ kind: 'news', id: n.id, title: n.title, category: n.category, image: n.image })),
    ...posts.map((p) => ({
      kind: 'post',
      id: p.meta.id as string,
      title: p.meta.title as string,
      category: p.meta.category as string,
      image: p.meta.image as string,
    })),
    ...videos.map((v) => ({ kind: 'video', id: v.id, title: v.title, category: v.category, image: v.thumbnail })),
  ];

  it(`holds at least ${MIN_ITEMS} items of all three kinds`, () => {
    expect(all.length).toBeGreaterThanOrEqual(MIN_ITEMS);
    expect(new Set(all.map((i) => i.kind))).toEqual(new Set(['news', 'post', 'video']));
  });

  it('uses valid, unique ids', () => {
    for (const i of all) expect(i.id, `${i.kind} id`).toMatch(CONTENT_ID_SUFFIX);
    const contentIds = all.map((i) => `${i.kind}_${i.id}`);
    expect(new Set(contentIds).size).toBe(contentIds.length);
    const images = all.map((i) => i.image);
    expect(new Set(images).size, 'two items share an image').toBe(images.length);
  });

  it(`uses only the seven categories, each with at least ${MIN_PER_CATEGORY} items`, () => {
    const counts = new Map<string, number>();
    for (const i of all) {
      expect(CATEGORIES, `${i.kind} ${i.id} category`).toContain(i.category);
      counts.set(i.category, (counts.get(i.category) ?? 0) + 1);
    }
    for (const c of CATEGORIES) expect(counts.get(c) ?? 0, c).toBeGreaterThanOrEqual(MIN_PER_CATEGORY);
  });

  it('has a local, well-formed, self-contained 1200×675 SVG for every item and no orphan images', () => {
    const referenced = new Set(all.map((i) => i.image.replace('/demo/img/', '')));
    for (const item of all) {
      const file = item.image.replace('/demo/img/', '');
      const path = join(IMG_DIR, file);
      expect(existsSync(path), `missing image ${file}`).toBe(true);
      const svg = readFileSync(path, 'utf8');
      expect(xmlProblem(svg), file).toBeNull();
      expect(svgSafetyProblems(svg), file).toEqual([]);
      expect(svg, file).toMatch(/^<svg\s[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(svg, file).toMatch(/\sviewBox="0 0 1200 675"/);
      expect(svg, `${file} is out of date: run node fixtures/demo/make-images.mjs`).toContain(`<title id="t">${escapeXml(item.title)}</title>`);
    }
    const onDisk = readdirSync(IMG_DIR).filter((f) => f.endsWith('.svg'));
    expect(
      onDisk.filter((f) => !referenced.has(f)),
      'images no item refers to',
    ).toEqual([]);
  });
});

describe('the SVG checks themselves', () => {
  it('reject malformed or unsafe SVG', () => {
    expect(xmlProblem('<svg><g></svg>')).toMatch(/closes/);
    expect(xmlProblem('<svg><text>a & b</text></svg>')).toMatch(/bare &/);
    expect(xmlProblem('<svg><rect x=1/></svg>')).toMatch(/malformed/);
    expect(xmlProblem('<svg/><svg/>')).toMatch(/one root/);
    expect(xmlProblem('<svg xmlns="http://www.w3.org/2000/svg"><text>a &amp; b</text><rect/></svg>')).toBeNull();
    expect(svgSafetyProblems('<svg><script>x()</script></svg>')).toContain('<script');
    expect(svgSafetyProblems('<svg onload="x()"/>')).toContain('on* event attribute');
    expect(svgSafetyProblems('<svg><image href="http://evil.test/a.png"/></svg>')).toContain('external or scripted href');
    expect(svgSafetyProblems('<svg><foreignObject/></svg>')).toContain('<foreignObject');
  });
});
