/**
 * The faults suite: a live server in its own process, attacked from outside the way a stranger
 * would. It asserts what must always hold (no crash, every hostile frame answered, quiet members
 * lose nothing) and prints one table of figures for the session note. The figures depend on the
 * machine and its load, so none of them is asserted; `npm run soak` runs the same with more of
 * everything (FAULTS_SCALE).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { RawClient, fuzzFrames, quietMember, rawUpgrade, upgradeRequest } from './clients.js';
import { startHostileSite } from '../fixtures-servers/hostile-pages.js';
import { FaultsReport } from './report.js';
import { FAULTS_ADMIN_TOKEN, pollHealth, quantile, startServer, type ServerProcess } from './server-process.js';

const SCALE = Math.max(1, Number(process.env.FAULTS_SCALE ?? 1));
const FUZZ_FRAMES = 10_000 * SCALE;
const FLOOD_RATE_PER_S = 1_000;
const FLOOD_SECONDS = 4 * SCALE;
const SLOW_CONSUMERS = 40;

const report = new FaultsReport();
let server: ServerProcess;
let rooms: string[];

beforeAll(async () => {
  // Hostile pages come from a loopback site, which the fetcher refuses unless allowed.
  // The HTTP API's per-address budget is not under test here: every request comes from 127.0.0.1.
  server = await startServer({ env: { FETCH_ALLOW_HOSTS: '127.0.0.1', INGEST_JOB_BUDGET_MS: '120000', API_RATE_LIMIT_PER_MINUTE: '1000000' } });
  const page = (await (await fetch(`${server.base}/api/v1/content?limit=3`)).json()) as { items: { id: string }[] };
  rooms = page.items.map((i) => i.id);
  expect(rooms.length).toBe(3);
}, 60_000);

afterAll(async () => {
  if (server && !server.exited()) await server.stop();
  report.print();
}, 30_000);

/** The server is still up and a newcomer can join and chat. */
async function assertAlive(): Promise<void> {
  expect(server.exited()).toBeNull();
  const { client, chat } = await quietMember(server.roomUrl(rooms[0]), 'Checker');
  const { lost } = await chat(1, 0);
  client.close();
  expect(lost).toBe(0);
}

