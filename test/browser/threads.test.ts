/**
 * Threads in the browser: the list beside the room, starting a thread from it, switching threads
 * (each keeps its place and history, messages go to the open one), the split dialog, merge
 * suggestions, the warning banner, and a fused thread with its introduction.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { ADMIN } from '../helpers.js';
import { ARTIFACTS, browserSuite, describeBrowser, item, messageTexts, openAs, say, shadowText, threadButton } from './harness.js';
import { createThread } from '../store/new-thread.js';

const DESKTOP = { width: 1200, height: 800 };

interface ApiThread {
  id: string;
  title: string;
  main: boolean;
  status: string;
  parentId: string | null;
  mergedInto: string | null;
  splitLockedUntil: string | null;
  isMerged: boolean;
}

describeBrowser('threads in the browser', () => {
  const suite = browserSuite({ server: true });

  const api = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const res = await fetch(`${suite.server.url}${path}`, init);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return (await res.json()) as T;
  };
  const threadsOf = async (roomId: string) => (await api<{ threads: ApiThread[] }>(`/api/v1/rooms/${roomId}/threads`)).threads;
  const textsIn = async (threadId: string) =>
    (await api<{ messages: Message[] }>(`/api/v1/threads/${threadId}/messages?limit=100`)).messages.map((m) => m.text);
  const admin = <T>(path: string, body: unknown) =>
    api<T>(path, { method: 'POST', headers: { ...ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  /** The thread list's button for a thread of that title. */
  const scroller = (page: Page) => page.locator('salon-message-list .scroller');

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    for (const id of ['news_th1', 'news_th2', 'news_th3', 'news_th4', 'news_th5', 'news_th6', 'news_th7'])
      await store.upsertItem(item(id, { title: `Story ${id}` }));
    const main = await store.ensureMainThread('news_th1');
    for (let i = 1; i <= 60; i++)
      await store.appendMessage({ roomId: 'news_th1', threadId: main.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `main ${i}` });
  });

  it('lists the main thread and one started from the list; switching keeps each thread’s place and history, and messages go to the open thread', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th1`);
      const main = threadButton(page, 'Main');
      await expect.poll(() => main.count()).toBe(1);
      expect(await main.locator('[data-badge="main"]').count()).toBe(1);
      expect(await main.getAttribute('aria-current')).toBe('true');
      await expect.poll(() => main.locator('.count').textContent()).toBe('60 messages');

      // Some history paged back in the main thread, and a place in the middle of it.
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('main 60');
      await page.getByRole('button', { name: 'Load earlier messages' }).click();
      await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(20);
      const mainHistory = await messageTexts(page);
      // After the frames in which the list keeps the reader's place while older messages come in.
      await scroller(page).evaluate(async (el) => {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        el.scrollTop = 200;
      });
      const place = await scroller(page).evaluate((el) => el.scrollTop);
      expect(place).toBe(200);

      // A new thread, from the keyboard: it is listed and opened.
      await page.getByRole('button', { name: 'New thread' }).click();
      const title = page.getByLabel('Title of the new thread');
      await expect.poll(() => title.evaluate((el) => el.matches(':focus'))).toBe(true);
      await title.fill('Cable <b>repairs</b>');
      await title.press('Enter');
      const cables = threadButton(page, 'Cable <b>repairs</b>');
      await expect.poll(() => cables.getAttribute('aria-current')).toBe('true');
      expect(await cables.locator('b').count()).toBe(0);
      expect(await main.getAttribute('aria-current')).toBe('false');
      await expect.poll(() => messageTexts(page)).toEqual([]);

      await say(page, 'Written in the cables thread');
      await expect.poll(() => page.locator('salon-message-item[state="sent"]', { hasText: 'Written in the cables thread' }).count()).toBe(1);
      const created = (await threadsOf('news_th1')).find((t) => t.title === 'Cable <b>repairs</b>')!;
      const mainId = (await threadsOf('news_th1')).find((t) => t.main)!.id;
      expect(await textsIn(created.id)).toEqual(['Written in the cables thread']);
      expect(await textsIn(mainId)).not.toContain('Written in the cables thread');
      await expect.poll(() => cables.locator('.count').textContent()).toBe('1 message');

      // Back to main: the same history, at the same place, and the new message is not there.
      await main.click();
      await expect.poll(() => messageTexts(page)).toEqual(mainHistory);
      await expect.poll(() => scroller(page).evaluate((el) => el.scrollTop)).toBe(place);
      await say(page, 'Back in main');
      await expect.poll(() => page.locator('salon-message-item[state="sent"]', { hasText: 'Back in main' }).count()).toBe(1);
      expect(await textsIn(mainId)).toContain('Back in main');
      expect(await textsIn(created.id)).toEqual(['Written in the cables thread']);

      await cables.click();
      await expect.poll(() => messageTexts(page)).toEqual(['Written in the cables thread']);
    } finally {
      await context.close();
    }
  });

  it('splits two picked messages into a locked thread with the split dialog', async () => {
    const { context, page } = await openAs(suite.browser, 'Bea', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th2`);
      for (const text of ['alpha stays', 'beta moves', 'gamma moves']) {
        await say(page, text);
        await expect.poll(() => page.locator('salon-message-item[state="sent"]', { hasText: text }).count()).toBe(1);
      }
      const split = page.getByRole('button', { name: 'Split this thread…' });
      await split.click();
      const dialog = page.locator('salon-split-dialog dialog');
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(true);
      // Escape closes it and focus goes back to the button that opened it.
      await expect.poll(() => dialog.locator('li.message').count()).toBe(3);
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(false);
      await expect.poll(() => split.evaluate((el) => el.matches(':focus'))).toBe(true);

      await page.keyboard.press('Enter');
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(true);
      const partTitle = dialog.getByLabel('Title of part 1');
      await expect.poll(() => partTitle.evaluate((el) => el.matches(':focus'))).toBe(true);
      // The browser fires `close` a task after a close request, and runs input first: a click
      // that opens the dialog again in between must not be undone by that late event.
      const reopened = await dialog.evaluate(
        async (d, button) => {
          const closeFired = new Promise((resolve) => d.addEventListener('close', resolve, { once: true }));
          (d as HTMLDialogElement & { requestClose(): void }).requestClose();
          for (let i = 0; i < 20; i++) await null;
          (button as HTMLElement).click();
          await Promise.race([closeFired, new Promise((resolve) => setTimeout(resolve, 1000))]);
          await new Promise((resolve) => setTimeout(resolve, 50));
          return (d as HTMLDialogElement).open;
        },
        await split.elementHandle(),
      );
      expect(reopened).toBe(true);
      await expect.poll(() => dialog.locator('li.message').count()).toBe(3);
      // Nothing picked yet: the dialog says so instead of sending.
      await partTitle.fill('Beta and gamma');
      await dialog.getByRole('button', { name: 'Split', exact: true }).click();
      await expect.poll(() => dialog.locator('[role="alert"]').textContent()).toContain('no messages');

      for (const text of ['beta moves', 'gamma moves']) {
        await dialog.locator('li.message', { hasText: text }).getByRole('radio', { name: 'Part 1' }).check();
      }
      await dialog.getByRole('radio', { name: /only an explicit \/unlock/ }).check();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'threads-split-dialog.png') });
      await dialog.getByRole('button', { name: 'Split', exact: true }).click();
      await expect.poll(() => dialog.locator('[data-result="ok"]').textContent()).toContain('Beta and gamma');

      const threads = await threadsOf('news_th2');
      const child = threads.find((t) => t.title === 'Beta and gamma')!;
      const mainId = threads.find((t) => t.main)!.id;
      expect(child.parentId).toBe(mainId);
      expect(child.splitLockedUntil).toBe('force');
      expect(await textsIn(child.id)).toEqual(['beta moves', 'gamma moves']);
      expect(await textsIn(mainId)).toEqual(['alpha stays']);

      await dialog.getByRole('button', { name: 'Close' }).click();
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(false);
      const childButton = threadButton(page, 'Beta and gamma');
      await expect.poll(() => childButton.locator('[data-badge="locked"]').textContent()).toBe('locked · force');
      // The moved messages left the main thread's view and show in the new thread.
      await expect.poll(() => messageTexts(page)).toEqual(['alpha stays']);
      await childButton.click();
      await expect.poll(() => messageTexts(page)).toEqual(['beta moves', 'gamma moves']);
      expect(await page.locator('salon-thread-header [data-badge="locked"]').count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'threads.png') });
    } finally {
      await context.close();
    }
  });

  it('split dialog opened again while the first load is still on its way loads afresh, and the old load’s end changes nothing', async () => {
    const { context, page } = await openAs(suite.browser, 'Cy', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th6`);
      for (const text of ['one', 'two']) {
        await say(page, text);
        await expect.poll(() => page.locator('salon-message-item[state="sent"]', { hasText: text }).count()).toBe(1);
      }
      // The first open's load is held, and fails only once the dialog is open again.
      let releaseFirst: () => void = () => {};
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      let loads = 0;
      await page.route('**/api/v1/threads/*/messages*', async (route) => {
        loads++;
        if (loads === 1) {
          await firstHeld;
          await route.abort();
        } else await route.continue();
      });
      const split = page.getByRole('button', { name: 'Split this thread…' });
      const dialog = page.locator('salon-split-dialog dialog');
      await split.click();
      await expect.poll(() => loads).toBe(1);
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(false);
      await split.click();
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(true);
      await expect.poll(() => dialog.locator('li.message').count()).toBe(2);
      releaseFirst();
      await expect.poll(() => loads).toBe(2);
      // Give the aborted load time to land: it must leave the open dialog alone.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
      expect(await dialog.locator('li.message').count()).toBe(2);
      expect(await dialog.locator('[role="alert"]').textContent()).toBe('');
    } finally {
      await context.close();
    }
  });

  it('shows the server’s merge suggestion as a suggestion, and merges only once confirmed', async () => {
    const { store } = suite.server.app.salon;
    const main = await store.ensureMainThread('news_th3');
    const { thread: dup } = await admin<{ thread: ApiThread }>('/api/v1/rooms/news_th3/threads', { title: 'Same story again' });
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], setBridges: [{ threadId: main.id, otherId: dup.id, weight: 0.9 }] });
    const { context, page } = await openAs(suite.browser, 'Cy', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th3`);
      const suggestion = page.locator('salon-thread-header [data-suggestion]');
      await expect.poll(() => suggestion.textContent()).toContain('Suggestion: “Same story again” and “Main” discuss the same thing (90 % alike)');
      expect((await threadsOf('news_th3')).find((t) => t.id === dup.id)!.status).toBe('active');

      await suggestion.getByRole('button', { name: 'Merge “Same story again” into “Main”…' }).click();
      const confirm = suggestion.getByRole('button', { name: 'Merge', exact: true });
      await expect.poll(() => confirm.evaluate((el) => el.matches(':focus'))).toBe(true);
      await confirm.click();

      await expect.poll(async () => (await threadsOf('news_th3')).find((t) => t.id === dup.id)!.mergedInto).toBe(main.id);
      await expect.poll(() => page.locator('salon-thread-header [role="status"]').textContent()).toContain('Merged');
      await expect.poll(() => suggestion.count()).toBe(0);
      await page.locator('salon-thread-list summary').click();
      await expect.poll(() => threadButton(page, 'Same story again').locator('[data-badge="merged"]').textContent()).toBe('merged into Main');
    } finally {
      await context.close();
    }
  });

  it('a merge answered after the member opened another thread leaves that thread’s header alone', async () => {
    const { store } = suite.server.app.salon;
    const main = await store.ensureMainThread('news_th7');
    const { thread: dup } = await admin<{ thread: ApiThread }>('/api/v1/rooms/news_th7/threads', { title: 'Twin story' });
    await admin('/api/v1/rooms/news_th7/threads', { title: 'Elsewhere' });
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], setBridges: [{ threadId: main.id, otherId: dup.id, weight: 0.9 }] });
    const { context, page } = await openAs(suite.browser, 'Dee', DESKTOP);
    try {
      // The merge command is held until the test lets it go.
      let releaseMerge: () => void = () => {};
      await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => {
          if (String(m).includes('/merge')) releaseMerge = () => server.send(m);
          else server.send(m);
        });
        server.onMessage((m) => ws.send(m));
      });
      await page.goto(`${suite.server.url}/chat?id=news_th7`);
      const suggestion = page.locator('salon-thread-header [data-suggestion]');
      await expect.poll(() => suggestion.count()).toBe(1);
      await suggestion.getByRole('button', { name: 'Merge “Twin story” into “Main”…' }).click();
      await suggestion.getByRole('button', { name: 'Merge', exact: true }).click();
      await threadButton(page, 'Elsewhere').click();
      await expect.poll(() => page.locator('salon-thread-header h2, salon-thread-header h1').first().textContent()).toContain('Elsewhere');
      releaseMerge();
      await expect.poll(async () => (await threadsOf('news_th7')).find((t) => t.id === dup.id)!.mergedInto).toBe(main.id);
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
      expect(await page.locator('salon-thread-header [role="status"]').textContent()).toBe('');
    } finally {
      await context.close();
    }
  });

  it('a split answered after its dialog was closed and opened again leaves the new dialog alone', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_th8', { title: 'Story news_th8' }));
    const main = await store.ensureMainThread('news_th8');
    for (const text of ['stays here', 'moves away'])
      await store.appendMessage({ roomId: 'news_th8', threadId: main.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text });
    const { context, page } = await openAs(suite.browser, 'Eve', DESKTOP);
    try {
      let releaseSplit: () => void = () => {};
      await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
        const server = ws.connectToServer();
        ws.onMessage((m) => {
          if (String(m).includes('/split')) releaseSplit = () => server.send(m);
          else server.send(m);
        });
        server.onMessage((m) => ws.send(m));
      });
      await page.goto(`${suite.server.url}/chat?id=news_th8`);
      await expect.poll(() => page.locator('salon-message-item', { hasText: 'moves away' }).count()).toBe(1);
      const split = page.getByRole('button', { name: 'Split this thread…' });
      const dialog = page.locator('salon-split-dialog dialog');
      await split.click();
      await expect.poll(() => dialog.locator('li.message').count()).toBe(2);
      await dialog.getByLabel('Title of part 1').fill('Away');
      await dialog.locator('li.message', { hasText: 'moves away' }).getByRole('radio', { name: 'Part 1' }).check();
      await dialog.getByRole('button', { name: 'Split', exact: true }).click();
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.evaluate((d) => (d as HTMLDialogElement).open)).toBe(false);
      await split.click();
      await expect.poll(() => dialog.locator('li.message').count()).toBe(2);
      releaseSplit();
      await expect.poll(async () => (await threadsOf('news_th8')).some((t) => t.title === 'Away')).toBe(true);
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
      expect(await dialog.locator('[data-result="ok"]').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows a warning frame as a banner', async () => {
    const { context, page } = await openAs(suite.browser, 'Dee', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th4`);
      await expect.poll(() => threadButton(page, 'Main').count()).toBe(1);
      await expect.poll(() => page.locator('salon-member-list .count').getAttribute('data-count')).toBe('1');
      suite.server.app.salon.rooms.broadcast('news_th4', {
        type: 'warning',
        code: 'FUSION_FALLBACK',
        message: 'Smart fusion failed — fell back to simple union merge. Reason: <i>test</i>',
      });
      const banner = page.locator('salon-connection-status [data-notice="FUSION_FALLBACK"]');
      await expect.poll(() => banner.textContent()).toContain('Smart fusion failed — fell back to simple union merge. Reason: <i>test</i>');
      expect(await banner.locator('i').count()).toBe(0);
      await banner.getByRole('button', { name: 'Dismiss this notice' }).click();
      await expect.poll(() => banner.count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows a fused thread with its badge and its introduction', async () => {
    const { context, page } = await openAs(suite.browser, 'Eli', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th5`);
      await expect.poll(() => threadButton(page, 'Main').count()).toBe(1);
      const { thread: a } = await admin<{ thread: ApiThread }>('/api/v1/rooms/news_th5/threads', { title: 'Prius praise' });
      const { thread: b } = await admin<{ thread: ApiThread }>('/api/v1/rooms/news_th5/threads', { title: 'Prius doubts' });
      const fused = await admin<{ thread: ApiThread }>('/api/v1/threads/fuse', { sourceIds: [a.id, b.id] });
      expect(fused.thread.isMerged).toBe(true);

      // The introduction arrives live in a thread the page did not know: the list fetches it.
      const button = threadButton(page, 'Prius praise + Prius doubts');
      await expect.poll(() => button.locator('[data-badge="fused"]').count()).toBe(1);
      await expect.poll(() => button.locator('.count').textContent()).toBe('1 message');
      expect(await messageTexts(page)).toEqual([]);
      await button.click();
      const intro = page.locator('salon-message-item[intro]');
      await expect.poll(() => intro.count()).toBe(1);
      expect(await shadowText(intro.locator('salon-markdown'))).toContain('This thread fuses the discussions "Prius praise" and "Prius doubts"');
      expect(await intro.locator('[data-intro]').count()).toBe(1);
      expect(await page.locator('salon-thread-header [data-badge="fused"]').count()).toBe(1);
      expect(await page.locator('salon-thread-header [data-fused-note]').count()).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('shows everyone in the room that a thread’s memory is off once a member switches it, and that it is on again', async () => {
    await suite.server.app.salon.store.upsertItem(item('news_th6', { title: 'Story news_th6' }));
    const ada = await openAs(suite.browser, 'Ada', DESKTOP);
    const bob = await openAs(suite.browser, 'Bob', DESKTOP);
    try {
      for (const p of [ada.page, bob.page]) {
        await p.goto(`${suite.server.url}/chat?id=news_th6`);
        await expect.poll(() => threadButton(p, 'Main').count()).toBe(1);
      }
      await bob.page.locator('salon-member-list .count[data-count="2"]').waitFor();
      expect(await bob.page.locator('[data-badge="memory-off"]').count()).toBe(0);
      await say(ada.page, '/memory off');
      for (const p of [bob.page, ada.page]) {
        await expect.poll(() => threadButton(p, 'Main').locator('[data-badge="memory-off"]').textContent()).toBe('memory off');
        expect(await p.locator('salon-thread-header [data-badge="memory-off"]').count()).toBe(1);
        expect(await p.locator('salon-thread-header [data-memory-off]').textContent()).toContain('Memory is off in this thread');
      }
      await say(ada.page, '/memory on');
      for (const p of [bob.page, ada.page]) {
        await expect.poll(() => p.locator('[data-badge="memory-off"]').count()).toBe(0);
        expect(await p.locator('salon-thread-header [data-memory-off]').count()).toBe(0);
      }
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });

  it('lists a room’s newest archived threads only, and says how many older ones it leaves out', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_th4';
    await store.ensureMainThread(room);
    // 55 archived threads (every merge leaves one): the list holds the newest 50.
    for (let i = 1; i <= 55; i++) {
      const id = `thr_old_${String(i).padStart(2, '0')}`;
      await createThread(store, { id, roomId: room, title: `Old ${i}` }, 'admin');
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id, status: 'archived' }] });
    }
    const { context, page } = await openAs(suite.browser, 'Gus', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${room}`);
      const summary = page.locator('salon-thread-list details summary');
      await expect.poll(() => summary.textContent()).toBe('Archived (55)');
      await summary.click();
      const archived = page.locator('salon-thread-list ul[aria-label="Archived threads"] button.thread');
      await expect.poll(() => archived.count()).toBe(50);
      const titled = (title: string) => archived.filter({ has: page.locator('.title', { hasText: new RegExp(`^${title}$`) }) });
      expect(await titled('Old 55').count()).toBe(1);
      expect(await titled('Old 6').count()).toBe(1);
      expect(await titled('Old 5').count()).toBe(0);
      expect((await page.locator('salon-thread-list .older').textContent())?.trim()).toBe('… and 5 older archived threads, not listed');
    } finally {
      await context.close();
    }
  });

  it('is readable at phone width (375 px) with several threads: nothing overflows sideways', async () => {
    const { context, page } = await openAs(suite.browser, 'Fay', { width: 375, height: 740 });
    try {
      await page.goto(`${suite.server.url}/chat?id=news_th2`);
      await expect.poll(() => page.locator('salon-thread-list button.thread').count()).toBeGreaterThan(1);
      await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'threads-375.png') });

      // A thread started there is said by its title alone, and its button, open, is scrolled into sight.
      await page.getByRole('button', { name: /^Details/ }).click();
      await page.getByRole('button', { name: 'New thread' }).click();
      await page.getByLabel('Title of the new thread').fill('Started on a phone, with a rather long title');
      await page.getByLabel('Title of the new thread').press('Enter');
      const status = page.locator('salon-thread-list p.status');
      await expect.poll(() => status.textContent()).toBe('Started thread “Started on a phone, with a rather long title”.');
      const open = page.locator(`salon-thread-list button.thread[aria-current='true']`);
      await expect.poll(() => open.textContent()).toContain('Started on a phone');
      await expect
        .poll(async () => {
          const box = (await open.boundingBox())!;
          return box.x >= 0 && box.x + box.width <= 375;
        })
        .toBe(true);
    } finally {
      await context.close();
    }
  });
});
