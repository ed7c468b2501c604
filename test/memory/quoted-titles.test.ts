/**
 * Titles and messages that the system and the assistant quote are shown as typed. The client
 * renders every message's text as markdown (public/src/lib/markdown.ts), so a member's thread
 * title such as `[Verify your account](https://evil.example)` quoted in a "Salon" announcement or
 * in the fused thread's "Salon AI" introduction would otherwise become a link, or emphasis, under
 * that author's name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import markdownIt from 'markdown-it';
import type { FastifyInstance } from 'fastify';
import { joined, roomsApp, ROOM, until } from '../rooms/helpers.js';
import { call } from './thread-helpers.js';
import { CommandReplies } from '../../public/src/lib/command-replies.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** The client's parser for messages (lib/markdown.ts: the `message` profile). */
const md = markdownIt('zero', { html: false, linkify: false, typographer: false, breaks: true }).enable([
  'emphasis',
  'backticks',
  'fence',
  'link',
  'newline',
  'escape',
  'entity',
  'list',
  'blockquote',
]);

/** The text a message shows, and whether any markup came of it. */
function shown(text: string): { markup: boolean; text: string } {
  const html = md.render(text);
  const inner = html.replace(/^<p>|<\/p>\n$/g, '');
  return {
    markup: /<(a|strong|em|code)\b/.test(html),
    text: inner
      .replace(/<br>\n/g, '\n')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
  };
}

const HOSTILE = '[Verify your account](https://evil.example) **now** `x` &amp;';

async function app(): Promise<FastifyInstance> {
  const t = await roomsApp({ API_RATE_LIMIT_PER_MINUTE: '100000' }, { roomOptions: { ratePerSecond: 1000, rateBurst: 1000 } });
  closers.push(t.close);
  return t.app;
}

describe('titles and messages quoted by the system and the assistant', () => {
  it('show as typed in announcements, command replies and a fusion’s introduction', async () => {
    const a = await app();
    const { client } = await joined(a, 'Ann', ROOM);
    const { thread } = await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: HOSTILE });
    const announced = async (needle: string) => {
      await until(() => client.frames.some((f) => f.type === 'message' && f.message.author.kind === 'system' && f.message.text.includes(needle)));
      return client.frames.find((f) => f.type === 'message' && f.message.author.kind === 'system' && f.message.text.includes(needle))!.message.text as string;
    };
    const started = shown(await announced('A new thread started'));
    expect(started).toEqual({ markup: false, text: `A new thread started: “${HOSTILE}”.` });

    client.send({ type: 'say', text: '/threads', clientId: 'c1' });
    await until(() => client.frames.some((f) => f.type === 'message' && f.message.clientId === 'c1'));
    const listing = shown(client.frames.find((f) => f.type === 'message' && f.message.clientId === 'c1')!.message.text);
    expect(listing.markup).toBe(false);
    expect(listing.text).toContain(`${thread.id} · ${HOSTILE} ·`);

    // A message quoted by the split listing shows as typed too.
    client.send({ type: 'say', text: 'see **this** [link](https://evil.example)', clientId: 'm1', threadId: thread.id });
    await until(() => client.frames.some((f) => f.type === 'message' && f.message.clientId === 'm1' && f.message.seq > 0));
    client.send({ type: 'say', text: `/split ${thread.id}`, clientId: 'c2' });
    await until(() => client.frames.some((f) => f.type === 'message' && f.message.clientId === 'c2'));
    const split = shown(client.frames.find((f) => f.type === 'message' && f.message.clientId === 'c2')!.message.text);
    expect(split.markup).toBe(false);
    expect(split.text).toContain(`Ann: see **this** [link](https://evil.example)`);

    const other = await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: 'Plain' });
    const fused = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [thread.id, other.thread.id] });
    const [intro] = await a.salon.store.threadMessages(fused.thread.id, 5);
    expect(intro.author.kind).toBe('assistant');
    const introduced = shown(intro.text);
    expect(introduced.markup).toBe(false);
    expect(introduced.text).toContain(`This thread fuses the discussions "${HOSTILE}" and "Plain".`);
  });

  it('read as typed where the page shows a command’s reply as plain text', async () => {
    const a = await app();
    const { client } = await joined(a, 'Ann', ROOM);
    const replies = new CommandReplies();
    const reply = replies.expect('t1');
    client.send({ type: 'say', text: `/thread new ${HOSTILE}`, clientId: 't1' });
    await until(() => client.frames.some((f) => f.type === 'message' && f.message.clientId === 't1'));
    expect(replies.message(client.frames.find((f) => f.type === 'message' && f.message.clientId === 't1')!.message)).toBe(true);
    const got = await reply;
    expect(got.ok ? got.text.split(' (thr_')[0] : got).toBe(`Started thread “${HOSTILE}”`);
  });
});
