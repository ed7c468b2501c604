/**
 * Durability under `kill -9`: a server killed at a random moment during busy chat and an ingest
 * job, 20 times over one DATA_DIR. After each restart every acknowledged message is there exactly
 * once, every item is whole (it has its chunks) or absent, and the vector index comes to hold
 * exactly the stored chunks. One row of figures joins the faults table.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../fixtures-servers/http.js';
import { tempDir } from '../helpers.js';
import { RawClient } from './clients.js';
import { FaultsReport } from './report.js';
import { FAULTS_ADMIN_TOKEN, startServer, type ServerProcess } from './server-process.js';

const SCALE = Math.max(1, Number(process.env.FAULTS_SCALE ?? 1));
const ROUNDS = 20 * SCALE;
const ROOM = 'post_kill9';
const ADMIN = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
const ENV = { SEED_DEMO: 'false', FETCH_ALLOW_HOSTS: '127.0.0.1' };

const report = new FaultsReport();
let site: FixtureServer;
let data: { dir: string; cleanup: () => void };

const paragraphs = (n: number) =>
  Array.from(
    { length: 6 },
    (_, i) => `<p>Paragraph ${i} of story ${n}: the harbour council met again about the timber pier and heard from many residents.</p>`,
  ).join('');

beforeAll(async () => {
  data = tempDir('salon-kill9-');
  site = await startFixtureServer({}, (path) => {
    const n = Number(/\d+/.exec(path)?.[0] ?? 0);
    if (path.startsWith('/feed')) {
      const items = Array.from(
        { length: 12 },
        (_, i) => `<item><title>Story ${n}-${i}</title><link>${site.origin}/story/${n * 100 + i}</link><description>Story ${n}-${i}.</description></item>`,
      );
      return { type: 'application/rss+xml', body: `<?xml version="1.0"?><rss><channel><title>Feed ${n}</title>${items.join('')}</channel></rss>` };
    }
    return {
      type: 'text/html; charset=utf-8',
      body: `<html><head><title>Story ${n}</title></head><body><article><h1>Story ${n}</h1>${paragraphs(n)}</article></body></html>`,
    };
  });
});

afterAll(async () => {
  await site?.close();
  data?.cleanup();
  report.print();
});

/** Chats until stopped; resolves to the clientIds the server acknowledged (echoed with a seq). */
function chatter(server: ServerProcess, round: number) {
  let running = true;
  const acked: string[] = [];
  const done = (async () => {
    const client = await RawClient.open(server.roomUrl(ROOM));
    client.send({ type: 'hello', name: `Talker${round}` });
    let n = 0;
    while (running && client.open) {
      const clientId = `r${round}-${++n}`;
      client.send({ type: 'say', text: `message ${clientId}`, clientId });
      await new Promise((r) => setTimeout(r, 15));
      for (const f of client.frames.splice(0)) if (f.type === 'message' && f.message?.clientId && f.message.seq > 0) acked.push(f.message.clientId);
    }
    return acked;
  })().catch(() => acked);
  return { stop: () => (running = false), done };
}

/** Every message of the room, paged through the HTTP API. */
async function allMessages(server: ServerProcess): Promise<{ seq: number; clientId?: string }[]> {
  const out: { seq: number; clientId?: string }[] = [];
  let before: number | undefined;
  for (;;) {
    const res = await fetch(`${server.base}/api/v1/rooms/${ROOM}/messages?limit=100${before ? `&before=${before}` : ''}`);
    const page = (await res.json()) as { messages: { seq: number; clientId?: string }[]; hasMore: boolean };
    out.unshift(...page.messages);
    if (!page.hasMore || page.messages.length === 0) return out;
    before = page.messages[0].seq;
  }
}

/** Vectors in the index, from the admin view of /readyz (`N vectors, …`). */
async function indexedVectors(server: ServerProcess): Promise<number> {
  const ready = (await (await fetch(`${server.base}/readyz`, { headers: ADMIN })).json()) as { checks: { search?: { detail?: string } } };
  return Number(/^(\d+) vectors/.exec(ready.checks.search?.detail ?? '')?.[1] ?? -1);
}

describe('kill -9', () => {
  it(`loses and duplicates no acknowledged message and leaves no half item, over ${ROUNDS} kills`, async () => {
    const acked = new Set<string>();
    const jobIds: string[] = [];
    let kills = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const server = await startServer({ dataDir: data.dir, env: ENV });
      try {
        if (round === 1) {
          const res = await fetch(`${server.base}/api/v1/content`, {
            method: 'POST',
            headers: ADMIN,
            body: JSON.stringify({ id: 'kill9', kind: 'post', title: 'Kill drill', body: 'A room to chat in while the server dies.' }),
          });
          expect(res.status).toBe(200);
        }
        const talk = chatter(server, round);
        const submitted = await fetch(`${server.base}/api/v1/ingest`, {
          method: 'POST',
          headers: ADMIN,
          body: JSON.stringify({ feed: `${site.origin}/feed/${round}` }),
        });
        if (submitted.status === 202) jobIds.push(((await submitted.json()) as { jobId: string }).jobId);
        // Somewhere in the middle of both.
        await new Promise((r) => setTimeout(r, 150 + ((round * 137) % 400)));
        await server.kill9();
        kills++;
        talk.stop();
        for (const id of await talk.done) acked.add(id);
      } finally {
        if (!server.exited()) await server.kill9();
      }
    }

    const server = await startServer({ dataDir: data.dir, env: ENV });
    try {
      // The jobs a kill interrupted run again at the next start (up to three starts): counted once they ended.
      for (const id of jobIds) {
        for (let i = 0; i < 600; i++) {
          const job = (await (await fetch(`${server.base}/api/v1/ingest/${id}`)).json()) as { status?: string };
          if (job.status !== 'queued' && job.status !== 'running') break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const messages = await allMessages(server);
      const seen = new Map<string, number>();
      for (const m of messages) if (m.clientId) seen.set(m.clientId, (seen.get(m.clientId) ?? 0) + 1);
      const lost = [...acked].filter((id) => !seen.has(id));
      const duplicated = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
      const seqs = messages.map((m) => m.seq);

      // Read the store beside the running server (WAL allows a reader): items without chunks are half-written.
      const db = new Database(join(data.dir, 'salon.db'), { readonly: true, fileMustExist: true });
      const items = (db.prepare("SELECT count(*) AS n FROM items WHERE id LIKE 'news_%'").get() as { n: number }).n;
      const halfItems = (
        db.prepare("SELECT count(*) AS n FROM items i WHERE id LIKE 'news_%' AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.item_id = i.id)").get() as {
          n: number;
        }
      ).n;
      const chunks = (db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n;
      db.close();
      // The indexer embeds what a kill left unembedded once it starts again.
      let vectors = -1;
      for (let i = 0; i < 300 && vectors !== chunks; i++) {
        vectors = await indexedVectors(server);
        if (vectors !== chunks) await new Promise((r) => setTimeout(r, 100));
      }

      report.add('kill -9', 'rounds / acknowledged messages / lost / duplicated', `${kills} / ${acked.size} / ${lost.length} / ${duplicated.length}`);
      report.add('kill -9', 'items ingested / half-written / chunks / vectors after restart', `${items} / ${halfItems} / ${chunks} / ${vectors}`);
      expect(kills).toBe(ROUNDS);
      expect(acked.size).toBeGreaterThan(0);
      expect(lost).toEqual([]);
      expect(duplicated).toEqual([]);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(halfItems).toBe(0);
      expect(vectors).toBe(chunks);
    } finally {
      await server.stop();
    }
  }, 600_000);
});
