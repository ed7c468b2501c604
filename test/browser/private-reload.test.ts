import type { Browser, Page } from 'playwright-core';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { FORGET_RETRY_BASE_MS, FORGET_RETRY_CAP_MS, MAX_FORGET_REFUSALS } from '../../public/src/lib/forget-retry.js';
import type { AskResult, RoomAssistant, RoomOutlet } from '../../src/rooms/types.js';
import { ADMIN, tempDir } from '../helpers.js';
import { heldLocalChat } from '../rag/fakes.js';
import {
  adminPost,
  browserSuite,
  describeBrowser,
  item,
  messageTexts,
  newThread,
  openAs,
  probeResults,
  say,
  scanDom,
  shadowText,
  startServer,
  threadButton,
  type Person,
} from './harness.js';

// A member's private questions and answers are never stored by the server as messages (the
// assistant remembers each exchange for its asker alone, until they forget it); the tab keeps them
// (sessionStorage) so a reload shows them again, in their place, and nowhere else.

const person = (browser: Browser, name: string): Promise<Person> => openAs(browser, name, { width: 1200, height: 860 });

async function enter(page: Page, url: string, count: number): Promise<void> {
  await page.goto(url);
  // Attached, not visible: on a phone the people fold behind the room's Details toggle.
  await page.locator(`salon-member-list .count[data-count="${count}"]`).waitFor({ state: 'attached' });
}

async function privateMode(page: Page): Promise<void> {
  await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
  await page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
  expect(await page.locator('salon-composer input[name=private]').isChecked()).toBe(true);
}

/** Waits until `page` shows `text` as a confirmed message. */
async function sees(page: Page, text: string): Promise<void> {
  await expect.poll(() => page.locator('salon-message-item[state=sent]', { hasText: text }).count(), { timeout: 15_000 }).toBe(1);
}

/** Collects the page's uncaught errors. */
function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return errors;
}

/** Turns "Ask AI" off: what is typed then goes as a message, and a slash command as a command. */
async function messageMode(page: Page): Promise<void> {
  await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
  expect(await page.locator('salon-composer input[name=ask]').isChecked()).toBe(false);
}

/**
 * Refusals `refuse` makes of the page's `n`th `/forget private` (null: let it through to the
 * server), how many the page sent, and a way to send the page a frame of the server's on its latest
 * socket. The server's answers to those `hold` picks are held back (`held`) until `release`: the
 * server has forgotten, and the page still waits for its answer.
 */
async function refuseForgets(
  page: Page,
  refuse: (n: number) => { code: string; message: string } | null,
  hold: (n: number) => boolean = () => false,
): Promise<{ forgets: number; held: number; release: () => void; toPage: (frame: Record<string, unknown>) => void }> {
  let latest: { send: (m: string) => void } | undefined;
  const heldBack: (() => void)[] = [];
  const seen = {
    forgets: 0,
    held: 0,
    release: () => {
      for (const send of heldBack.splice(0)) send();
    },
    toPage: (frame: Record<string, unknown>) => latest!.send(JSON.stringify(frame)),
  };
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    latest = ws;
    const server = ws.connectToServer();
    const holding = new Set<string>();
    ws.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type?: string; text?: string; clientId?: string };
      if (frame.type === 'say' && frame.text === '/forget private') {
        const refusal = refuse(++seen.forgets);
        if (refusal) return ws.send(JSON.stringify({ type: 'error', ...refusal, clientId: frame.clientId }));
        if (hold(seen.forgets) && frame.clientId) holding.add(frame.clientId);
      }
      server.send(m);
    });
    server.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type?: string; clientId?: string; message?: { clientId?: string } };
      const answers = frame.type === 'error' ? frame.clientId : frame.type === 'message' ? frame.message?.clientId : undefined;
      if (answers && holding.delete(answers)) {
        seen.held++;
        heldBack.push(() => ws.send(m));
        return;
      }
      ws.send(m);
    });
  });
  return seen;
}

/** The page's localStorage keys of pending forgets and of their waits. */
function forgetKeys(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith('salon.forget'))
      .sort(),
  );
}

/** The refusals in a row the page keeps for its one pending forget of `roomId` (0 when none). */
function refusalsKept(page: Page, roomId: string): Promise<number> {
  return page.evaluate((id) => {
    const waits = JSON.parse(localStorage.getItem(`salon.forget-retry.${id}`) ?? '{}') as Record<string, { refusals: number }>;
    return Object.values(waits)[0]?.refusals ?? 0;
  }, roomId);
}

