/**
 * An answer's inactivity timeout (routes/stalled-readers.ts) with requests pipelined on one
 * keep-alive connection: each request gets its own, from its own answer, and a client that takes
 * none of an answer is still cut. A raw socket on 127.0.0.1 sends the requests in one write.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cutStalledReaders } from '../src/routes/stalled-readers.js';

/** The answer's timeout: short, since the test waits past it on a real clock. */
const MS = 300;

const apps: FastifyInstance[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const a of apps.splice(0)) await a.close();
});

/** An app with `/fast`, `/big` (16 MB, far more than loopback buffers take) and `/slow`, which answers when `release` is called. */
async function start() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const app = Fastify({ keepAliveTimeout: 60_000 });
  apps.push(app);
  cutStalledReaders(app, MS);
  app.get('/fast', async () => 'fast');
  app.get('/big', async () => 'x'.repeat(16_000_000));
  app.get('/slow', async () => {
    await released;
    return 'slow';
  });
  // Seen from the server: a paused client socket may not tell it was cut until it reads.
  let closed = false;
  app.server.on('connection', (s: Socket) => s.on('close', () => (closed = true)));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  let got = '';
  socket.on('data', (d) => (got += d));
  return { socket, release, got: () => got, closed: () => closed };
}

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
const waitPast = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('answers on a keep-alive connection with pipelined requests', () => {
  it('gives a request pipelined behind an answer its own time: its handler is not cut by the answer before it', async () => {
    const c = await start();
    c.socket.write(request('/fast') + request('/slow'));
    await vi.waitFor(() => expect(c.got()).toContain('fast'), { timeout: 10_000 });
    // The first answer has gone; the second request's handler takes longer than an answer's timeout.
    await waitPast(MS * 4);
    expect(c.closed()).toBe(false);
    c.release();
    await vi.waitFor(() => expect(c.got()).toContain('slow'), { timeout: 10_000 });
    expect(c.got().split('HTTP/1.1 200 OK').length - 1).toBe(2);
  });

  it('still cuts the connection when the client takes none of the first answer, whatever is pipelined behind it', async () => {
    const c = await start();
    c.socket.pause();
    c.socket.write(request('/big') + request('/slow'));
    await vi.waitFor(() => expect(c.closed()).toBe(true), { timeout: 20_000, interval: 50 });
  });

  it('cuts a pipelined request’s answer that the client does not take, from its own start', async () => {
    const c = await start();
    c.socket.write(request('/fast') + request('/slow') + request('/big'));
    await vi.waitFor(() => expect(c.got()).toContain('fast'), { timeout: 10_000 });
    c.socket.pause();
    await waitPast(MS * 4);
    expect(c.closed()).toBe(false);
    c.release();
    await vi.waitFor(() => expect(c.closed()).toBe(true), { timeout: 20_000, interval: 50 });
  });
});
