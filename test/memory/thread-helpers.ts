/** What the thread-operation suites share: an app, admin calls, and threads filled through the import path. */
import { expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN } from '../helpers.js';
import { roomsApp } from '../rooms/helpers.js';

export type Json = Record<string, any>;

/** A ready app with the rooms of test/rooms/helpers.ts and limits out of the way; `closers` closes it. */
export async function threadsApp(closers: (() => Promise<void> | void)[]): Promise<FastifyInstance> {
  const t = await roomsApp({ API_RATE_LIMIT_PER_MINUTE: '100000', ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' });
  closers.push(t.close);
  return t.app;
}

/** An admin call that must answer `expected`; its JSON body. */
export async function call(a: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, expected = 200): Promise<Json> {
  const res = await a.inject({ method, url, headers: ADMIN, ...(payload === undefined ? {} : { payload: payload as Json }) });
  expect(res.statusCode, res.body).toBe(expected);
  return res.json();
}

/** A new thread of `roomId` holding `lines` (author: text), one minute apart from `start`, its memory stored. */
export async function threadWith(
  a: FastifyInstance,
  roomId: string,
  title: string,
  lines: [string, string][],
  start = Date.UTC(2026, 10, 1, 10),
): Promise<{ id: string; messageIds: string[] }> {
  const { thread } = await call(a, 'POST', `/api/v1/rooms/${roomId}/threads`, { title });
  const messages = lines.map(([name, text], i) => ({ author: { name }, text, ts: new Date(start + i * 60_000).toISOString() }));
  const { messageIds } = await call(a, 'POST', `/api/v1/rooms/${roomId}/import`, { threadId: thread.id, messages });
  await a.salon.memory.idle();
  return { id: thread.id, messageIds };
}

export const TRAINS: [string, string][] = [
  ['Ann', 'The night train to Vienna leaves at 22:10 from platform 4.'],
  ['Cy', 'Sleeper cabins cost 120 euros for two people.'],
  ['Ann', 'The dining car serves goulash until midnight.'],
];
export const GARDEN: [string, string][] = [
  ['Bo', 'Tomatoes need six hours of sun a day.'],
  ['Di', 'Water them at the roots, never on the leaves.'],
  ['Bo', 'Basil planted next to tomatoes keeps the pests away.'],
];
