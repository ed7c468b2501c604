/**
 * Replays the recorded Hacker News API answers in ../shared/corpora/hn (read in place) at
 * `${origin}/v0/item/<id>.json` and `/v0/topstories.json`; `overlay` adds or replaces items.
 * Like Firebase, an unknown item answers `null`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA } from '../helpers.js';
import { startFixtureServer, type FixtureServer } from './http.js';

const HN = join(CORPORA, 'hn');
const HAMMAD = join(HN, 'hammadxcm-hacker-news-client/test/fixtures');
const PETER = join(HN, 'peterhellberg-hn/_fixtures');

function readmeExamples(): Map<number, unknown> {
  const list = JSON.parse(readFileSync(join(HN, 'hackernews-api/readme-examples.derived.json'), 'utf8')) as { id?: number }[];
  return new Map(list.filter((x) => typeof x?.id === 'number').map((x) => [x.id!, x]));
}

function recorded(id: number, examples: Map<number, unknown>): string | null {
  for (const file of [join(HAMMAD, `item-${id}.json`), join(PETER, `${id}.json`)]) if (existsSync(file)) return readFileSync(file, 'utf8');
  return examples.has(id) ? JSON.stringify(examples.get(id)) : null;
}

/** Item `id` as the fixture server answers it (null when nothing recorded it), for tests that need no server. */
export function recordedHnItem(id: number): unknown {
  return JSON.parse(recorded(id, readmeExamples()) ?? 'null');
}

export interface HnServer extends FixtureServer {
  /** `${origin}/v0`, the HN_API_BASE to use. */
  base: string;
}

export async function startHnServer(overlay: Record<number, unknown> = {}, topstories?: number[]): Promise<HnServer> {
  const examples = readmeExamples();
  const json = (body: string) => ({ type: 'application/json; charset=utf-8', body });
  const server = await startFixtureServer(
    { '/v0/topstories.json': json(topstories ? JSON.stringify(topstories) : readFileSync(join(HAMMAD, 'topstories.json'), 'utf8')) },
    (path) => {
      const m = /^\/v0\/item\/(\d+)\.json$/.exec(path);
      if (!m) return { status: 404, type: 'application/json', body: '{"error":"Permission denied"}' };
      const id = Number(m[1]);
      if (id in overlay) return json(JSON.stringify(overlay[id]));
      return json(recorded(id, examples) ?? 'null');
    },
  );
  return Object.assign(server, { base: `${server.origin}/v0` });
}
