import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, messageTexts, openAs, privateAnswerFrame, say, shownMessage, threadButton } from './harness.js';

// A room's main thread is replaced when it is deleted (the room makes a new one) or the store is
// wiped. What the member wrote in the main view belongs to the room's main thread, whichever it is
// when it is sent; what they wrote in a named thread that is gone cannot be sent anywhere by itself.

const ADMIN = { authorization: 'Bearer test-admin-token' };

describeBrowser('a main thread replaced', () => {
  const suite = browserSuite({ server: true });

  const deleteThread = async (id: string) => {
    const res = await fetch(`${suite.server.url}/api/v1/threads/${id}`, { method: 'DELETE', headers: ADMIN });
    expect(res.status).toBe(200);
  };
  const textsOf = async (threadId: string) => (await suite.server.app.salon.store.threadMessages(threadId, 100)).map((m) => m.text);

  it('sends what was written in the main view while away to the new main thread, and says a deleted thread’s message cannot be sent', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_unsent', { title: 'Unsent while away' }));
    const oldMain = (await store.ensureMainThread('news_unsent')).id;
    const created = await fetch(`${suite.server.url}/api/v1/rooms/news_unsent/threads`, {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Side' }),
    });
    const side = ((await created.json()) as { thread: { id: string } }).thread.id;
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_unsent`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await threadButton(page, 'Side').click();
      await expect.poll(() => threadButton(page, 'Side').getAttribute('aria-current')).toBe('true');

      await context.setOffline(true);
      await page.getByText('You are offline').first().waitFor();
      await say(page, 'written in Side while away');
      await threadButton(page, 'Main').click();
      await say(page, 'written in the main view while away');
      await expect.poll(() => shownMessage(page, 'written in the main view while away')).toMatchObject({ state: 'sending' });

      await deleteThread(oldMain);
      await deleteThread(side);
      const newMain = (await store.ensureMainThread('news_unsent')).id;
      expect(newMain).not.toBe(oldMain);
      await context.setOffline(false);

      // The main view's message went to the new main thread and shows as sent there.
      await expect.poll(() => shownMessage(page, 'written in the main view while away'), { timeout: 15_000 }).toMatchObject({ state: 'sent' });
      expect(await textsOf(newMain)).toEqual(['written in the main view while away']);
      // Side's message says why it was not sent, in the main view (Side is gone), with no Retry.
      await expect
        .poll(() => shownMessage(page, 'written in Side while away'), { timeout: 15_000 })
        .toEqual({
          state: 'failed',
          status: 'Not sent: the thread it was written in was deleted. Copy the text to say it in another thread. Discard',
          buttons: ['Discard'],
        });
      // (Their order depends on which of the server's answers came first.)
      expect((await messageTexts(page)).sort()).toEqual(['written in Side while away', 'written in the main view while away']);
    } finally {
      await context.close();
    }
  });

  it('switches to the new main thread at once when the main thread is deleted while the page is connected', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_live_main', { title: 'Main deleted live' }));
    const oldMain = (await store.ensureMainThread('news_live_main')).id;
    const ada = await openAs(suite.browser, 'Ada');
    const bob = await openAs(suite.browser, 'Bob');
    try {
      await ada.page.goto(`${suite.server.url}/chat?id=news_live_main`);
      await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await say(ada.page, 'before the deletion');
      await expect.poll(() => shownMessage(ada.page, 'before the deletion')).toMatchObject({ state: 'sent' });
      let sockets = 0;
      ada.page.on('websocket', () => sockets++);

      await deleteThread(oldMain);
      const newMain = (await store.ensureMainThread('news_live_main')).id;
      // The old main thread's messages went with it; Bob, joining now, writes in the new one.
      await expect.poll(() => messageTexts(ada.page), { timeout: 15_000 }).toEqual([]);
      await bob.page.goto(`${suite.server.url}/chat?id=news_live_main`);
      await bob.page.locator('salon-member-list .count[data-count="2"]').waitFor({ state: 'attached' });
      await say(bob.page, 'from Bob in the new main thread');
      await expect.poll(() => messageTexts(ada.page), { timeout: 15_000 }).toEqual(['from Bob in the new main thread']);
      await say(ada.page, 'from Ada after the deletion');
      await expect.poll(() => shownMessage(ada.page, 'from Ada after the deletion')).toMatchObject({ state: 'sent' });
      expect(await textsOf(newMain)).toEqual(['from Bob in the new main thread', 'from Ada after the deletion']);
      // All of it without a new socket: the room told the page.
      expect(sockets).toBe(0);
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });

  it('files a private question asked before the welcome under the main thread it went to, so it goes with that thread', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_early_private', { title: 'Asked before the welcome' }));
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      // The welcome is held until the question is written; the private ask is answered by the test.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
        const server = ws.connectToServer();
        let welcomed = false;
        ws.onMessage((m) => {
          const frame = JSON.parse(String(m)) as { type: string; clientId?: string; threadId?: string };
          if (frame.type !== 'ask') return server.send(m);
          ws.send(privateAnswerFrame(frame, 'news_early_private', mainId));
        });
        let mainId = '';
        server.onMessage((m) => {
          const frame = JSON.parse(String(m)) as { type: string; threadId?: string };
          if (frame.type !== 'welcome' || welcomed) return ws.send(m);
          welcomed = true;
          mainId = frame.threadId ?? '';
          void held.then(() => ws.send(m));
        });
      });
      await page.goto(`${suite.server.url}/chat?id=news_early_private`);
      await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
      await page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
      await say(page, 'asked before the welcome');
      release();
      await expect.poll(() => messageTexts(page), { timeout: 15_000 }).toEqual(['asked before the welcome', 'A private answer.']);
      expect(await shownMessage(page, 'asked before the welcome')).toMatchObject({ state: 'sent' });

      // The main thread is deleted, with the private exchange the server remembered in it: the tab forgets both.
      await deleteThread((await store.ensureMainThread('news_early_private')).id);
      await page.reload();
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await expect.poll(() => page.evaluate(() => sessionStorage.getItem('salon.private.news_early_private'))).toBeNull();
      expect(await messageTexts(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
