import type { Page, Route } from 'playwright-core';
import { expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import type { Store } from '../../src/store/types.js';
import { browserSuite, describeBrowser, item, messageTexts, openAs, privateAnswerFrame, say } from './harness.js';
import { routeRewritingWelcomes, type RewritingRoute } from './welcome-rewrite.js';

// Rejoining a node that is behind the others (freshly started, or not caught up) gives a welcome
// whose seq is below the page's: its history agrees with what the page holds, so the page keeps
// its state (the private questions above all, which exist nowhere else). A store that was wiped
// gives messages the page never had at seqs it holds: that one is a reset. A node more than its
// history's length behind shares no message with the page: the store is asked whether the page's
// messages are still there (reset-probe.ts), without the page waiting for the answer.

/** Routes the page's room socket to the server (welcome-rewrite.ts); the page's private questions are answered by the test. */
async function routed(page: Page): Promise<RewritingRoute> {
  const socket: RewritingRoute = await routeRewritingWelcomes(page, (frame, toPage) => {
    if (frame.type !== 'ask') return false;
    toPage(privateAnswerFrame(frame, socket.messages.at(-1)?.roomId ?? '', socket.threadId));
    return true;
  });
  return socket;
}

async function privateMode(page: Page): Promise<void> {
  await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
  await page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
}

/** The room's history requests (the probe's `?before=`), held by the test until it answers them. */
async function holdProbes(page: Page): Promise<Route[]> {
  const held: Route[] = [];
  await page.route(/\/api\/v1\/rooms\/[^/]+\/messages\?/, (route) => void held.push(route));
  return held;
}

/** Answers a held probe as a wiped store would: only `messages`, none of the page's. Too late to be heard is fine. */
async function answerGone(route: Route, messages: Message[] = []): Promise<void> {
  await route.fulfill({ json: { messages, hasMore: false } }).catch(() => {});
}

/** The page held its private question and answer (in the tab's storage too). */
const keptPrivate = (page: Page) => page.evaluate(() => Object.keys(sessionStorage).some((k) => k.startsWith('salon.private.')));

/** Seeds `count` messages (`old 1`…) in `room`; returns them oldest first. */
async function seed(store: Store, room: string, count: number): Promise<Message[]> {
  await store.upsertItem(item(room, { title: 'Far behind' }));
  const thread = await store.ensureMainThread(room);
  const out: Message[] = [];
  for (let i = 1; i <= count; i++) {
    const { message } = await store.appendMessage({ roomId: room, threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `old ${i}` });
    out.push(message);
  }
  return out;
}

/** The page's list, its updates done after the next frames. */
const settled = (page: Page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

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

  it('asks the store about a node more than its history behind: the messages still there, the page keeps its state', async () => {
    // 45 messages: the page is welcomed with the newest 20; a node that stopped at 15 welcomes 1–15.
    const old = await seed(suite.server.app.salon.store, 'news_far', 45);
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_far`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 45');
      await privateMode(page);
      await say(page, 'my own question');
      const shown = [...old.slice(25).map((m) => m.text), 'my own question', 'A private answer.'];
      await expect.poll(() => messageTexts(page)).toEqual(shown);

      const probe = page.waitForResponse(/\/api\/v1\/rooms\/news_far\/messages\?before=46&/, { timeout: 15_000 }).catch(() => null);
      await socket.rejoin((w) => Object.assign(w, { seq: 15, history: old.slice(0, 15) }));
      const answered = await probe;
      await settled(page);
      expect(await messageTexts(page)).toEqual(shown);
      expect(await keptPrivate(page)).toBe(true);
      expect(answered?.status()).toBe(200);
      // The 20 between the node's 15 and the page's 26 are paged back to, not skipped.
      expect(await page.getByRole('button', { name: 'Load earlier messages' }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('takes the messages gone from the store for a reset, forgetting only the private entries held before it', async () => {
    const old = await seed(suite.server.app.salon.store, 'news_wiped', 45);
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_wiped`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 45');
      await privateMode(page);
      await say(page, 'before the wipe');
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('A private answer.');

      // A wiped store that has one new message: the page holds nothing at its seq, so it cannot say.
      const fresh = { ...old[0], id: 'msg_after_the_wipe', text: 'a new start' };
      const probes = await holdProbes(page);
      await socket.rejoin((w) => Object.assign(w, { seq: 1, history: [fresh] }));
      await expect.poll(() => probes.length).toBe(1);
      // Kept while the store is asked, and usable: a private question asked now is the new store's.
      expect(await messageTexts(page)).toContain('before the wipe');
      await say(page, 'after the wipe');
      await expect.poll(async () => (await messageTexts(page)).filter((t) => t === 'A private answer.').length).toBe(2);
      await answerGone(probes[0], [fresh]);
      await expect.poll(() => messageTexts(page)).toEqual(['a new start', 'after the wipe', 'A private answer.']);
    } finally {
      await context.close();
    }
  });

  it('never waits for a probe: one that hangs gives up, and one a newer welcome leaves asking is still heard', async () => {
    const old = await seed(suite.server.app.salon.store, 'news_hangs', 45);
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routed(page);
      await page.clock.install();
      await page.goto(`${suite.server.url}/chat?id=news_hangs`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 45');
      await privateMode(page);
      await say(page, 'my own question');
      const shown = [...old.slice(25).map((m) => m.text), 'my own question', 'A private answer.'];
      await expect.poll(() => messageTexts(page)).toEqual(shown);
      const probes = await holdProbes(page);
      const behind = (w: { seq: number; history: Message[] }) => Object.assign(w, { seq: 15, history: old.slice(0, 15) });

      // A probe with no answer: the page goes on meanwhile, and gives it up after 10 s.
      await socket.rejoin(behind);
      await expect.poll(() => probes.length).toBe(1);
      await expect.poll(() => page.locator('salon-connection-status [data-state]').count()).toBe(0);
      await page.clock.runFor(10_001);
      await answerGone(probes[0]);
      await settled(page);
      expect(await messageTexts(page)).toEqual(shown);

      // Another probe, then a newer welcome (one that is not behind): the probe goes on asking, and
      // the store's answer (the page's messages are there) keeps everything.
      await socket.rejoin(behind);
      await expect.poll(() => probes.length).toBe(2);
      await socket.rejoin(() => {});
      await probes[1].continue();
      await settled(page);
      expect(await messageTexts(page)).toEqual(shown);
      expect(await keptPrivate(page)).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('keeps one probe through a flapping connection: later welcomes wait for its answer, and a wiped store is still found', async () => {
    const old = await seed(suite.server.app.salon.store, 'news_flaps', 45);
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_flaps`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 45');
      await privateMode(page);
      await say(page, 'before the wipe');
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('A private answer.');

      const fresh = { ...old[0], id: 'msg_after_the_wipe', text: 'a new start' };
      const wiped = (w: { seq: number; history: Message[] }) => Object.assign(w, { seq: 1, history: [fresh] });
      const probes = await holdProbes(page);
      await socket.rejoin(wiped);
      await expect.poll(() => probes.length).toBe(1);
      // The socket drops and comes back twice before the store answers (faster than a probe's 10 s):
      // no probe is cancelled or started again, and the page keeps what it holds meanwhile.
      await socket.rejoin(wiped);
      await expect.poll(() => page.locator('salon-connection-status [data-state]').count()).toBe(0);
      await socket.rejoin(wiped);
      await expect.poll(() => page.locator('salon-connection-status [data-state]').count()).toBe(0);
      await settled(page);
      expect(probes.length).toBe(1);
      expect(await messageTexts(page)).toContain('before the wipe');
      // The first probe's answer is still heard: the store was wiped.
      await answerGone(probes[0], [fresh]);
      await expect.poll(() => messageTexts(page)).toEqual(['a new start']);
      expect(await keptPrivate(page)).toBe(false);
    } finally {
      await context.close();
    }
  });
});

describeBrowser('a welcome naming another main thread', () => {
  const suite = browserSuite({ server: true });

  it("forgets a deleted main thread's private entries once the store says it is gone, even when the room's list is cut", async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_main_gone', { title: 'Main thread deleted' }));
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      // The server's list is cut (more archived threads than it lists): a thread missing from it proves nothing.
      await page.route(/\/api\/v1\/rooms\/news_main_gone\/threads/, async (route) => {
        const response = await route.fetch();
        await route.fulfill({ response, json: { ...((await response.json()) as object), archivedTotal: 50 } });
      });
      const socket = await routed(page);
      await page.goto(`${suite.server.url}/chat?id=news_main_gone`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await privateMode(page);
      await say(page, 'asked in the main thread');
      await expect.poll(() => messageTexts(page)).toEqual(['asked in the main thread', 'A private answer.']);
      const oldMain = (await store.ensureMainThread('news_main_gone')).id;

      // The store does not answer about the old main thread: the entries are kept (and asked about again).
      let detail: 'fail' | 'pass' = 'fail';
      const asked: string[] = [];
      await page.route(/\/api\/v1\/threads\/[^/?]+$/, async (route) => {
        asked.push(route.request().url());
        if (detail === 'fail') await route.fulfill({ status: 503, json: { error: { code: 'ERR_UNAVAILABLE', message: 'try later' } } });
        else await route.continue();
      });
      const deleted = await fetch(`${suite.server.url}/api/v1/threads/${oldMain}`, { method: 'DELETE', headers: { authorization: 'Bearer test-admin-token' } });
      expect(deleted.ok).toBe(true);
      const newMain = (await store.ensureMainThread('news_main_gone')).id;
      expect(newMain).not.toBe(oldMain);
      await socket.rejoin(() => {});
      await expect.poll(() => asked.some((u) => u.endsWith(`/api/v1/threads/${oldMain}`))).toBe(true);
      await settled(page);
      expect(await keptPrivate(page)).toBe(true);

      // Asked again at the next welcome, the store says the thread is gone: so are its private entries.
      detail = 'pass';
      await socket.rejoin(() => {});
      await expect.poll(() => keptPrivate(page)).toBe(false);
      expect(await messageTexts(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
