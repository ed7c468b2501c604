import type { Page, WebSocketRoute } from 'playwright-core';
import { expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { browserSuite, describeBrowser, item, messageTexts, openAs, say } from './harness.js';

// Rejoining a node that is behind the others (freshly started, or not caught up) gives a welcome
// whose seq is below the page's: its history agrees with what the page holds, so the page keeps
// its state (the private questions above all, which exist nowhere else). A store that was wiped
// gives messages the page never had at seqs it holds: that one is a reset.

type Rewrite = (welcome: { seq: number; history: Message[] }) => void;

/**
 * Routes the page's room socket to the server. The page's private questions are answered by the
 * test; the messages the server sends are recorded; `rejoin(rewrite)` drops the socket, and the
 * welcome of the next one is rewritten.
 */
async function routed(page: Page): Promise<{ messages: Message[]; rejoin(rewrite: Rewrite): Promise<void> }> {
  let route: WebSocketRoute | undefined;
  let toServer: WebSocketRoute | undefined;
  let rewrite: Rewrite | undefined;
  let rewritten: (() => void) | undefined;
  const messages: Message[] = [];
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    route = ws;
    const server = ws.connectToServer();
    toServer = server;
    ws.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; clientId?: string; threadId?: string };
      if (frame.type !== 'ask') return server.send(m);
      const last = messages.at(-1)!;
      const answer = {
        ...last,
        id: `private_${frame.clientId}`,
        seq: 0,
        author: { id: 'assistant', name: 'Assistant', kind: 'assistant' },
        text: 'A private answer.',
      };
      ws.send(JSON.stringify({ type: 'assistant.done', message: { ...answer, clientId: 'ans_private' } }));
    });
    server.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; message?: Message; seq: number; history: Message[] };
      if (frame.type === 'message' && frame.message!.seq > 0) messages.push(frame.message!);
      if (frame.type === 'welcome' && rewrite) {
        rewrite(frame);
        rewrite = undefined;
        ws.send(JSON.stringify(frame));
        return rewritten?.();
      }
      ws.send(m);
    });
  });
  return {
    messages,
    rejoin: (r) =>
      new Promise<void>((resolve) => {
        rewrite = r;
        rewritten = resolve;
        void toServer!.close();
        void route!.close();
      }),
  };
}

async function privateMode(page: Page): Promise<void> {
  await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
  await page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
}

describeBrowser('rejoining a node that is behind', () => {
  const suite = browserSuite({ server: true });

  it("keeps the page's messages and private questions, and still takes a wiped store as a reset", async () => {
    await suite.server.app.salon.store.upsertItem(item('news_bn', { title: 'Behind the others' }));
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_bn`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      for (const text of ['one', 'two', 'three']) await say(page, text);
      await expect.poll(() => socket.messages.length).toBe(3);
      await privateMode(page);
      await say(page, 'my own question');
      const shown = ['one', 'two', 'three', 'my own question', 'A private answer.'];
      await expect.poll(() => messageTexts(page)).toEqual(shown);

      // The node knows the room up to "two": its welcome says so, with the messages it has.
      const [one, two] = socket.messages;
      await socket.rejoin((w) => Object.assign(w, { seq: two.seq, history: [one, two] }));
      await expect.poll(() => page.locator('salon-connection-status [data-state]').count()).toBe(0);
      expect(await messageTexts(page)).toEqual(shown);
      expect(await page.evaluate(() => Object.keys(sessionStorage).some((k) => k.startsWith('salon.private.')))).toBe(true);

      // A wiped store: its first message is not the page's first.
      await socket.rejoin((w) => Object.assign(w, { seq: 1, history: [{ ...one, id: 'msg_after_the_wipe', text: 'a new start' }] }));
      await expect.poll(() => messageTexts(page)).toEqual(['a new start']);
    } finally {
      await context.close();
    }
  });
});
