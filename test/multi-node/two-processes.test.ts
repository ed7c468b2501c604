/**
 * Two real server processes (`node dist/src/server.js`) on one PostgreSQL schema and one Redis
 * (a key prefix of their own): members on different nodes chat and see one presence list, an
 * `@ai` ask is answered once with every member seeing it streamed, and when one node is killed
 * with SIGKILL its member reconnects to the other with `lastSeq` and misses nothing acknowledged.
 * Processes, schema and keys are removed whatever happens.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAULTS_ADMIN_TOKEN, startServer, type ServerProcess } from '../faults/server-process.js';
import { describeRedis, deleteKeys, REDIS_URL, testPrefix } from '../redis/gate.js';
import { Client, connect } from '../rooms/helpers.js';
import { describePostgres, freshSchema } from '../store/postgres-harness.js';

const ROOM = 'news_harbour';
const WAIT_MS = 15_000;
const ADMIN = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
type Frame = Awaited<ReturnType<Client['next']>>;
const names = (frame: Frame) => (frame.members as { name: string }[]).map((m) => m.name).join();

/** Polls `check` until it holds; fails after WAIT_MS. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Joins the room on `node` as `name`: the client and its welcome. */
async function join(node: ServerProcess, name: string, extra: Record<string, unknown> = {}) {
  const client = await connect(node.roomUrl(ROOM));
  const welcome = await client.hello(name, extra);
  return { client, welcome };
}

/** Seqs of every message `client` got: welcome history, messages and finished answers. */
function seqsSeen(client: Client): number[] {
  const history = client.all('welcome').flatMap((w) => (w.history as { seq: number }[]).map((m) => m.seq));
  return [...history, ...[...client.all('message'), ...client.all('assistant.done')].map((f) => f.message.seq as number)];
}

describePostgres('two server processes (PostgreSQL)', () => {
  describeRedis('two server processes on one PostgreSQL and one Redis', () => {
    const prefix = testPrefix();
    let schema: Awaited<ReturnType<typeof freshSchema>> | undefined;
    const nodes: ServerProcess[] = [];
    const clients: Client[] = [];

    beforeAll(async () => {
      schema = await freshSchema();
      const env = {
        DATABASE_URL: schema.url,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        IDENTITY_SECRET: 'one identity secret for both test processes',
        AI_PROVIDER: 'local',
        SEED_DEMO: 'false',
      };
      // One after the other: the second finds the item the first stored.
      nodes.push(await startServer({ env }));
      const put = await fetch(`${nodes[0].base}/api/v1/content`, {
        method: 'POST',
        headers: ADMIN,
        body: JSON.stringify({
          id: 'harbour',
          kind: 'news',
          title: 'Harbour council approves the timber pier',
          body: 'The harbour council approved the timber pier on Tuesday. Construction of the pier starts in May and costs four million euros.',
        }),
      });
      expect(put.status).toBe(200);
      nodes.push(await startServer({ env }));
    }, 90_000);

    afterAll(async () => {
      for (const c of clients) c.close();
      await Promise.allSettled(nodes.map((n) => n.stop(5_000)));
      await schema?.drop();
      await deleteKeys(prefix);
    }, 60_000);

    it('lets members of both nodes chat under one presence list, answers an ask once, and moves a killed node’s member to the other', async () => {
      const [a, b] = nodes;
      const ana = await join(a, 'Ana');
      clients.push(ana.client);
      const ben = await join(b, 'Ben');
      clients.push(ben.client);
      await ana.client.next('presence', (f) => names(f) === 'Ana,Ben', WAIT_MS);
      if (names(ben.welcome) !== 'Ana,Ben') await ben.client.next('presence', (f) => names(f) === 'Ana,Ben', WAIT_MS);

      ana.client.send({ type: 'say', text: 'hello from node A', clientId: 'a1' });
      expect((await ben.client.next('message', (f) => f.message.clientId === 'a1', WAIT_MS)).message.text).toBe('hello from node A');
      ben.client.send({ type: 'say', text: 'hello from node B', clientId: 'b1' });
      expect((await ana.client.next('message', (f) => f.message.clientId === 'b1', WAIT_MS)).message.text).toBe('hello from node B');

      ben.client.send({ type: 'say', text: '@ai when does construction of the timber pier start?', clientId: 'b2' });
      const done = await Promise.all([ana, ben].map((m) => m.client.next('assistant.done', () => true, WAIT_MS)));
      expect(done[0].message.id).toBe(done[1].message.id);
      for (const m of [ana, ben]) expect(m.client.all('assistant.delta').length).toBeGreaterThan(0);
      // A message said after the answer reaches both: had a second answer been streamed, it would be here by now on the same channel.
      ana.client.send({ type: 'say', text: 'thanks', clientId: 'a2' });
      for (const m of [ana, ben]) await m.client.next('message', (f) => f.message.clientId === 'a2', WAIT_MS);
      for (const m of [ana, ben]) expect(m.client.all('assistant.done')).toHaveLength(1);
      const stored = await (await fetch(`${b.base}/api/v1/rooms/${ROOM}/messages?limit=100`)).json();
      expect((stored.messages as { author: { kind: string } }[]).filter((m) => m.author.kind === 'assistant')).toHaveLength(1);

      // Content put on one node is searchable on the other (the index change feed).
      const put = await fetch(`${b.base}/api/v1/content`, {
        method: 'POST',
        headers: ADMIN,
        body: JSON.stringify({
          id: 'lighthouse',
          kind: 'news',
          title: 'Lighthouse keeper retires',
          body: 'The lighthouse keeper retired after forty winters on the rock.',
        }),
      });
      expect(put.status).toBe(200);
      await eventually(async () => {
        const found = await (await fetch(`${a.base}/api/v1/search?q=${encodeURIComponent('lighthouse keeper retired')}`)).json();
        return (found.hits as { id: string }[]).some((h) => h.id === 'news_lighthouse');
      }, 'node A finds the item put on node B');

      const lastSeq = Math.max(...seqsSeen(ben.client));
      await b.kill9();
      await ben.client.closed;
      ana.client.send({ type: 'say', text: 'said while Ben was away', clientId: 'a3' });
      const missed = (await ana.client.next('message', (f) => f.message.clientId === 'a3', WAIT_MS)).message;

      const back = await join(a, 'Ben', { token: ben.welcome.you.token, lastSeq });
      clients.push(back.client);
      expect(back.welcome.you.id).toBe(ben.welcome.you.id);
      expect((back.welcome.history as { id: string }[]).map((m) => m.id)).toContain(missed.id);
      const seen = new Set([...seqsSeen(ben.client), ...seqsSeen(back.client)]);
      for (let seq = 1; seq <= missed.seq; seq++) expect(seen.has(seq), `seq ${seq}`).toBe(true);
      // One list still: Ben once (his entry on the dead node expires, his new one on node A stays).
      await eventually(async () => {
        const room = await (await fetch(`${a.base}/api/v1/rooms/${ROOM}`)).json();
        return room.memberCount === 2 && names(room) === 'Ana,Ben';
      }, 'one presence list on node A');
    }, 120_000);
  });
});
