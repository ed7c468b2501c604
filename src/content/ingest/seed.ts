/**
 * Demo seeding: fills an empty store from fixtures/demo through the same code as every other
 * source — news.json through the item pipeline, videos.json through the video importer, posts/
 * through the markdown importer. A `demo-seeded` meta key claimed with `claimMeta` lets only one
 * of several processes starting on one store do it; ids are fixed, so even two seeders racing
 * (e.g. after a stale claim) update rather than duplicate.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../logger.js';
import { SalonError, errors } from '../../errors.js';
import type { JobFailure, Store } from '../../store/types.js';
import { qualifyId } from '../ids.js';
import { toFailure } from './ingest-job.js';
import type { ItemPipeline } from './pipeline.js';
import { markdownFiles, readPostFile } from '../sources/posts.js';
import { videoEntriesFromJson } from '../sources/videos.js';

export const DEMO_SEED_KEY = 'demo-seeded';
/** A claim older than this whose seeding never finished (the process died) is taken over. */
const STALE_CLAIM_MS = 10 * 60_000;
const PROJECT_NAME = 'salon';

/** The repository root: the nearest folder above this module with Salon's package.json. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if (JSON.parse(readFileSync(pkg, 'utf8')).name === PROJECT_NAME) return dir;
      } catch {
        // not ours; keep looking
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the ${PROJECT_NAME} package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** fixtures/demo in the repository. */
export function defaultDemoDir(): string {
  return join(projectRoot(), 'fixtures', 'demo');
}

/** One demo entry: the item to put, or why it cannot be one. */
type DemoEntry = { ref: string; item: unknown } | { ref: string; error: SalonError };

async function readJson(path: string): Promise<unknown | undefined> {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new errors.ERR_INVALID_CONTENT(`${path} is not valid JSON (${(err as Error).message})`);
  }
}

function newsEntries(doc: unknown, path: string): DemoEntry[] {
  if (doc === undefined) return [];
  if (!Array.isArray(doc)) throw new errors.ERR_INVALID_CONTENT(`${path} must hold an array of news items`);
  return doc.map((e, i): DemoEntry => {
    const ref = `${path}#${i}`;
    try {
      if (!e || typeof e !== 'object' || typeof e.id !== 'string') throw new errors.ERR_INVALID_CONTENT(`entry ${i} needs a string id`);
      return { ref, item: { ...e, id: qualifyId('news', e.id), kind: 'news', source: 'demo' } };
    } catch (err) {
      return { ref, error: err as SalonError };
    }
  });
}

/** Every demo entry of a folder laid out as fixtures/demo (news.json, videos.json, posts/*.md). */
export async function demoEntries(dir: string): Promise<DemoEntry[]> {
  const newsPath = join(dir, 'news.json');
  const videosPath = join(dir, 'videos.json');
  const videos = await readJson(videosPath);
  const postsDir = join(dir, 'posts');
  const posts = existsSync(postsDir) ? await Promise.all((await markdownFiles(postsDir)).map((p) => readPostFile(p, 'demo'))) : [];
  return [
    ...newsEntries(await readJson(newsPath), newsPath),
    ...(videos === undefined ? [] : videoEntriesFromJson(videos, 'demo').map((e) => ({ ...e, ref: `${videosPath} ${e.ref}` }))),
    ...posts,
  ];
}

export interface SeedOptions {
  store: Store;
  pipeline: ItemPipeline;
  /** Folder laid out as fixtures/demo; default {@link defaultDemoDir}. */
  dir?: string;
  log?: Logger;
  /**
   * Aborted when the process shuts down: seeding stops between items (each is stored whole, in one
   * transaction) and the claim is marked failed, so the next start seeds what is missing.
   */
  signal?: AbortSignal;
}

export interface SeedResult {
  seeded: boolean;
  /** Why seeding ran or not. */
  reason: string;
  created: number;
  updated: number;
  unchanged: number;
  failures: JobFailure[];
}

interface Claim {
  state: 'seeding' | 'done' | 'skipped' | 'failed';
  at: string;
}

function parseClaim(raw: string): Claim | null {
  try {
    const c = JSON.parse(raw);
    return c && typeof c.state === 'string' && typeof c.at === 'string' ? c : null;
  } catch {
    return null;
  }
}

/** Decides whether this process seeds; claims the marker when it does. */
async function claim(store: Store): Promise<{ ok: boolean; reason: string }> {
  const mine = JSON.stringify({ state: 'seeding', at: new Date().toISOString() } satisfies Claim);
  const existing = await store.getMeta(DEMO_SEED_KEY);
  if (existing !== null) {
    const c = parseClaim(existing);
    if (c?.state === 'failed' || (c?.state === 'seeding' && Date.now() - Date.parse(c.at) > STALE_CLAIM_MS)) {
      await store.setMeta(DEMO_SEED_KEY, mine);
      return { ok: true, reason: 'an earlier seeding did not finish' };
    }
    return { ok: false, reason: c?.state === 'seeding' ? 'another process is seeding' : 'already seeded' };
  }
  if ((await store.countItems()) > 0) {
    await store.claimMeta(DEMO_SEED_KEY, JSON.stringify({ state: 'skipped', at: new Date().toISOString() } satisfies Claim));
    return { ok: false, reason: 'the store already holds content' };
  }
  if (!(await store.claimMeta(DEMO_SEED_KEY, mine))) return { ok: false, reason: 'another process is seeding' };
  return { ok: true, reason: 'fresh store' };
}

/** Puts every demo entry through the pipeline; bad entries are reported, not fatal. */
export async function putDemoEntries(pipeline: ItemPipeline, entries: DemoEntry[], signal?: AbortSignal): Promise<Omit<SeedResult, 'seeded' | 'reason'>> {
  const result = { created: 0, updated: 0, unchanged: 0, failures: [] as JobFailure[] };
  for (const e of entries) {
    signal?.throwIfAborted();
    try {
      if ('error' in e) throw e.error;
      const { status } = await pipeline.put(e.item);
      result[status]++;
    } catch (err) {
      signal?.throwIfAborted();
      result.failures.push(toFailure(e.ref, err));
    }
  }
  return result;
}

/** Seeds the demo content into a fresh store (see the module comment); safe to call on every start. */
export async function seedDemo(options: SeedOptions): Promise<SeedResult> {
  const { store, pipeline, log } = options;
  const dir = options.dir ?? defaultDemoDir();
  const decision = await claim(store);
  if (!decision.ok) return { seeded: false, reason: decision.reason, created: 0, updated: 0, unchanged: 0, failures: [] };
  let counts: Awaited<ReturnType<typeof putDemoEntries>>;
  try {
    counts = await putDemoEntries(pipeline, await demoEntries(dir), options.signal);
  } catch (err) {
    // Unreadable demo files or a shutdown: let the next start try again rather than leave a claim behind.
    await store.setMeta(DEMO_SEED_KEY, JSON.stringify({ state: 'failed', at: new Date().toISOString() } satisfies Claim));
    throw err;
  }
  await store.setMeta(DEMO_SEED_KEY, JSON.stringify({ state: 'done', at: new Date().toISOString() } satisfies Claim));
  for (const f of counts.failures) log?.warn({ ref: f.ref, code: f.code }, `demo item skipped: ${f.message}`);
  return { seeded: true, reason: decision.reason, ...counts };
}