/** An assistant that starts every answer and finishes none until it is closed: a reload always comes mid-answer. */
class StalledAssistant implements RoomAssistant {
  private outlet: RoomOutlet | undefined;
  private n = 0;
  private readonly stop: (() => void)[] = [];
  attach(outlet: RoomOutlet): void {
    this.outlet = outlet;
  }
  pending() {
    return [];
  }
  async close(): Promise<void> {
    for (const end of this.stop.splice(0)) end();
  }
  ask(request: Parameters<RoomAssistant['ask']>[0]): { id: string; position: number; done: Promise<AskResult> } {
    const id = `answer_${++this.n}`;
    this.outlet!.sendToUser(request.roomId, request.asker.id, { type: 'assistant.progress', id, stage: 'writing' });
    this.outlet!.sendToUser(request.roomId, request.asker.id, { type: 'assistant.delta', id, text: 'Half an ans' });
    const done = new Promise<AskResult>((_resolve, reject) => this.stop.push(() => reject(new Error('closed'))));
    done.catch(() => {});
    return { id, position: 0, done };
  }
}

const QUESTION = 'What energy density did the cell reach in the independent tests?';

describeBrowser('private questions kept in the tab', () => {
  // Every test's member asks from 127.0.0.1: the address's 12 questions a minute would refuse the later ones.
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'true', ASK_LIMIT_IP: '100' } } });
  const people: Person[] = [];
  let stories: { id: string; title: string }[] = [];

  /** Ada in the room at `url`, in private mode, her question answered. */
  async function askedPrivately(url: string, question = 'What happened?'): Promise<Person> {
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    await enter(ada.page, url, 1);
    await privateMode(ada.page);
    await say(ada.page, question);
    await expect.poll(() => ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    return ada;
  }

  beforeAll(async () => {
    const page1 = (await (await fetch(`${suite.server.url}/api/v1/content?kind=news&limit=100`)).json()) as { items: { id: string; title: string }[] };
    stories = [...page1.items].sort((a, b) => Number(/sodium-ion/i.test(b.title)) - Number(/sodium-ion/i.test(a.title)));
  });

  afterEach(async () => {
    for (const p of people.splice(0)) await p.context.close();
  });

  /** The private exchanges the server remembers in the room's threads. */
  async function privateChunks(roomId: string): Promise<number> {
    const { store } = suite.server.app.salon;
    let n = 0;
    for (const t of await store.listThreads(roomId)) n += (await store.scanThreadMemory(t.id, 0, 1000, false)).filter((c) => c.privileged).length;
    return n;
  }

  it('shows a private question and its answer again after a reload, in place, in that tab only, until forgotten', async () => {
    const url = `${suite.server.url}/chat?id=${stories[0].id}`;
    const ada = await person(suite.browser, 'Ada');
    const bob = await person(suite.browser, 'Bob');
    people.push(ada, bob);
    const errors = pageErrors(ada.page);
    await enter(ada.page, url, 1);
    await enter(bob.page, url, 2);

    await say(bob.page, 'before the question');
    await sees(ada.page, 'before the question');
    const note = ada.page.locator('salon-composer .private-note');
    expect(await note.count()).toBe(0);
    await privateMode(ada.page);
    expect(await note.textContent()).toContain('Private questions show in this tab only; the assistant remembers them for you until you forget them.');
    expect(await ada.page.locator('salon-composer textarea').getAttribute('aria-describedby')).toContain('private-note');
    expect(await note.locator('button').count()).toBe(0);
    await say(ada.page, QUESTION);
    const answer = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
    const answerText = await shadowText(answer.locator('salon-markdown'));
    await say(bob.page, 'after the question');
    await sees(ada.page, 'after the question');
    const shown = await messageTexts(ada.page);
    expect(shown).toHaveLength(4);
    expect(shown[0]).toBe('before the question');
    expect(shown[1]).toBe(QUESTION);
    expect(shown[3]).toBe('after the question');

    await ada.page.reload();
    await ada.page.locator('salon-member-list .count[data-count="2"]').waitFor();
    await sees(ada.page, 'after the question');
    expect(await messageTexts(ada.page)).toEqual(shown);
    const question = ada.page.locator('salon-message-item[kind=user][only-you]', { hasText: 'What energy density' });
    expect(await question.locator('.badge').textContent()).toBe('asked the AI privately');
    expect(await answer.locator('.badge.private').textContent()).toBe('only you see this');
    expect(await shadowText(answer.locator('salon-markdown'))).toBe(answerText);

    // Another tab of the same member (same identity, its own sessionStorage) and the other member never see them.
    const second = await ada.context.newPage();
    await second.goto(url);
    await sees(second, 'after the question');
    await bob.page.reload();
    await sees(bob.page, 'after the question');
    for (const page of [second, bob.page]) {
      expect(await messageTexts(page)).toEqual(['before the question', 'after the question']);
    }
    await second.close();

    // Forgetting them removes them here, from the tab's storage and from the assistant's memory (a
    // reload does not bring them back, and the exchange is gone from the server).
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(stories[0].id)).toBe(1);
    await privateMode(ada.page);
    await note.locator('button', { hasText: 'Forget' }).click();
    await expect.poll(() => messageTexts(ada.page)).toEqual(['before the question', 'after the question']);
    await expect.poll(() => privateChunks(stories[0].id)).toBe(0);
    expect(await note.locator('button').count()).toBe(0);
    await ada.page.reload();
    await sees(ada.page, 'after the question');
    expect(await messageTexts(ada.page)).toEqual(['before the question', 'after the question']);
    expect(await ada.page.evaluate((id) => sessionStorage.getItem(`salon.private.${id}`), stories[0].id)).toBeNull();
    expect(errors).toEqual([]);
  });

  it('tells the server to forget them once the room is back, when Forget them is pressed offline', async () => {
    const roomId = stories[1].id;
    const ada = await askedPrivately(`${suite.server.url}/chat?id=${roomId}`);
    const answers = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);

    await ada.context.setOffline(true);
    await ada.page.locator('salon-connection-status [data-state=offline]').waitFor();
    await ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' }).click();
    await expect.poll(() => answers.count()).toBe(0);
    const pending = ada.page.locator('salon-connection-status [data-forget=pending]');
    expect(await pending.textContent()).toContain('forgets your private questions as soon as the room is back');
    expect(await privateChunks(roomId)).toBe(1);

    await ada.context.setOffline(false);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => pending.count()).toBe(0);
  });

  it('says Forget them waits for the room beside the notice the member was reading, hiding neither', async () => {
    const roomId = stories[12].id;
    const ada = await askedPrivately(`${suite.server.url}/chat?id=${roomId}`);
    await suite.server.app.salon.memory.idle();
    // A refused name: an error the member should read (going offline does not clear it).
    await ada.page.getByRole('button', { name: 'Change your name' }).click();
    await ada.page.locator('salon-member-list #name').fill('Salon AI');
    await ada.page.locator('salon-member-list').getByRole('button', { name: 'Save' }).click();
    const reserved = ada.page.locator('salon-connection-status [data-notice=ERR_NAME_RESERVED]');
    await reserved.waitFor();

    await ada.context.setOffline(true);
    await ada.page.locator('salon-connection-status [data-state=offline]').waitFor();
    await ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' }).click();
    await ada.page.locator('salon-connection-status').getByText('forgets your private questions as soon as the room is back').waitFor();
    expect(await reserved.count()).toBe(1);

    await ada.context.setOffline(false);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => ada.page.locator('salon-connection-status [data-forget]').count()).toBe(0);
  });

  it('sends a Forget them pressed offline from the next page of the browser, in its own room only, when the first page is gone', async () => {
    const [here, there] = [stories[3].id, stories[4].id];
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    const answers = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    for (const roomId of [there, here]) {
      await enter(ada.page, `${suite.server.url}/chat?id=${roomId}`, 1);
      await privateMode(ada.page);
      await say(ada.page, 'What happened?');
      await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);
    }
    await suite.server.app.salon.memory.idle();
    expect([await privateChunks(here), await privateChunks(there)]).toEqual([1, 1]);

    await ada.context.setOffline(true);
    await ada.page.locator('salon-connection-status [data-state=offline]').waitFor();
    await ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' }).click();
    await ada.page.locator('salon-connection-status [data-forget=pending]').waitFor();
    // The page goes before the room is back (a reload, the tab closed).
    await ada.page.close();
    await ada.context.setOffline(false);

    // The browser's next page, in the other room first: its private memory is not the one forgotten.
    const next = await ada.context.newPage();
    await enter(next, `${suite.server.url}/chat?id=${there}`, 1);
    await enter(next, `${suite.server.url}/chat?id=${here}`, 1);
    await expect.poll(() => privateChunks(here), { timeout: 20_000 }).toBe(0);
    expect(await privateChunks(there)).toBe(1);
    await expect.poll(() => next.locator('salon-connection-status [data-forget=pending]').count()).toBe(0);
    // The entry goes when the server's answer reaches the page, which may be after the store shows the deletion.
    await expect.poll(() => next.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('salon.forget.')))).toEqual([]);
  });

  it('sends a Forget them pressed offline once the room is back, though the thread open then was merged into one deleted since', async () => {
    const roomId = stories[5].id;
    const ada = await askedPrivately(`${suite.server.url}/chat?id=${roomId}`);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);
    await ada.page.getByRole('button', { name: 'New thread' }).click();
    await ada.page.getByLabel('Title of the new thread').fill('Side');
    await ada.page.getByLabel('Title of the new thread').press('Enter');
    await expect.poll(() => threadButton(ada.page, 'Side').getAttribute('aria-current')).toBe('true');

    await ada.context.setOffline(true);
    await ada.page.locator('salon-connection-status [data-state=offline]').waitFor();
    await ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' }).click();
    const pending = ada.page.locator('salon-connection-status [data-forget=pending]');
    await pending.waitFor();
    // Meanwhile the open thread is merged into another, which is then deleted: it leads to no thread.
    const threads = (await (await fetch(`${suite.server.url}/api/v1/rooms/${roomId}/threads`)).json()) as { threads: { id: string; title: string }[] };
    const side = threads.threads.find((t) => t.title === 'Side')!.id;
    const other = await newThread(suite.server, roomId, 'Other');
    await adminPost(suite.server, '/api/v1/threads/merge', { survivorId: other, absorbedId: side });
    expect((await fetch(`${suite.server.url}/api/v1/threads/${other}`, { method: 'DELETE', headers: ADMIN })).ok).toBe(true);

    await ada.context.setOffline(false);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => pending.count()).toBe(0);
    await expect.poll(() => ada.page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('salon.forget.')))).toEqual([]);
  });

  it('forgets the private questions of a thread that was deleted, and keeps those of the threads still there', async () => {
    const roomId = stories[2].id;
    const url = `${suite.server.url}/chat?id=${roomId}`;
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    await enter(ada.page, url, 1);
    const answers = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    await privateMode(ada.page);
    await say(ada.page, 'asked in the main thread');
    await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);

    await ada.page.getByRole('button', { name: 'New thread' }).click();
    await ada.page.getByLabel('Title of the new thread').fill('Side');
    await ada.page.getByLabel('Title of the new thread').press('Enter');
    const side = ada.page.locator('salon-thread-list button.thread', { has: ada.page.locator('.title', { hasText: 'Side' }) });
    await expect.poll(() => side.getAttribute('aria-current')).toBe('true');
    await say(ada.page, 'asked in the side thread');
    await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => messageTexts(ada.page)).toContain('asked in the side thread');
    const stored = () => ada.page.evaluate((id) => sessionStorage.getItem(`salon.private.${id}`) ?? '', roomId);
    expect(await stored()).toContain('asked in the side thread');

    const { threads } = (await (await fetch(`${suite.server.url}/api/v1/rooms/${roomId}/threads`)).json()) as { threads: { id: string; title: string }[] };
    const sideId = threads.find((t) => t.title === 'Side')!.id;
    const deleted = await fetch(`${suite.server.url}/api/v1/threads/${sideId}`, { method: 'DELETE', headers: { authorization: 'Bearer test-admin-token' } });
    expect(deleted.ok).toBe(true);
    await ada.page.reload();
    await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor();
    await expect.poll(stored).not.toContain('asked in the side thread');
    expect(await stored()).toContain('asked in the main thread');
    await expect.poll(() => messageTexts(ada.page)).toContain('asked in the main thread');
    expect(await answers.count()).toBe(1);
  });

  it('does not keep a private question the assistant’s limit refused as if it was asked', async () => {
    const dir = tempDir();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'false', ASK_LIMIT_USER: '1' } });
    try {
      await server.app.salon.store.upsertItem(item('news_plim', { title: 'Limits drill' }));
      const ada = await askedPrivately(`${server.url}/chat?id=news_plim`, 'first private question');
      await say(ada.page, 'second private question');
      const refused = ada.page.locator('salon-message-item[state=failed]', { hasText: 'second private question' });
      await expect.poll(() => refused.count()).toBe(1);
      expect(await refused.locator('.failed').textContent()).toMatch(/ask again in \d+ s/);
      expect(await refused.getByRole('button', { name: 'Retry' }).count()).toBe(1);
      const stored = await ada.page.evaluate(() => sessionStorage.getItem('salon.private.news_plim') ?? '');
      expect(stored).toContain('first private question');
      expect(stored).not.toContain('second private question');
    } finally {
      await server.close();
      dir.cleanup();
    }
  });

  it('fits the private-mode composer, its line and Forget them on a 360 × 740 phone without scrolling the page', async () => {
    const nia = await openAs(suite.browser, 'Nia', { width: 360, height: 740 });
    people.push(nia);
    await enter(nia.page, `${suite.server.url}/chat?id=${stories[1].id}`, 1);
    await privateMode(nia.page);
    await say(nia.page, QUESTION);
    await expect.poll(() => nia.page.locator('salon-message-item[kind=assistant][only-you][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    const forget = nia.page.locator('salon-composer .private-note button', { hasText: 'Forget them' });
    await forget.waitFor();
    expect(await nia.page.locator('salon-composer .private-note').innerText()).toContain('Shown in this tab only.');
    for (const target of [
      'salon-composer textarea',
      'salon-composer button[type=submit]',
      'salon-composer input[name=private]',
      'salon-composer .private-note',
    ]) {
      const box = (await nia.page.locator(target).boundingBox())!;
      expect(box.y + box.height, target).toBeLessThanOrEqual(740);
    }
    expect(await nia.page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(740);
    // Screen readers hear the note that is shown (the long one is not rendered on a phone).
    expect(await nia.page.locator('salon-composer .private-note .long').isVisible()).toBe(false);
  });

  it('says why a private question restored by a reload in the middle of its answer has no answer', async () => {
    const dir = tempDir();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'false' }, overrides: { assistant: new StalledAssistant() } });
    try {
      await server.app.salon.store.upsertItem(item('news_pstall', { title: 'Stalled answers' }));
      const ada = await person(suite.browser, 'Ada');
      people.push(ada);
      const url = `${server.url}/chat?id=news_pstall`;
      await enter(ada.page, url, 1);
      await privateMode(ada.page);
      await say(ada.page, 'a question cut short');
      await ada.page.locator('salon-message-item[state=streaming]', { hasText: 'Half an ans' }).waitFor();
      const question = ada.page.locator('salon-message-item[kind=user][only-you]', { hasText: 'a question cut short' });
      expect(await question.locator('[data-unanswered]').count()).toBe(0);

      await ada.page.reload();
      await enter(ada.page, url, 1);
      await question.waitFor();
      expect(await ada.page.locator('salon-message-item[state=streaming]').count()).toBe(0);
      expect(await question.locator('[data-unanswered]').textContent()).toContain(
        'The page was reloaded while this was being answered: if no answer follows, ask again.',
      );
    } finally {
      await server.close();
      dir.cleanup();
    }
  });

  it('finishes a private answer the page was reloaded in the middle of, on the reloaded page, and drops the reload note', async () => {
    const dir = tempDir();
    const { chat, writing, release } = heldLocalChat();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'false' }, overrides: { chat } });
    try {
      await server.app.salon.ingest.pipeline.put(item('news_pheld', { title: 'Gym news', body: 'The gym opens a new locker room on Monday.' }));
      const ada = await person(suite.browser, 'Ada');
      people.push(ada);
      const url = `${server.url}/chat?id=news_pheld`;
      await enter(ada.page, url, 1);
      await privateMode(ada.page);
      await say(ada.page, 'When does the locker room open?');
      await writing;
      await ada.page.reload();
      await enter(ada.page, url, 1);
      const question = ada.page.locator('salon-message-item[kind=user][only-you]', { hasText: 'When does the locker room open?' });
      await question.locator('[data-unanswered]').waitFor();
      release();
      const answer = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
      await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
      expect(await shadowText(answer.locator('salon-markdown'))).toContain('Monday');
      expect(await question.locator('[data-unanswered]').count()).toBe(0);
    } finally {
      release();
      await server.close();
      dir.cleanup();
    }
  });

  it('keeps working when the tab’s stored copies are corrupt or hostile, showing hostile text as text', async () => {
    const roomId = stories[1].id;
    const url = `${suite.server.url}/chat?id=${roomId}`;
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    const errors = pageErrors(ada.page);
    await enter(ada.page, url, 1);

    const hostile = {
      v: 1,
      entries: [
        null,
        'junk',
        { key: 'c:x', order: 'first', message: {} },
        {
          key: 'c:p1',
          order: 0.5,
          state: 'sent',
          private: true,
          message: {
            id: '',
            seq: 0,
            roomId,
            threadId: '',
            author: { id: 'u', name: '<b onmouseover=alert(1)>Eve</b>', kind: 'user' },
            text: '<img src=x onerror=alert(1)> kept question',
            ts: 'not a date',
            clientId: 'p1',
          },
        },
        {
          key: 'm:private_1',
          order: 0.5,
          state: 'sent',
          message: {
            id: 'private_1',
            seq: 0,
            roomId,
            threadId: '',
            author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
            text: '[click](javascript:alert(1)) <script>alert(2)</script> kept answer',
            ts: '2026-01-01T00:00:00.000Z',
            sources: [
              { n: 1, id: 'x', kind: 'news', title: '<svg onload=alert(3)>', url: 'javascript:alert(4)', sourceType: 'document', snippet: 's' },
              { n: {} },
            ],
          },
        },
      ],
    };
    const room = '{"v":1,"entries":[{"key":"m:x","state":"sent","message":{"id":"x","seq":0,"text":"t","author":{"name":"n"}}},{"key":7}],"threadId":{"a":1}}';
    await ada.page.evaluate(
      ([id, privateCopy, roomCopy]) => {
        sessionStorage.setItem(`salon.private.${id}`, privateCopy);
        sessionStorage.setItem(`salon.room.${id}`, roomCopy);
      },
      [roomId, JSON.stringify(hostile), room],
    );
    await ada.page.reload();
    await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor();
    await expect
      .poll(() => messageTexts(ada.page))
      .toEqual(['<img src=x onerror=alert(1)> kept question', '[click](javascript:alert(1)) <script>alert(2)</script> kept answer']);
    await say(ada.page, 'still works');
    await sees(ada.page, 'still works');

    // Not even JSON: the copies are ignored.
    await ada.page.evaluate((id) => {
      sessionStorage.setItem(`salon.private.${id}`, '{"v":1,"entries":[');
      sessionStorage.setItem(`salon.room.${id}`, '\u0000not json');
    }, roomId);
    await ada.page.reload();
    await sees(ada.page, 'still works');
    expect(await messageTexts(ada.page)).toEqual(['still works']);
    await say(ada.page, 'and again');
    await sees(ada.page, 'and again');

    expect(await scanDom(ada.page)).toEqual([]);
    const probe = await probeResults(ada.page);
    expect(probe.alerts).toEqual([]);
    expect(probe.xss).toBeUndefined();
    expect(errors).toEqual([]);
  });

  /** Ada, her private question in `roomId` answered and remembered, the page's clock held from then on (timers run only when the test moves it). */
  async function rememberedPrivately(roomId: string, refuse: (n: number) => { code: string; message: string } | null, hold?: (n: number) => boolean) {
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    const seen = await refuseForgets(ada.page, refuse, hold);
    await ada.page.clock.install();
    await enter(ada.page, `${suite.server.url}/chat?id=${roomId}`, 1);
    await privateMode(ada.page);
    await say(ada.page, 'What happened?');
    await expect.poll(() => ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);
    await ada.page.clock.pauseAt(await ada.page.evaluate(() => Date.now() + 1_000));
    return { ada, seen, forget: ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' }) };
  }

  const LIMITED = { code: 'ERR_RATE_LIMITED', message: 'Slow down: too many commands from one address; wait a moment' };

  it('takes a typed /forget private as Forget them: kept, asked again after a backoff, one command a try, and its answer told', async () => {
    const roomId = stories[9].id;
    let refusals = 1;
    const { ada, seen } = await rememberedPrivately(roomId, () => (refusals-- > 0 ? LIMITED : null));
    await messageMode(ada.page);

    await say(ada.page, '/forget private');
    const retrying = ada.page.locator('salon-connection-status [data-forget=retrying]');
    await retrying.waitFor();
    expect(await retrying.textContent()).toContain('not forgotten yet');
    expect(seen.forgets).toBe(1);
    expect(await forgetKeys(ada.page)).toEqual([`salon.forget-retry.${roomId}`, `salon.forget.${roomId}`]);
    // As the button does, the tab forgets its copies; the command is no message of the conversation, and no refusal shows under it.
    await expect.poll(() => ada.page.locator('salon-message-item[only-you]').count()).toBe(0);
    expect(await ada.page.locator('salon-message-item', { hasText: '/forget private' }).count()).toBe(0);
    expect(await ada.page.locator('salon-connection-status [data-notice]').count()).toBe(0);
    expect(await privateChunks(roomId)).toBe(1);

    // Typed again while it waits: the one request waits on, nothing more is sent.
    await say(ada.page, '/forget private');
    await retrying.waitFor();
    expect(seen.forgets).toBe(1);
    expect(await refusalsKept(ada.page, roomId)).toBe(1);

    await ada.page.clock.runFor(FORGET_RETRY_BASE_MS);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    const done = ada.page.locator('salon-connection-status [data-notice=FORGET_DONE]');
    await done.waitFor();
    expect(await done.textContent()).toContain('Forgotten: the assistant no longer remembers 1 private exchange of yours in this room.');
    expect(seen.forgets).toBe(2);
    await expect.poll(() => retrying.count()).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
  });

  it('says plainly when a typed /forget private is refused for good that the assistant did NOT forget, and sends it no more', async () => {
    const roomId = stories[10].id;
    const { ada, seen } = await rememberedPrivately(roomId, () => ({ code: 'ERR_BAD_MESSAGE', message: 'Bad message: use /forget private' }));
    await messageMode(ada.page);

    await say(ada.page, '/forget private');
    const refused = ada.page.locator('salon-connection-status [data-notice=FORGET_REFUSED]');
    await refused.waitFor();
    const said = (await refused.textContent())!.replace(/\s+/g, ' ');
    expect(said).toContain('Your private questions in this room were NOT forgotten: the assistant still remembers them.');
    expect(said).toContain('Bad message: use /forget private');
    expect(said).toContain('Send /forget private again, or press “Forget them” in private mode, to try again.');
    expect(await ada.page.locator('salon-message-item[state=failed]').count()).toBe(0);
    await ada.page.clock.runFor(FORGET_RETRY_CAP_MS);
    expect(seen.forgets).toBe(1);
    expect(await forgetKeys(ada.page)).toEqual([]);
    expect(await privateChunks(roomId)).toBe(1);
  });

  it('shows that Forget them waits to ask again while another notice holds the area, hiding neither', async () => {
    const roomId = stories[11].id;
    let refusals = 1;
    const { ada, seen, forget } = await rememberedPrivately(roomId, () => (refusals-- > 0 ? LIMITED : null));
    // A warning the member should read holds the notice area.
    seen.toPage({ type: 'warning', code: 'FUSION_FALLBACK', message: 'Smart fusion failed; the memories were joined as they are.' });
    const other = ada.page.locator('salon-connection-status [data-notice=FUSION_FALLBACK]');
    await other.waitFor();

    await forget.click();
    // Found by its words: the page must say it, wherever.
    const retrying = ada.page.locator('salon-connection-status').getByText('your private questions are not forgotten yet');
    await retrying.waitFor();
    expect(seen.forgets).toBe(1);
    expect(await other.textContent()).toContain('Smart fusion failed');

    await ada.page.clock.runFor(FORGET_RETRY_BASE_MS);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    expect(seen.forgets).toBe(2);
    await expect.poll(() => retrying.count()).toBe(0);
    expect(await other.count()).toBe(1);
  });

  it('asks the server again after a backoff when its command limit refused Forget them, and the assistant forgets', async () => {
    const roomId = stories[6].id;
    let refusals = 1;
    const limited = { code: 'ERR_RATE_LIMITED', message: 'Slow down: too many commands from one address; wait a moment' };
    const { ada, seen, forget } = await rememberedPrivately(roomId, () => (refusals-- > 0 ? limited : null));

    await forget.click();
    const retrying = ada.page.locator('salon-connection-status [data-forget=retrying]');
    await retrying.waitFor();
    expect(await retrying.textContent()).toContain('not forgotten yet');
    expect(seen.forgets).toBe(1);
    expect(await privateChunks(roomId)).toBe(1);
    expect(await forgetKeys(ada.page)).toEqual([`salon.forget-retry.${roomId}`, `salon.forget.${roomId}`]);

    // The first wait is at most the backoff's base: the page asks again, once.
    await ada.page.clock.runFor(FORGET_RETRY_BASE_MS);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    expect(seen.forgets).toBe(2);
    await expect.poll(() => retrying.count()).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
  });

  it('stops after the last refusal it waits out and says plainly, as text, that the assistant did NOT forget; Forget them is offered again', async () => {
    const roomId = stories[7].id;
    let refusing = true;
    const hostile = { code: 'ERR_RATE_LIMITED', message: 'Slow down: <img src=x onerror="window.__xss=1">' };
    const { ada, seen, forget } = await rememberedPrivately(roomId, () => (refusing ? hostile : null));
    const errors = pageErrors(ada.page);

    await forget.click();
    for (let refusal = 1; refusal < MAX_FORGET_REFUSALS; refusal++) {
      // Moved on only once the page has taken the refusal in: its wait is then set, and no answer is awaited.
      await expect.poll(() => refusalsKept(ada.page, roomId)).toBe(refusal);
      expect(seen.forgets).toBe(refusal);
      await ada.page.clock.runFor(Math.min(FORGET_RETRY_CAP_MS, FORGET_RETRY_BASE_MS * 2 ** (refusal - 1)));
    }
    const refused = ada.page.locator('salon-connection-status [data-notice=FORGET_REFUSED]');
    await refused.waitFor();
    const said = (await refused.textContent())!.replace(/\s+/g, ' ');
    expect(said).toContain('Your private questions in this room were NOT forgotten: the assistant still remembers them.');
    expect(said).toContain('Slow down: <img src=x onerror="window.__xss=1">');
    expect(said).toContain('Press “Forget them” in private mode to try again.');
    // No more tries, however long the page waits, and nothing left pending to be sent unseen.
    await ada.page.clock.runFor(FORGET_RETRY_CAP_MS);
    expect(await forgetKeys(ada.page)).toEqual([]);
    expect(seen.forgets).toBe(MAX_FORGET_REFUSALS);
    expect(await privateChunks(roomId)).toBe(1);
    expect(await scanDom(ada.page)).toEqual([]);
    expect((await probeResults(ada.page)).xss).toBeUndefined();

    // The tab keeps no private question now, yet the button is there: pressed, the server takes it.
    refusing = false;
    await forget.click();
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    expect(seen.forgets).toBe(MAX_FORGET_REFUSALS + 1);
    await expect.poll(() => refused.count()).toBe(0);
    await expect.poll(() => forget.count()).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('tells the member at once when the server refuses Forget them for good, and does not send it again', async () => {
    const roomId = stories[8].id;
    const { ada, seen, forget } = await rememberedPrivately(roomId, () => ({ code: 'ERR_BAD_MESSAGE', message: 'Bad message: use /forget private' }));

    await forget.click();
    const refused = ada.page.locator('salon-connection-status [data-notice=FORGET_REFUSED]');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('were NOT forgotten');
    expect(await refused.textContent()).toContain('Bad message: use /forget private');
    await ada.page.clock.runFor(FORGET_RETRY_CAP_MS);
    expect(seen.forgets).toBe(1);
    expect(await forgetKeys(ada.page)).toEqual([]);
    expect(await forget.count()).toBe(1);
    expect(await privateChunks(roomId)).toBe(1);
  });

  it('forgets a private question asked while Forget them was on its way, when Forget them is pressed again: once more, after its answer', async () => {
    const roomId = stories[13].id;
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    // The server's answer to the first Forget them is held back: done on the server, on its way for the page.
    const seen = await refuseForgets(
      ada.page,
      () => null,
      (n) => n === 1,
    );
    await enter(ada.page, `${suite.server.url}/chat?id=${roomId}`, 1);
    await privateMode(ada.page);
    const answers = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    const forget = ada.page.locator('salon-composer .private-note button', { hasText: 'Forget' });
    await say(ada.page, 'What happened?');
    await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);

    await forget.click();
    await expect.poll(() => seen.held).toBe(1);
    expect(await privateChunks(roomId)).toBe(0);
    // Asked after the server forgot, before the page heard so: the first command cannot cover it.
    await say(ada.page, 'What happened then?');
    await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);
    await forget.click();
    await expect.poll(() => answers.count()).toBe(0);
    // One command at a time: the second waits for the first's answer.
    expect(seen.forgets).toBe(1);

    seen.release();
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
    expect(seen.forgets).toBe(2);
    // The assistant no longer has it: asked again, the server says there is nothing left to forget.
    await messageMode(ada.page);
    await say(ada.page, '/forget private');
    const done = ada.page.locator('salon-connection-status [data-notice=FORGET_DONE]');
    await done.waitFor();
    expect(await done.textContent()).toContain('The assistant remembers no private exchange of yours in this room.');
    expect(seen.forgets).toBe(3);
  });

  it('sends a typed /forget private asked again after a private question once more, through a refusal, and tells one answer', async () => {
    const roomId = stories[14].id;
    const { ada, seen } = await rememberedPrivately(
      roomId,
      (n) => (n === 2 ? LIMITED : null),
      (n) => n === 1,
    );
    await messageMode(ada.page);
    const done = ada.page.locator('salon-connection-status [data-notice=FORGET_DONE]');
    const retrying = ada.page.locator('salon-connection-status [data-forget=retrying]');

    await say(ada.page, '/forget private');
    await expect.poll(() => seen.held).toBe(1);
    expect(await privateChunks(roomId)).toBe(0);
    // Typed again with nothing asked since: the command on its way covers it, and no other is wanted.
    await say(ada.page, '/forget private');
    // "Only me" stays on: `@ai` makes the line a private question.
    await say(ada.page, '@ai What happened then?');
    await expect.poll(() => ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);
    // Asked for after it: one more follows the first's answer, however often it is asked for.
    await say(ada.page, '/forget private');
    await say(ada.page, '/forget private');
    expect(seen.forgets).toBe(1);

    // The first's answer: the next goes at once, and is refused by the command limit.
    seen.release();
    await retrying.waitFor();
    expect(seen.forgets).toBe(2);
    expect(await refusalsKept(ada.page, roomId)).toBe(1);
    // The first's answer is not told: the member asked for more than it did.
    expect(await done.count()).toBe(0);
    expect(await privateChunks(roomId)).toBe(1);

    await ada.page.clock.runFor(FORGET_RETRY_BASE_MS);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await done.waitFor();
    // What the last command counted is not what both forgot: the words say what holds.
    expect(await done.textContent()).toContain('Forgotten: the assistant no longer remembers your private questions in this room.');
    await expect.poll(() => retrying.count()).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
    await ada.page.clock.runFor(FORGET_RETRY_CAP_MS);
    expect(seen.forgets).toBe(3);
    expect(await done.count()).toBe(1);
  });

  it('sends the Forget them asked again after a private question from the reloaded page, when the page goes before it is through', async () => {
    const roomId = stories[15].id;
    const { ada, seen, forget } = await rememberedPrivately(
      roomId,
      (n) => (n === 2 ? LIMITED : null),
      (n) => n === 1,
    );

    await forget.click();
    await expect.poll(() => seen.held).toBe(1);
    expect(await privateChunks(roomId)).toBe(0);
    await say(ada.page, 'What happened then?');
    await expect.poll(() => ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    await suite.server.app.salon.memory.idle();
    expect(await privateChunks(roomId)).toBe(1);
    await forget.click();

    // The first is answered, the one after it refused: it waits, kept beside the request.
    seen.release();
    await expect.poll(() => refusalsKept(ada.page, roomId)).toBe(1);
    expect(seen.forgets).toBe(2);
    expect(await forgetKeys(ada.page)).toEqual([`salon.forget-retry.${roomId}`, `salon.forget.${roomId}`]);

    // The page goes before its wait is over; the next one sends it once the wait is.
    await ada.page.reload();
    await ada.page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
    await ada.page.locator('salon-connection-status [data-forget=retrying]').waitFor();
    expect(await privateChunks(roomId)).toBe(1);
    await ada.page.clock.runFor(FORGET_RETRY_BASE_MS);
    await expect.poll(() => privateChunks(roomId), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => forgetKeys(ada.page)).toEqual([]);
    expect(seen.forgets).toBe(3);
  });
});
