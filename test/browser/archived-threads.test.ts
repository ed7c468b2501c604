import type { Page, Route } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  adminPost,
  browserSuite,
  describeBrowser,
  item,
  newThread as makeThread,
  messageTexts,
  openAs,
  privateAnswerFrame,
  say,
  shownMessage,
  threadButton,
} from './harness.js';

// A member with a thread open that someone else merged or archived meanwhile: the view moves to the
// survivor as soon as the page hears of the merge, keeping what is being typed; a message written
// before the page heard of it goes to the survivor and the view follows it there; one the server
// refuses because the thread is archived keeps its text, says why, and offers no Retry (it would be
// refused again).

/**
 * Holds the page's fetches of `roomId`'s thread list until the returned function is called: the
 * page is told of a merge and learns what it did from that list, so held, it has not heard of it.
 */
async function holdThreadList(page: Page, roomId: string): Promise<() => Promise<void>> {
  const held: Route[] = [];
  let holding = true;
  await page.route(
    (url) => url.pathname === `/api/v1/rooms/${roomId}/threads`,
    (route) => (holding ? held.push(route) : route.continue()),
  );
  return async () => {
    holding = false;
    for (const route of held.splice(0)) await route.continue();
  };
}

/** Turns the composer to asking the assistant privately ("Ask AI", "Only me"). */
async function privateMode(page: Page): Promise<void> {
  await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
  await page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
}

/** The notice bar above the room: its code and words, or null when none shows. */
async function notice(page: Page): Promise<{ code: string | null; text: string } | null> {
  return page.evaluate(() => {
    const find = (root: Document | ShadowRoot): Element | null => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.matches('[data-notice]')) return el;
        const inner = el.shadowRoot && find(el.shadowRoot);
        if (inner) return inner;
      }
      return null;
    };
    const bar = find(document);
    return bar ? { code: bar.getAttribute('data-notice'), text: bar.textContent?.replace(/\s+/g, ' ').trim() ?? '' } : null;
  });
}

