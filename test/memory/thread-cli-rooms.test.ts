/**
 * `salon threads` beside a running server on the same store (needs the build: the command runs as
 * a process). With REDIS_URL the server's live room is told as the HTTP API tells it: its members
 * get the notice and its history follows the merge or split. Without it no server can be reached:
 * then, and when the Redis named does not answer, the command says so plainly, and the live room
 * keeps what it holds, as the command says; so it does, naming the rooms, when Redis drops while
 * the command tells them.
 */
import { createServer, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { NOT_TOLD_WITHOUT_REDIS, REDIS_WAIT_MS, UNTOLD_ROOMS_SEE } from '../../src/cli/room-notices.js';
import { testConfig } from '../../src/config.js';
import type { Message } from '../../src/protocol/messages.js';
import type { RedisRoomBus } from '../../src/rooms/redis-bus.js';
import { salon, tempDir } from '../helpers.js';
import { deleteKeys, describeRedis, REDIS_URL, testPrefix } from '../redis/gate.js';
import { item, joined, ROOM } from '../rooms/helpers.js';

const ANN = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A running server on a fresh DATA_DIR whose room holds a thread "Trains" with one message; `env` is the command's. */
async function server(extra: Record<string, string> = {}) {
  const { dir, cleanup } = tempDir('salon-cli-rooms-');
  const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1', IDENTITY_SECRET: 'one secret for the server and the command', ...extra };
  // Shutdown waits only briefly for sockets: injectWS sockets never report their close.
  const app = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }), { roomOptions: { shutdownGraceMs: 100 } });
  closers.push(async () => {
    await app.close();
    cleanup();
  });
  await app.ready();
  const { store, threads } = app.salon;
  await store.upsertItem(item(ROOM, { title: 'Rust 2.0 released' }));
  const main = await store.ensureMainThread(ROOM);
  const trains = await threads.create(ROOM, 'Trains', 'admin');
  const said = (await store.appendMessage({ roomId: ROOM, threadId: trains.id, author: ANN, text: 'The night train leaves at 22:10' })).message;
  return { app, env, main, trains, said };
}

/** Frames as the room helpers' Client keeps them (any fields). */
type Frame = Record<string, any>;
const filing = (welcome: Frame) => (welcome.history as Message[]).map((m) => [m.id, m.threadId]);
const notice = (f: Frame) => (f.message as Message).author.kind === 'system';

describe('salon threads without REDIS_URL', () => {
  it('says that rooms open on a running server were not told; such a room keeps what it holds, as it says', async () => {
    const { app, env, main, trains, said } = await server();
    await joined(app, 'Ann');
    const merged = await salon(['threads', 'merge', main.id, trains.id], env);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).toBe(`salon threads: ${NOT_TOLD_WITHOUT_REDIS}\n`);
    const { welcome } = await joined(app, 'Bo');
    expect(filing(welcome)).toEqual([[said.id, trains.id]]);
    // Reading changes nothing, and has nothing to tell.
    const shown = await salon(['threads', 'show', main.id], env);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
  }, 60_000);

  it('says so when the Redis it names does not answer: the change is stored, and the command succeeds', async () => {
    const { env, main, trains } = await server();
    // Nothing listens on port 1: the command waits REDIS_WAIT_MS for it.
    const merged = await salon(['threads', 'merge', main.id, trains.id], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout).thread.id).toBe(main.id);
    expect(merged.stderr).toBe(
      `salon threads: the change is saved, but rooms open on running servers were not told (${ROOM}): Redis did not answer within ${REDIS_WAIT_MS / 1000} s. ${UNTOLD_ROOMS_SEE}\n`,
    );
  }, 60_000);
});

/**
 * A loopback proxy to Redis that drops the command's link between its first and second publish:
 * when the first PUBLISH passes, every other connection (the subscriber's) is reset, and the
 * PUBLISH's answer is held until a new connection comes (the command reconnecting: it knows by
 * then that its link is down); from then on connections are accepted and never answered.
 */
async function dropAfterFirstPublish(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let published = false;
  let release = () => {};
  const keep = (sock: Socket) => {
    sockets.add(sock);
    sock.on('error', () => {});
    sock.on('close', () => sockets.delete(sock));
  };
  const server = createServer((client) => {
    keep(client);
    if (published) return release();
    const upstream = connect(Number(port || 6379), hostname);
    keep(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let held: Buffer[] | null = null;
    client.on('data', (chunk: Buffer) => {
      if (!published && /\$7\r\npublish\r\n/i.test(chunk.toString('latin1'))) {
        published = true;
        held = [];
        for (const sock of sockets) if (sock !== client && sock !== upstream) sock.resetAndDestroy();
        release = () => {
          for (const answer of held ?? []) client.write(answer);
          held = null;
        };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => (held ? held.push(chunk) : client.write(chunk)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describeRedis('salon threads beside a server on Redis', () => {
  it('tells the live room of a merge and a split on the bus, as the HTTP API does', async () => {
    const prefix = testPrefix();
    closers.push(() => deleteKeys(prefix));
    const { app, env, main, trains, said } = await server({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
    await (app.salon.rooms.bus as RedisRoomBus).ready();
    const { client } = await joined(app, 'Ann');

    const merged = await salon(['threads', 'merge', main.id, trains.id], env);
    expect(merged).toMatchObject({ code: 0, stderr: '' });
    expect((await client.next('message', notice, 10_000)).message.text).toMatch(/^“Trains” was merged into “.+”\.$/);
    expect(filing((await joined(app, 'Bo')).welcome)).toEqual([[said.id, main.id]]);

    // A split leaves its thread at least one message.
    await app.salon.store.appendMessage({ roomId: ROOM, threadId: main.id, author: ANN, text: 'The day train leaves at 8:10' });
    const parts = JSON.stringify([{ title: 'Night trains', messageIds: [said.id] }]);
    const split = await salon(['threads', 'split', main.id, '--parts', parts], env);
    expect(split.code, split.stderr).toBe(0);
    const child = JSON.parse(split.stdout).threads[0].id as string;
    expect((await client.next('message', notice, 10_000)).message.text).toMatch(/was split: “Night trains” is a thread of its own now\.$/);
    expect(filing((await joined(app, 'Cy')).welcome).filter(([id]) => id === said.id)).toEqual([[said.id, child]]);
  }, 60_000);

  it('says which rooms were not told when Redis drops while it tells them, and that the change is saved', async () => {
    const prefix = testPrefix();
    closers.push(() => deleteKeys(prefix));
    const { app, env, main, trains } = await server({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
    await (app.salon.rooms.bus as RedisRoomBus).ready();
    await joined(app, 'Ann');
    const proxy = await dropAfterFirstPublish(REDIS_URL);
    closers.push(proxy.close);
    // A merge tells its room twice: the move of its messages, then the notice members read.
    const merged = await salon(['threads', 'merge', main.id, trains.id], { ...env, REDIS_URL: proxy.url });
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout).thread.id).toBe(main.id);
    expect(merged.stderr).toBe(
      `salon threads: the change is saved, but rooms open on running servers were not told (${ROOM}): the connection to Redis dropped while the rooms were being told. ${UNTOLD_ROOMS_SEE}\n`,
    );
    expect((await app.salon.threads.get(trains.id)).mergedInto).toBe(main.id);
  }, 60_000);
});
