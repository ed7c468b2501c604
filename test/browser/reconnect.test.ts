import type { Browser, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { userIdOfToken } from '../../src/protocol/identity-token.js';
import { browserSuite, describeBrowser, item, messageTexts, openAs, say, startServer, type Person as BasePerson, type TestServer } from './harness.js';

/** Routes `page`'s room sockets to the server until `block()`: from then each new one is closed at once, until `unblock()`. */
async function blockableSockets(page: Page): Promise<{ block(): void; unblock(): void }> {
  let blocked = false;
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    if (blocked) ws.close();
    else ws.connectToServer();
  });
  return { block: () => (blocked = true), unblock: () => (blocked = false) };
}

/** A person whose page records every `hello` it sends. */
interface Person extends BasePerson {
  hellos: Record<string, unknown>[];
}

async function person(browser: Browser, name: string): Promise<Person> {
  const { context, page } = await openAs(browser, name);
  const hellos: Record<string, unknown>[] = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const frame = JSON.parse(String(f.payload)) as Record<string, unknown>;
      if (frame.type === 'hello') hellos.push(frame);
    }),
  );
  return { context, page, hellos };
}

/** Ada, then Bob, in the room of a new item `id`, each page showing both once they are in (the browser's close ends their contexts if joining fails). */
async function adaAndBobIn(browser: Browser, server: TestServer, id: string, title: string): Promise<{ ada: Person; bob: Person }> {
  await server.app.salon.store.upsertItem(item(id, { title }));
  const url = `${server.url}/chat?id=${id}`;
  const ada = await person(browser, 'Ada');
  const bob = await person(browser, 'Bob');
  await ada.page.goto(url);
  await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor();
  await bob.page.goto(url);
  await bob.page.locator('salon-member-list .count[data-count="2"]').waitFor();
  return { ada, bob };
}

