/**
 * The thread list's message counts follow what the page hears: the member's own message the room
 * acked (its echo waiting behind a catch-up) counts once its echo comes, and what a rejoin's
 * catch-up brings counts in every thread, not only the open one.
 */
import type { Page, WebSocketRoute } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { browserSuite, describeBrowser, item, newThread, openAs, say, threadButton } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };

/**
 * Routes `page`'s room sockets through the test: frames pass unless held. `holdOwnEchoes`: the echo
 * of the page's own message is kept back and an `ack` sent in its place, as a room in a catch-up
 * does, until `releaseEchoes`; `deaf`: messages from the room are dropped; `drop` closes the socket.
 */
async function routed(page: Page) {
  const state = {
    holdOwnEchoes: false,
    deaf: false,
    held: [] as string[],
    route: undefined as WebSocketRoute | undefined,
    /** Marks the next welcome `truncated`, as after a catch-up cut to its newest messages. */
    cutNextWelcome: false,
  };
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    state.route = ws;
    const server = ws.connectToServer();
    const own = new Set<string>();
    ws.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; clientId?: string };
      if (frame.type === 'say' && frame.clientId) own.add(frame.clientId);
      server.send(m);
    });
    server.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; message?: Message };
      if (frame.type === 'welcome' && state.cutNextWelcome) {
        state.cutNextWelcome = false;
        return ws.send(JSON.stringify({ ...frame, truncated: true }));
      }
      if (frame.type !== 'message') return ws.send(m);
      if (state.deaf) return;
      const { clientId, id } = frame.message!;
      if (state.holdOwnEchoes && clientId && own.has(clientId)) {
        state.held.push(String(m));
        return ws.send(JSON.stringify({ type: 'ack', clientId, id }));
      }
      ws.send(m);
    });
  });
  return {
    state,
    releaseEchoes: () => {
      for (const m of state.held.splice(0)) state.route?.send(m);
    },
    drop: () => state.route?.close(),
  };
}

const countOf = (page: Page, title: string) => threadButton(page, title).locator('.count').textContent();

describeBrowser('thread counts', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    for (const id of ['news_tc1', 'news_tc2', 'news_tc3']) {
      await store.upsertItem(item(id, { title: `Story ${id}` }));
      const main = await store.ensureMainThread(id);
      for (let i = 1; i <= 3; i++)
        await store.appendMessage({ roomId: id, threadId: main.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `main ${i}` });
    }
  });

  it("counts the member's own message the room acked once its echo comes", async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_tc1`);
      await expect.poll(() => countOf(page, 'Main')).toBe('3 messages');
      socket.state.holdOwnEchoes = true;
      await say(page, 'acked before its echo');
      await expect.poll(() => page.locator('salon-message-item[state="sent"]', { hasText: 'acked before its echo' }).count()).toBe(1);
      expect(socket.state.held).toHaveLength(1);
      socket.releaseEchoes();
      await expect.poll(() => countOf(page, 'Main')).toBe('4 messages');
    } finally {
      await context.close();
    }
  });

  it('counts in a thread not open what a rejoin brought that the page missed, its own acked message too', async () => {
    await newThread(suite.server, 'news_tc2', 'Side talk');
    const ada = await openAs(suite.browser, 'Ada', DESKTOP);
    const bob = await openAs(suite.browser, 'Bob', DESKTOP);
    try {
      const socket = await routed(ada.page);
      await ada.page.goto(`${suite.server.url}/chat?id=news_tc2`);
      await expect.poll(() => countOf(ada.page, 'Main')).toBe('3 messages');
      await bob.page.goto(`${suite.server.url}/chat?id=news_tc2`);
      await bob.page.locator('salon-member-list .count[data-count="2"]').waitFor({ state: 'attached' });

      // Ada's own message in main is acked and its echo lost with the socket; then she opens Side.
      socket.state.holdOwnEchoes = true;
      await say(ada.page, 'mine, acked');
      await expect.poll(() => socket.state.held.length).toBe(1);
      await threadButton(ada.page, 'Side talk').click();
      await expect.poll(() => threadButton(ada.page, 'Side talk').getAttribute('aria-current')).toBe('true');

      // Bob writes in main while Ada hears nothing of it.
      socket.state.deaf = true;
      await say(bob.page, 'from Bob, missed');
      await expect.poll(() => bob.page.locator('salon-message-item[state="sent"]', { hasText: 'from Bob, missed' }).count()).toBe(1);
      expect(await countOf(ada.page, 'Main')).toBe('3 messages');

      // The socket goes; the rejoin's catch-up brings both.
      socket.state.deaf = false;
      socket.state.holdOwnEchoes = false;
      socket.state.held.length = 0;
      socket.drop();
      await expect.poll(() => countOf(ada.page, 'Main')).toBe('5 messages');
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });

  it("asks for every active thread's count again after a rejoin whose catch-up was cut", async () => {
    await newThread(suite.server, 'news_tc3', 'Side talk');
    const ada = await openAs(suite.browser, 'Ada', DESKTOP);
    const bob = await openAs(suite.browser, 'Bob', DESKTOP);
    try {
      const socket = await routed(ada.page);
      await ada.page.goto(`${suite.server.url}/chat?id=news_tc3`);
      await expect.poll(() => countOf(ada.page, 'Main')).toBe('3 messages');
      await threadButton(ada.page, 'Side talk').click();
      await expect.poll(() => threadButton(ada.page, 'Side talk').getAttribute('aria-current')).toBe('true');
      await bob.page.goto(`${suite.server.url}/chat?id=news_tc3`);
      await bob.page.locator('salon-member-list .count[data-count="2"]').waitFor({ state: 'attached' });

      socket.state.deaf = true;
      await say(bob.page, 'from Bob, missed');
      await expect.poll(() => bob.page.locator('salon-message-item[state="sent"]', { hasText: 'from Bob, missed' }).count()).toBe(1);
      socket.state.deaf = false;
      socket.state.cutNextWelcome = true;
      socket.drop();
      await ada.page.locator('salon-connection-status [data-notice="HISTORY_TRUNCATED"]').waitFor();
      await expect.poll(() => countOf(ada.page, 'Main')).toBe('4 messages');
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });
});