describe('faults', () => {
  it('answers every fuzzed frame with an error or a close, and does not crash', async () => {
    const before = server.rssMb();
    let opened = 0;
    // Most sockets go to a real room; every fifth to one that does not exist.
    const roomUrl = () => server.roomUrl(++opened % 5 === 0 ? 'news_missing' : rooms[opened % 2]);
    const figures = await fuzzFrames(roomUrl, { total: FUZZ_FRAMES, parallel: 16, seed: 11 });
    const after = server.rssMb();
    await new Promise((r) => setTimeout(r, 2_000));
    const settled = server.rssMb();
    report.add('frames fuzzed', 'frames / connections', `${figures.frames} / ${figures.connections}`);
    report.add('frames fuzzed', 'unanswered frames', String(figures.unanswered));
    report.add('frames fuzzed', 'close codes', JSON.stringify(figures.closeCodes));
    report.add('frames fuzzed', 'server RSS MB before / after / 2 s later', `${before} / ${after} / ${settled}`);
    expect(figures.frames).toBeGreaterThanOrEqual(FUZZ_FRAMES);
    expect(figures.unansweredSamples).toEqual([]);
    await assertAlive();
    report.add('frames fuzzed', 'crashes', String(server.exited() ? 1 : 0));
  }, 240_000);

  it('survives odd upgrade requests', async () => {
    const port = Number(new URL(server.base).port);
    const cases: [string, Buffer | string][] = [
      ['non-ASCII room id (UTF-8 bytes)', Buffer.concat([Buffer.from('GET /ws/rooms/'), Buffer.from('€€€', 'utf8'), upgradeRequest('').subarray(4)])],
      ['percent-encoded room id', upgradeRequest('/ws/rooms/%E2%82%AC%00%FF')],
      ['room id of 8 KB', upgradeRequest(`/ws/rooms/${'a'.repeat(8_000)}`)],
      ['query string of 100 KB', upgradeRequest(`/ws/rooms/${rooms[0]}?${'q=x&'.repeat(25_000)}`)],
      ['Origin with bytes 0x80–0xff', upgradeRequest(`/ws/rooms/${rooms[0]}`, [`Origin: http://\x80\xfe\xff.example`])],
      ['Origin not a URL', upgradeRequest(`/ws/rooms/${rooms[0]}`, ['Origin: ::::'])],
      [
        'no Sec-WebSocket-Key',
        Buffer.from(
          upgradeRequest(`/ws/rooms/${rooms[0]}`)
            .toString('latin1')
            .replace(/Sec-WebSocket-Key:[^\r]*\r\n/, ''),
          'latin1',
        ),
      ],
      ['version 99', Buffer.from(upgradeRequest(`/ws/rooms/${rooms[0]}`).toString('latin1').replace('Version: 13', 'Version: 99'), 'latin1')],
      ['header of 64 KB', upgradeRequest(`/ws/rooms/${rooms[0]}`, [`X-Big: ${'b'.repeat(65_536)}`])],
      ['garbage request line', Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n', 'latin1')],
    ];
    const answers: string[] = [];
    for (const [name, request] of cases) {
      const status = await rawUpgrade(port, request);
      answers.push(`${name}: ${status}`);
      expect(status, name).not.toBe('no answer');
    }
    // Through a real client: an odd room id is refused with a close code after hello.
    const odd = await RawClient.open(`${server.base.replace('http', 'ws')}/ws/rooms/${encodeURIComponent('€\u202e\u0000room')}`);
    odd.send({ type: 'hello', name: 'Odd' });
    await odd.waitFor(0, () => false, 5_000);
    answers.push(`non-ASCII room id after hello: close ${odd.closeCode}`);
    expect(odd.closeCode).toBe(CloseCode.ROOM_NOT_FOUND);
    for (const line of answers) report.add('odd upgrades', line.split(': ')[0], line.split(': ').slice(1).join(': '));
    await assertAlive();
  }, 120_000);

  it('keeps quiet members chatting through a 1,000 msg/s flood', async () => {
    const floodRoom = rooms[0];
    const quietRoom = rooms[1];
    const sameRoom = await quietMember(server.roomUrl(floodRoom), 'QuietSame');
    const otherRoom = await quietMember(server.roomUrl(quietRoom), 'QuietOther');
    const count = 10 * SCALE;
    const unloaded = await Promise.all([sameRoom.chat(count, 200), otherRoom.chat(count, 200)]);

    const flood = floodFrom('127.0.0.99', server.roomUrl(floodRoom), FLOOD_RATE_PER_S, FLOOD_SECONDS * 1000);
    const loaded = await Promise.all([sameRoom.chat(count, 200), otherRoom.chat(count, 200)]);
    const flooded = await flood;
    sameRoom.client.close();
    otherRoom.client.close();

    const p99 = (runs: { latencies: number[] }[]) =>
      quantile(
        runs.flatMap((r) => r.latencies),
        0.99,
      ).toFixed(1);
    report.add('flood', 'flood frames sent / accepted / sockets closed 4429', `${flooded.sent} / ${flooded.accepted} / ${flooded.closed4429}`);
    report.add('flood', 'quiet member p99 ms, unloaded → flooded (same room)', `${p99([unloaded[0]])} → ${p99([loaded[0]])}`);
    report.add('flood', 'quiet member p99 ms, unloaded → flooded (other room)', `${p99([unloaded[1]])} → ${p99([loaded[1]])}`);
    for (const run of [...unloaded, ...loaded]) expect(run.lost).toBe(0);
    expect(flooded.accepted).toBeLessThan(flooded.sent);
    await assertAlive();
  }, 120_000);

  it('bounds the memory 40 slow consumers can hold', async () => {
    const room = rooms[2];
    const before = server.rssMb();
    const slow: RawClient[] = [];
    for (let i = 0; i < SLOW_CONSUMERS; i++) {
      const c = await RawClient.open(server.roomUrl(room), `127.0.1.${1 + i}`);
      c.send({ type: 'hello', name: `Slow${i}` });
      await c.waitFor(0, (f) => f.type === 'welcome', 10_000);
      // Stop reading: the kernel buffers fill, then the server's queue for this socket grows.
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      slow.push(c);
    }
    const talkers = await Promise.all(Array.from({ length: 4 }, (_, i) => quietMember(server.roomUrl(room), `Talker${i}`, `127.0.2.${1 + i}`)));
    let peak = server.rssMb();
    const sampler = setInterval(() => (peak = Math.max(peak, server.rssMb())), 100);
    const big = 'x'.repeat(3_900);
    const talked = await Promise.all(
      talkers.map(async (t) => {
        let lost = 0;
        for (let i = 0; i < 16 * SCALE; i++) {
          const clientId = `${i}-${Math.random()}`;
          const from = t.client.frames.length;
          t.client.send({ type: 'say', text: `${i} ${big}`, clientId });
          const echo = await t.client.waitFor(from, (f) => f.type === 'message' && f.message?.clientId === clientId, 10_000);
          if (!echo || echo === 'closed') lost++;
          await new Promise((r) => setTimeout(r, 250));
        }
        return lost;
      }),
    );
    clearInterval(sampler);
    const closed1013 = slow.filter((c) => c.closeCode === CloseCode.TRY_AGAIN_LATER).length;
    report.add('slow consumers', `${SLOW_CONSUMERS} consumers: RSS MB before / peak`, `${before} / ${peak}`);
    report.add('slow consumers', 'closed with 1013 while talking', String(closed1013));
    for (const c of [...slow, ...talkers.map((t) => t.client)]) c.close();
    expect(talked.every((lost) => lost === 0)).toBe(true);
    await assertAlive();
  }, 120_000);

  it('ingests hostile pages and feeds to an end while /healthz keeps answering', async () => {
    const site = await startHostileSite();
    const admin = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const health = pollHealth(server.base);
    const started = Date.now();
    const jobs = await Promise.all(
      site.pages.map(async ({ path, what }) => {
        const body = JSON.stringify(path.endsWith('-feed') ? { feed: `${site.origin}${path}` } : { url: `${site.origin}${path}` });
        const res = await fetch(`${server.base}/api/v1/ingest`, { method: 'POST', headers: admin, body });
        expect(res.status, what).toBe(202);
        return { what, jobId: ((await res.json()) as { jobId: string }).jobId };
      }),
    );
    const ended = await Promise.all(
      jobs.map(async ({ what, jobId }) => {
        for (;;) {
          const res = await fetch(`${server.base}/api/v1/ingest/${jobId}`);
          expect(res.status, what).toBe(200);
          const job = (await res.json()) as { status: string; done: number; failures: { code: string }[]; updatedAt: string; createdAt: string };
          if (!['queued', 'running'].includes(job.status)) return { what, job };
          await new Promise((r) => setTimeout(r, 100));
        }
      }),
    );
    const delays = await health.stop();
    await site.close();
    for (const { what, job } of ended) {
      const seconds = ((Date.parse(job.updatedAt) - Date.parse(job.createdAt)) / 1000).toFixed(1);
      const codes = [...new Set(job.failures.map((f) => f.code))].join(', ');
      report.add('hostile pages', what, `${job.status}${codes ? ` (${codes})` : ''}, ${job.done} item(s), ${seconds} s`);
      expect(['done', 'failed'], what).toContain(job.status);
    }
    report.add(
      'hostile pages',
      `/healthz while ${jobs.length} jobs ran: probes / p50 / p99 / max ms`,
      `${delays.length} / ${quantile(delays, 0.5).toFixed(1)} / ${quantile(delays, 0.99).toFixed(1)} / ${Math.max(...delays).toFixed(1)}`,
    );
    report.add('hostile pages', 'all jobs ended after s', ((Date.now() - started) / 1000).toFixed(1));
    await assertAlive();
  }, 240_000);

  it('shuts down cleanly on SIGTERM after all of it', async () => {
    const exit = await server.stop();
    report.add('shutdown', 'SIGTERM exit code', String(exit.code ?? exit.signal));
    expect(exit).toEqual({ code: 0, signal: null });
  }, 30_000);
});

/** Sends `ratePerS` say frames a second from one address for `ms`, over fresh sockets as the server closes them. */
async function floodFrom(address: string, url: string, ratePerS: number, ms: number): Promise<{ sent: number; accepted: number; closed4429: number }> {
  const out = { sent: 0, accepted: 0, closed4429: 0 };
  const end = Date.now() + ms;
  const sockets = 10;
  const lane = async (n: number) => {
    while (Date.now() < end) {
      let client: RawClient;
      try {
        client = await RawClient.open(url, address);
      } catch {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      client.send({ type: 'hello', name: `Flood${n}` });
      const tick = 1000 / (ratePerS / sockets);
      let i = 0;
      while (client.open && Date.now() < end) {
        client.send({ type: 'say', text: `flood ${n}-${i++}`, clientId: `f${n}-${i}` });
        out.sent++;
        await new Promise((r) => setTimeout(r, tick));
      }
      out.accepted += client.frames.filter((f) => f.type === 'message' && f.message?.author?.name === `Flood${n}`).length;
      if (client.closeCode === CloseCode.RATE_LIMITED) out.closed4429++;
      client.close();
    }
  };
  await Promise.all(Array.from({ length: sockets }, (_, n) => lane(n)));
  return out;
}