describeBrowser('reconnecting after the server restarts', () => {
  // The tests start, stop and restart the server themselves, over the suite's directory.
  let server: TestServer | undefined;
  const suite = browserSuite({ teardown: () => server?.close() });

  it('loses nothing and duplicates nothing, and sends what was written while the server was down', async () => {
    server = await startServer(suite.dataDir);
    const port = server.port;
    const { ada, bob } = await adaAndBobIn(suite.browser, server, 'news_rc', 'Restart drill');
    try {
      const before = ['one from Ada', 'two from Bob', 'three from Ada'];
      await say(ada.page, before[0]);
      await expect.poll(() => messageTexts(bob.page)).toEqual(before.slice(0, 1));
      await say(bob.page, before[1]);
      await expect.poll(() => messageTexts(ada.page)).toEqual(before.slice(0, 2));
      await say(ada.page, before[2]);
      for (const p of [ada.page, bob.page]) await expect.poll(() => messageTexts(p)).toEqual(before);
      expect(ada.hellos).toHaveLength(1);
      expect(ada.hellos[0].lastSeq).toBeUndefined();

      await server.close();
      server = undefined;
      for (const p of [ada.page, bob.page]) {
        await p.locator('salon-connection-status [data-state=reconnecting]').waitFor({ timeout: 10_000 });
      }
      // Written while the server is away: kept, shown as sending, sent on reconnect.
      await say(ada.page, 'four, written offline');
      await ada.page.locator('salon-message-item[state=sending]').waitFor();
      expect(await ada.page.locator('salon-composer .hint').textContent()).toContain('sent once you reconnect');

      server = await startServer(suite.dataDir, { port });
      const after = [...before, 'four, written offline'];
      for (const p of [ada.page, bob.page]) {
        await expect.poll(() => messageTexts(p), { timeout: 20_000 }).toEqual(after);
        await p.locator('salon-member-list .count[data-count="2"]').waitFor({ timeout: 10_000 });
        expect(await p.locator('salon-connection-status [data-state]').count()).toBe(0);
      }
      expect(await ada.page.locator('salon-message-item[state=sending]').count()).toBe(0);
      // The rejoin asked only for what was missed.
      const rejoin = ada.hellos.at(-1)!;
      expect(rejoin.lastSeq).toBeGreaterThanOrEqual(3);
      // Same person after the restart: the saved token (renewed by the welcome, for the same id), and her messages are still hers.
      const saved = await ada.page.evaluate(() => localStorage.getItem('salon.token'));
      expect(userIdOfToken(String(rejoin.token))).toBe(userIdOfToken(saved!));
      expect(await ada.page.locator('salon-message-item[mine]').count()).toBe(3);

      await say(bob.page, 'five, after the restart');
      for (const p of [ada.page, bob.page]) await expect.poll(() => messageTexts(p)).toEqual([...after, 'five, after the restart']);
      const stored = await server.app.salon.store.recentMessages('news_rc', 50);
      expect(stored.map((m) => m.text)).toEqual([...after, 'five, after the restart']);

      // A reload takes the server's history as the truth and still shows everything once.
      await bob.page.reload();
      await expect.poll(() => messageTexts(bob.page)).toEqual([...after, 'five, after the restart']);
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });

  it('says "offline" as soon as the browser goes offline, keeps what is written meanwhile and sends it once back online', async () => {
    server ??= await startServer(suite.dataDir);
    const { ada, bob } = await adaAndBobIn(suite.browser, server, 'news_net', 'Network drill');
    try {
      await say(ada.page, 'before the drop');
      await expect.poll(() => messageTexts(bob.page)).toEqual(['before the drop']);

      // The socket is not closed by going offline: it hangs. The page must not wait for its
      // silence watchdog (a minute) to say so.
      await ada.context.setOffline(true);
      await ada.page.locator('salon-connection-status [data-state=offline]').waitFor({ timeout: 20_000 }); // the watchdog's minute would be 60 s
      // Not connected, the page does not know who is here: no "(0)", no "0 people in the room" read out.
      const members = ada.page.locator('salon-member-list');
      expect(await members.locator('[data-unknown]').textContent()).toBe('(not connected)');
      expect(await members.locator('.count').count()).toBe(0);
      expect(await members.innerText()).not.toMatch(/\b0\b/);
      await say(ada.page, 'written offline');
      await ada.page.locator('salon-message-item[state=sending]').waitFor();
      expect(await ada.page.locator('salon-composer .hint').textContent()).toContain('sent once you reconnect');

      await ada.context.setOffline(false);
      for (const p of [ada.page, bob.page]) {
        await expect.poll(() => messageTexts(p), { timeout: 20_000 }).toEqual(['before the drop', 'written offline']);
      }
      await expect.poll(() => ada.page.locator('salon-message-item[state=sending]').count()).toBe(0);
      await members.locator('.count[data-count="2"]').waitFor();
      expect(await ada.page.locator('salon-connection-status [data-state]').count()).toBe(0);
      const stored = await server.app.salon.store.recentMessages('news_net', 10);
      expect(stored.map((m) => m.text)).toEqual(['before the drop', 'written offline']);
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });

  it('keeps the whole composer on a 360 × 740 phone while offline or reconnecting, the page not scrolling', async () => {
    server ??= await startServer(suite.dataDir);
    const room = 'news_phone_drop';
    await server.app.salon.store.upsertItem(item(room, { title: 'Port Avelin measles outbreak reaches 140 cases; school vaccination clinics extended' }));
    await server.app.salon.store.ensureMainThread(room);
    await server.app.salon.threads.create(room, 'Vaccination clinics and the queues outside them', 'u_someone');
    const nia = await openAs(suite.browser, 'Nia', { width: 360, height: 740 });
    const sockets = await blockableSockets(nia.page);
    const fits = async (state: string) => {
      await nia.page.locator(`salon-connection-status [data-state=${state}]`).waitFor({ timeout: 20_000 });
      for (const target of ['salon-composer textarea', 'salon-composer button[type=submit]', 'salon-composer input[name=ask]']) {
        const box = (await nia.page.locator(target).boundingBox())!;
        expect(box.y + box.height, `${state}: ${target}`).toBeLessThanOrEqual(740);
      }
      expect(await nia.page.evaluate(() => document.documentElement.scrollHeight), state).toBeLessThanOrEqual(740);
    };
    try {
      await nia.page.goto(`${server.url}/chat?id=${room}`);
      await nia.page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      await nia.context.setOffline(true);
      await say(nia.page, 'written offline');
      await fits('offline');
      sockets.block();
      await nia.context.setOffline(false);
      await fits('reconnecting');
    } finally {
      await nia.context.close();
    }
  });

  it('pages back from the newest messages after a reconnect that missed too many, the gap before them included', async () => {
    server ??= await startServer(suite.dataDir);
    const room = 'news_gap';
    const { store } = server.app.salon;
    await store.upsertItem(item(room, { title: 'Gap drill' }));
    const main = await store.ensureMainThread(room);
    const zed = { id: 'u_zed', name: 'Zed', kind: 'user' as const };
    const post = (from: number, to: number) =>
      store.appendMessages(Array.from({ length: to - from + 1 }, (_, i) => ({ roomId: room, threadId: main.id, author: zed, text: `filler ${from + i}` })));
    await post(1, 2);
    const eve = await openAs(suite.browser, 'Eve');
    try {
      await eve.page.goto(`${server.url}/chat?id=${room}`);
      await expect.poll(() => messageTexts(eve.page)).toEqual(['filler 1', 'filler 2']);
      await eve.context.setOffline(true);
      await eve.page.locator('salon-connection-status [data-state=offline]').waitFor({ timeout: 20_000 });
      // More than the 500 a rejoin is given: it gets the newest 500, truncated.
      await post(3, 602);
      await eve.context.setOffline(false);
      await eve.page.locator('salon-connection-status [data-notice=HISTORY_TRUNCATED]').waitFor({ timeout: 20_000 });
      await expect.poll(async () => (await messageTexts(eve.page)).at(-1)).toBe('filler 602');
      // "Load earlier messages", as the notice says, brings what comes just before them, not what comes before filler 1.
      // (The list renders the newest of what it holds: the first presses render the held ones above.)
      const older = eve.page.getByRole('button', { name: 'Load earlier messages' });
      for (let presses = 0; presses < 8 && !(await messageTexts(eve.page)).includes('filler 102'); presses++) {
        const shown = (await messageTexts(eve.page)).length;
        await older.click();
        await expect.poll(async () => (await messageTexts(eve.page)).length).toBeGreaterThan(shown);
      }
      expect(await messageTexts(eve.page)).toContain('filler 102');
      const texts = await messageTexts(eve.page);
      expect(texts.indexOf('filler 102')).toBeLessThan(texts.indexOf('filler 103'));
    } finally {
      await eve.context.close();
    }
  });

  it('does not read the reconnect countdown out every second: its live region says "Reconnecting" once', async () => {
    server ??= await startServer(suite.dataDir);
    await server.app.salon.store.upsertItem(item('news_countdown', { title: 'Countdown drill' }));
    const eve = await openAs(suite.browser, 'Eve');
    const sockets = await blockableSockets(eve.page);
    try {
      await eve.page.goto(`${server.url}/chat?id=news_countdown`);
      await eve.page.locator('salon-member-list .count[data-count="1"]').waitFor();
      sockets.block();
      await eve.context.setOffline(true);
      await eve.page.locator('salon-connection-status [data-state=offline]').waitFor({ timeout: 20_000 });
      await eve.context.setOffline(false);
      const bar = eve.page.locator('salon-connection-status [data-state=reconnecting]');
      await expect.poll(() => bar.innerText(), { timeout: 20_000 }).toMatch(/Reconnecting in \d+ s/);
      const heard = await eve.page.locator('salon-connection-status [role=status]').ariaSnapshot();
      expect(heard).toContain('Connection lost. Reconnecting.');
      expect(heard).not.toMatch(/\d+ s/);
      expect(await bar.getByRole('button', { name: 'Retry now' }).count()).toBe(1);
    } finally {
      await eve.context.close();
    }
  });

  it('shows the sessionStorage copy while the room cannot be reached, then the server history as the truth', async () => {
    server ??= await startServer(suite.dataDir);
    await server.app.salon.store.upsertItem(item('news_off', { title: 'Offline drill' }));
    const url = `${server.url}/chat?id=news_off`;
    const ada = await person(suite.browser, 'Ada');
    const bob = await person(suite.browser, 'Bob');
    const sockets = await blockableSockets(ada.page);
    try {
      await ada.page.goto(url);
      await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await say(ada.page, 'cached one');
      await say(ada.page, 'cached two');
      await expect.poll(() => messageTexts(ada.page)).toEqual(['cached one', 'cached two']);
      // Both confirmed in the copy (a message still being sent sorts after every confirmed one): on a
      // loaded machine the copy was once taken with 'cached two' not yet acknowledged.
      await expect
        .poll(() =>
          ada.page.evaluate(() => {
            const snap = JSON.parse(sessionStorage.getItem('salon.room.news_off') ?? '{"entries":[]}') as {
              entries: { state: string; message: { text: string } }[];
            };
            return snap.entries.filter((e) => e.state === 'sent').map((e) => e.message.text);
          }),
        )
        .toEqual(['cached one', 'cached two']);
      // A copy the server never had: the server's history must win over it. Put in as the reloaded
      // page starts, before the app reads it: the page leaving writes its own copy (pagehide).
      await ada.page.addInitScript(() => {
        if (!sessionStorage.getItem('test.ghost')) return;
        sessionStorage.removeItem('test.ghost');
        const snap = JSON.parse(sessionStorage.getItem('salon.room.news_off')!);
        const ghost = { ...snap.entries[0], key: 'm:ghost', order: 2.5 };
        ghost.message = { ...ghost.message, id: 'ghost', seq: 2.5, text: 'ghost from the cache' };
        snap.entries.push(ghost);
        sessionStorage.setItem('salon.room.news_off', JSON.stringify(snap));
      });
      await ada.page.evaluate(() => sessionStorage.setItem('test.ghost', '1'));

      sockets.block();
      await ada.page.reload();
      await ada.page.locator('salon-connection-status [data-state=reconnecting]').waitFor({ timeout: 10_000 });
      expect(await messageTexts(ada.page)).toEqual(['cached one', 'cached two', 'ghost from the cache']);

      await bob.page.goto(url);
      await bob.page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await say(bob.page, 'while you were away');
      sockets.unblock();
      // The backoff timer may reconnect on its own first, taking the button away; only a button
      // still there while the room is unreachable is a failure.
      await ada.page
        .locator('salon-connection-status')
        .getByRole('button', { name: 'Retry now' })
        .click({ timeout: 5_000 })
        .catch(async (err: unknown) => {
          if (await ada.page.locator('salon-connection-status [data-state=reconnecting]').count()) throw err;
        });
      await expect.poll(() => messageTexts(ada.page), { timeout: 10_000 }).toEqual(['cached one', 'cached two', 'while you were away']);
      await ada.page.locator('salon-member-list .count[data-count="2"]').waitFor();
    } finally {
      await ada.context.close();
      await bob.context.close();
    }
  });
});