describeBrowser('writing in a thread merged or archived meanwhile', () => {
  const suite = browserSuite({ server: true });

  const post = <T>(path: string, body: unknown) => adminPost<T>(suite.server, path, body);
  const newThread = (roomId: string, title: string) => makeThread(suite.server, roomId, title);
  const textsOf = async (threadId: string) => (await suite.server.app.salon.store.threadMessages(threadId, 100)).map((m) => m.text);

  /** Ada in `roomId` with the thread `title` open. */
  const inThread = async (roomId: string, title: string) => {
    const ada = await openAs(suite.browser, 'Ada');
    await ada.page.goto(`${suite.server.url}/chat?id=${roomId}`);
    await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
    await threadButton(ada.page, title).click();
    await expect.poll(() => threadButton(ada.page, title).getAttribute('aria-current')).toBe('true');
    return ada;
  };

  it('moves the view to the survivor as soon as it hears the open thread was merged, keeping the text being typed', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_merged_heard', { title: 'Merged and heard' }));
    const main = (await store.ensureMainThread('news_merged_heard')).id;
    const side = await newThread('news_merged_heard', 'Night trains');
    const { context, page } = await inThread('news_merged_heard', 'Night trains');
    try {
      await say(page, 'said before the merge');
      await expect.poll(() => shownMessage(page, 'said before the merge')).toMatchObject({ state: 'sent' });
      const box = page.locator('salon-composer textarea');
      await box.fill('half a thought');

      // Someone else merges the thread Ada has open while she is typing.
      await post('/api/v1/threads/merge', { survivorId: main, absorbedId: side });

      // The view is on the survivor, with the thread's messages, before she sends anything; her text waits in the composer.
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      expect(await notice(page)).toEqual({
        code: 'THREAD_FOLLOWED',
        text: expect.stringContaining('“Night trains” was merged into “Main”: this view follows it there.'),
      });
      expect(await box.inputValue()).toBe('half a thought');
      await expect.poll(() => messageTexts(page)).toEqual(['said before the merge']);

      // Sent from there, it goes to the survivor as written there.
      await box.press('Enter');
      await expect.poll(() => shownMessage(page, 'half a thought')).toMatchObject({ state: 'sent' });
      expect(await messageTexts(page)).toEqual(['said before the merge', 'half a thought']);
      expect(await textsOf(main)).toEqual(['said before the merge', 'half a thought']);
    } finally {
      await context.close();
    }
  });

  it('follows the member’s message to the survivor when it was written before the page heard of the merge, and says so', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_merged_away', { title: 'Merged away' }));
    const main = (await store.ensureMainThread('news_merged_away')).id;
    const side = await newThread('news_merged_away', 'Harbour works');
    const { context, page } = await inThread('news_merged_away', 'Harbour works');
    try {
      await say(page, 'said before the merge');
      await expect.poll(() => shownMessage(page, 'said before the merge')).toMatchObject({ state: 'sent' });

      // Someone else merges the thread Ada has open; she writes on in it before her page hears of it.
      const release = await holdThreadList(page, 'news_merged_away');
      await post('/api/v1/threads/merge', { survivorId: main, absorbedId: side });
      await say(page, 'written after the merge');

      // The server filed it under the survivor; the view went with it, and the page says why.
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      await release();
      await expect.poll(() => shownMessage(page, 'written after the merge')).toMatchObject({ state: 'sent' });
      await expect.poll(() => messageTexts(page)).toEqual(['said before the merge', 'written after the merge']);
      expect(await notice(page)).toEqual({
        code: 'THREAD_FOLLOWED',
        text: expect.stringContaining('“Harbour works” was merged into “Main”: your message went there, and so does this view.'),
      });
      expect(await textsOf(main)).toEqual(['said before the merge', 'written after the merge']);
    } finally {
      await context.close();
    }
  });

  it('opens the survivor when the page is loaded onto a thread merged while it was away (through merges of merges), with its messages, and sends there', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_merged_reload';
    await store.upsertItem(item(room, { title: 'Merged while away' }));
    await store.ensureMainThread(room);
    const absorbed = await newThread(room, 'Ferry timetable');
    const middle = await newThread(room, 'Ferry prices');
    const survivor = await newThread(room, 'Ferries');
    await store.appendMessage({ roomId: room, threadId: survivor, author: { id: 'u_bob', name: 'Bob', kind: 'user' }, text: 'said in the ferries thread' });
    const { context, page } = await inThread(room, 'Ferry timetable');
    try {
      await say(page, 'said in the timetable thread');
      await expect.poll(() => shownMessage(page, 'said in the timetable thread')).toMatchObject({ state: 'sent' });
      // The tab keeps the open thread; Ada leaves the room, and meanwhile the thread is merged, and its survivor too.
      await expect.poll(() => page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? '{}').threadId, `salon.room.${room}`)).toBe(absorbed);
      await page.goto(`${suite.server.url}/`);
      await post('/api/v1/threads/merge', { survivorId: middle, absorbedId: absorbed });
      await post('/api/v1/threads/merge', { survivorId: survivor, absorbedId: middle });

      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await expect.poll(() => threadButton(page, 'Ferries').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      await expect.poll(() => messageTexts(page)).toEqual(['said in the ferries thread', 'said in the timetable thread']);
      expect(await notice(page)).toEqual({
        code: 'THREAD_FOLLOWED',
        text: expect.stringContaining('“Ferry timetable” was merged into “Ferries”: this view follows it there.'),
      });

      await say(page, 'said after coming back');
      await expect.poll(() => shownMessage(page, 'said after coming back')).toMatchObject({ state: 'sent' });
      expect(await messageTexts(page)).toEqual(['said in the ferries thread', 'said in the timetable thread', 'said after coming back']);
      expect(await textsOf(survivor)).toEqual(['said in the ferries thread', 'said in the timetable thread', 'said after coming back']);
    } finally {
      await context.close();
    }
  });

  it('files a private question and its answer under the survivor when their thread is merged, live and after a reload', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_private_merged';
    await store.upsertItem(item(room, { title: 'Asked, then merged' }));
    const main = (await store.ensureMainThread(room)).id;
    const side = await newThread(room, 'Tide tables');
    const { context, page } = await inThread(room, 'Tide tables');
    try {
      await say(page, 'before the question');
      await expect.poll(() => shownMessage(page, 'before the question')).toMatchObject({ state: 'sent' });
      await privateMode(page);
      await say(page, 'When is high tide at the harbour?');
      const answer = page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
      await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
      const shown = await messageTexts(page);
      expect(shown).toHaveLength(3);
      expect(shown.slice(0, 2)).toEqual(['before the question', 'When is high tide at the harbour?']);

      // Someone else merges the thread: the view follows, and the private exchange with it, in its place.
      await post('/api/v1/threads/merge', { survivorId: main, absorbedId: side });
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      await expect.poll(() => messageTexts(page)).toEqual(shown);

      // The tab's copy files them there too.
      await page.reload();
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current')).toBe('true');
      await expect.poll(() => messageTexts(page)).toEqual(shown);
    } finally {
      await context.close();
    }
  });

  it('files a private answer that names a thread merged while it was written under the survivor, with its question', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_private_late';
    await store.upsertItem(item(room, { title: 'Answered after the merge' }));
    const main = (await store.ensureMainThread(room)).id;
    const side = await newThread(room, 'Lighthouses');
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      // The test answers the private ask itself, once the merge is done: the answer names the thread it was asked in.
      const asks: { clientId?: string; threadId?: string }[] = [];
      let answer: (ask: { clientId?: string; threadId?: string }) => void = () => {};
      await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => {
          const frame = JSON.parse(String(m)) as { type: string; clientId?: string; threadId?: string };
          if (frame.type === 'ask') asks.push(frame);
          else server.send(m);
        });
        server.onMessage((m) => ws.send(m));
        answer = (ask) => ws.send(privateAnswerFrame(ask, room, main));
      });
      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await threadButton(page, 'Lighthouses').click();
      await expect.poll(() => threadButton(page, 'Lighthouses').getAttribute('aria-current')).toBe('true');
      await privateMode(page);
      await say(page, 'Which lighthouse is the oldest?');
      await expect.poll(() => asks.map((a) => a.threadId)).toEqual([side]);

      await post('/api/v1/threads/merge', { survivorId: main, absorbedId: side });
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      answer(asks[0]);
      await expect.poll(() => messageTexts(page)).toEqual(['Which lighthouse is the oldest?', 'A private answer.']);
    } finally {
      await context.close();
    }
  });

  it('keeps a message an archived thread refused, says why under it, and offers no Retry', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_archived_open', { title: 'Archived while open' }));
    await store.ensureMainThread('news_archived_open');
    const shut = await newThread('news_archived_open', 'Closed topic');
    const { context, page } = await inThread('news_archived_open', 'Closed topic');
    try {
      // No thread operation archives without merging; a write to the store can (takesNoMessages).
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: shut, status: 'archived' }] });
      await say(page, 'into the archived thread');
      await expect
        .poll(() => shownMessage(page, 'into the archived thread'), { timeout: 15_000 })
        .toEqual({
          state: 'failed',
          status: 'Not sent: the thread it was written in is archived and takes no messages. Copy the text to say it in another thread. Discard',
          buttons: ['Discard'],
        });
      // It stays in the thread it was written in, which is still there to show it; no banner repeats the reason.
      expect(await threadButton(page, 'Closed topic').getAttribute('aria-current')).toBe('true');
      expect(await notice(page)).toBeNull();
      expect(await textsOf(shut)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
