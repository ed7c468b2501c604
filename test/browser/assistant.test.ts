import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import type { AssistantStage, Source } from '../../src/protocol/messages.js';
import type { AskRequest, AskResult, RoomAssistant, RoomOutlet } from '../../src/rooms/types.js';
import type { Store } from '../../src/store/types.js';
import { tempDir } from '../helpers.js';
import {
  ARTIFACTS,
  browserSuite,
  describeBrowser,
  item,
  openAs,
  probeResults,
  say,
  scanDom,
  shadowText,
  startServer,
  type Person,
  type TestServer,
} from './harness.js';

const person = (browser: Browser, name: string): Promise<Person> => openAs(browser, name, { width: 1200, height: 860 });

/**
 * Records every render of a message item in the page (state, stage, text length), so a test can
 * tell that an answer was shown while it streamed, not only once finished.
 */
async function recordRenders(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __renders: { state: string; stage: string; chars: number }[] };
    w.__renders = [];
    const cls = customElements.get('salon-message-item') as unknown as { prototype: { updated(this: unknown, c: unknown): void } };
    const original = cls.prototype.updated;
    cls.prototype.updated = function (this: { state: string; stage: string; text: string }, changed: unknown) {
      w.__renders.push({ state: this.state, stage: this.stage, chars: this.text.length });
      original.call(this, changed);
    };
  });
}

async function renders(page: Page): Promise<{ state: string; stage: string; chars: number }[]> {
  return page.evaluate(() => (window as unknown as { __renders: { state: string; stage: string; chars: number }[] }).__renders);
}

/** Records on `page` every set of members its typing indicator shows. */
async function recordTypists(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __typists: string[][] };
    w.__typists = [];
    const cls = customElements.get('salon-typing-indicator') as unknown as { prototype: { updated(this: unknown, c: unknown): void } };
    const original = cls.prototype.updated;
    cls.prototype.updated = function (this: { members: readonly { name: string }[] }, changed: unknown) {
      w.__typists.push(this.members.map((m) => m.name));
      original?.call(this, changed);
    };
  });
}

async function typists(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __typists: string[][] }).__typists.flat());
}

async function enter(p: Person, url: string, count: number): Promise<void> {
  await p.page.goto(url);
  await p.page.locator(`salon-member-list .count[data-count="${count}"]`).waitFor();
}

async function ask(page: Page, question: string): Promise<void> {
  await page.locator('salon-composer label.switch').click();
  expect(await page.locator('salon-composer input[name=ask]').isChecked()).toBe(true);
  await say(page, question);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scripted assistant: slow, known stages and pieces, and sources of every kind. */
class ScriptedAssistant implements RoomAssistant {
  private outlet: RoomOutlet | undefined;
  private n = 0;
  /** Lets the answer go on past its first piece: the test looks at it mid-answer first, however slow the machine. */
  release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));
  constructor(
    private readonly store: () => Store,
    private readonly sources: Source[],
  ) {}
  attach(outlet: RoomOutlet): void {
    this.outlet = outlet;
  }
  pending() {
    return [];
  }
  async close(): Promise<void> {}
  ask(request: AskRequest): { id: string; position: number; done: Promise<AskResult> } {
    const id = `answer_${++this.n}`;
    const send = (frame: Parameters<RoomOutlet['broadcast']>[1]) => this.outlet!.broadcast(request.roomId, frame);
    const done = (async () => {
      for (const stage of ['searching', 'reranking', 'writing'] as AssistantStage[]) {
        send({ type: 'assistant.progress', id, stage });
        await sleep(400);
      }
      const pieces = ['The cell reached **168 Wh/kg** [1]. ', 'A commenter doubted the cycle count [2], ', 'as was said here earlier [3].'];
      for (const [i, text] of pieces.entries()) {
        send({ type: 'assistant.delta', id, text });
        if (i === 0) await this.released;
        await sleep(400);
      }
      const { message } = await this.store().appendMessage({
        roomId: request.roomId,
        threadId: request.threadId,
        author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
        text: pieces.join(''),
        clientId: id,
        sources: this.sources,
      });
      send({ type: 'assistant.done', message });
      return { message, sources: this.sources, abstained: false, stages: {} };
    })();
    return { id, position: 0, done };
  }
}

describeBrowser('the assistant in a room', () => {
  const suite = browserSuite({ artifacts: true });
  const servers: TestServer[] = [];
  const people: Person[] = [];

  afterEach(async () => {
    for (const p of people.splice(0)) await p.context.close();
    for (const s of servers.splice(0)) await s.close();
  });

  /** Ada, then Bob, in the room at `url`, each window recording how its messages render. */
  async function adaAndBob(url: string): Promise<[Person, Person]> {
    const ada = await person(suite.browser, 'Ada');
    const bob = await person(suite.browser, 'Bob');
    people.push(ada, bob);
    await enter(ada, url, 1);
    await enter(bob, url, 2);
    await Promise.all([recordRenders(ada.page), recordRenders(bob.page)]);
    return [ada, bob];
  }

  it('streams an @ai answer with its stage into both windows, then numbered sources linking to the originals', async () => {
    const dir = tempDir();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'true' } });
    servers.push(server);
    const page1 = (await (await fetch(`${server.url}/api/v1/content?kind=news&limit=100`)).json()) as { items: { id: string; title: string }[] };
    const story = page1.items.find((i) => /sodium-ion/i.test(i.title)) ?? page1.items[0];
    const url = `${server.url}/chat?id=${story.id}`;
    const [ada, bob] = await adaAndBob(url);

    await ask(ada.page, 'What energy density did the cell reach in the independent tests?');
    for (const p of [ada.page, bob.page]) {
      const question = p.locator('salon-message-item[kind=user]', { hasText: 'What energy density' });
      await expect.poll(() => question.count()).toBe(1);
      expect(await question.locator('.badge').textContent()).toBe('asked the AI');
      const answer = p.locator('salon-message-item[kind=assistant][state=sent]');
      await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
      const sources = answer.locator('salon-source-list li');
      expect(await sources.count()).toBeGreaterThan(0);
      expect(await sources.first().locator('.n').textContent()).toBe('[1]');
      const href = await sources.first().locator('a').getAttribute('href');
      expect(href).toMatch(/^(https:\/\/|\/)/);
      expect((await shadowText(answer.locator('salon-markdown'))).length).toBeGreaterThan(20);
      // Seen while it was being written, in this window too.
      const seen = await renders(p);
      expect(seen.some((r) => r.state === 'streaming' && r.stage !== '')).toBe(true);
      expect(await p.locator('salon-message-item[state=streaming]').count()).toBe(0);
    }
    for (const p of [ada.page, bob.page]) {
      expect(await scanDom(p)).toEqual([]);
      expect((await probeResults(p)).violations).toEqual([]);
    }
  });

  it('shows each stage and the growing text in place, and labels a comment by its site and earlier discussion', async () => {
    const dir = tempDir();
    let store: Store | undefined;
    const sources: Source[] = [
      {
        n: 1,
        id: 'news_cell',
        kind: 'news',
        title: 'Cell reaches 168 Wh/kg',
        url: 'https://news.example/cell',
        sourceType: 'document',
        snippet: 'The cell reached 168 Wh/kg.',
      },
      {
        n: 2,
        id: 'news_cell#c1',
        kind: 'comment',
        title: 'Reddit comment by skeptic',
        url: 'https://www.reddit.com/r/batteries/comments/abc12/',
        sourceType: 'document',
        snippet: 'I doubt 4,100 cycles.',
      },
      { n: 3, id: 'thread_1', kind: 'thread', title: 'Earlier in this room', url: null, sourceType: 'conversation', snippet: 'Someone said it first.' },
    ];
    const assistant = new ScriptedAssistant(() => store!, sources);
    const server = await startServer(dir.dir, { overrides: { assistant } });
    servers.push(server);
    store = server.app.salon.store;
    await store.upsertItem(item('news_cell', { title: 'Cell reaches 168 Wh/kg' }));
    const url = `${server.url}/chat?id=news_cell`;
    const [ada, bob] = await adaAndBob(url);
    await ask(ada.page, 'How dense is the cell?');

    // Mid-answer, both windows show the stage and the text so far, in one busy item.
    await Promise.all(
      [ada.page, bob.page].map(async (p) => {
        const streaming = p.locator('salon-message-item[state=streaming]');
        await streaming.locator('[data-stage="writing"]').waitFor({ timeout: 5000 });
        await expect.poll(() => shadowText(streaming.locator('salon-markdown')), { timeout: 5000 }).toContain('168 Wh/kg');
        expect(await streaming.locator('article').getAttribute('aria-busy')).toBe('true');
      }),
    );
    await bob.page.screenshot({ path: join(ARTIFACTS, 'answer-streaming.png') });
    assistant.release();

    for (const p of [ada.page, bob.page]) {
      const answer = p.locator('salon-message-item[kind=assistant][state=sent]');
      await expect.poll(() => answer.count(), { timeout: 5000 }).toBe(1);
      expect(await answer.locator('salon-markdown strong').textContent()).toBe('168 Wh/kg');
      const rows = answer.locator('salon-source-list li');
      expect(await rows.count()).toBe(3);
      expect(await rows.nth(0).locator('a').getAttribute('href')).toBe('https://news.example/cell');
      expect(await rows.nth(0).locator('a').getAttribute('target')).toBe('_blank');
      expect(await rows.nth(0).locator('a').getAttribute('rel')).toBe('noopener noreferrer nofollow');
      expect(await rows.nth(1).locator('.tag').textContent()).toBe('Reddit comment');
      expect(await rows.nth(1).locator('a').getAttribute('href')).toBe('https://www.reddit.com/r/batteries/comments/abc12/');
      expect(await rows.nth(2).locator('.tag').textContent()).toBe('this discussion');
      expect(await p.locator('salon-message-item[state=streaming]').count()).toBe(0);
      // Every stage was shown in turn, and the text grew while streaming.
      const seen = (await renders(p)).filter((r) => r.state === 'streaming');
      const stages = seen.map((r) => r.stage).filter((st, i, all) => st && st !== all[i - 1]);
      expect(stages).toEqual(['searching', 'reranking', 'writing']);
      const sizes = new Set(seen.filter((r) => r.chars > 0).map((r) => r.chars));
      expect(sizes.size).toBeGreaterThanOrEqual(2);
    }
  });

  it('shows the messages a discussion source cites, loading older history until they appear', async () => {
    const dir = tempDir();
    const sources: Source[] = [];
    let store: Store | undefined;
    const assistant = new ScriptedAssistant(() => store!, sources);
    assistant.release();
    const server = await startServer(dir.dir, { overrides: { assistant } });
    servers.push(server);
    store = server.app.salon.store;
    await store.upsertItem(item('news_cell', { title: 'Cell reaches 168 Wh/kg' }));
    const thread = await store.ensureMainThread('news_cell');
    const cy = { id: 'u_cy', name: 'Cy', kind: 'user' as const };
    const { message: first } = await store.appendMessage({
      roomId: 'news_cell',
      threadId: thread.id,
      author: cy,
      text: 'My cousin Bob lost 4000 dollars on it',
    });
    // More than a welcome replays, so the cited message starts out of view.
    for (let i = 0; i < 45; i++) await store.appendMessage({ roomId: 'news_cell', threadId: thread.id, author: cy, text: `later message ${i}` });
    sources.push({
      n: 1,
      id: thread.id,
      kind: 'thread',
      title: 'From this discussion — Cy, 24 Nov 2026',
      url: null,
      sourceType: 'conversation',
      snippet: 'My cousin Bob lost 4000 dollars on it',
      messageIds: [first.id],
      authors: ['Cy'],
      from: first.ts,
      to: first.ts,
    });
    const [ada, bob] = await adaAndBob(`${server.url}/chat?id=news_cell`);
    await ask(ada.page, 'How much did Bob lose?');
    const answer = bob.page.locator('salon-message-item[kind=assistant][state=sent]');
    await expect.poll(() => answer.count(), { timeout: 10_000 }).toBe(1);
    const row = answer.locator('salon-source-list li');
    expect(await row.locator('.tag').textContent()).toBe('this discussion');
    const cited = bob.page.locator(`salon-message-item[data-id="${first.id}"]`);
    expect(await cited.count()).toBe(0);
    await row.locator('button.show').click();
    await cited.and(bob.page.locator('[highlight]')).waitFor({ timeout: 10_000 });
    expect(await cited.isVisible()).toBe(true);
    expect(await ada.page.locator(`salon-message-item[data-id="${first.id}"]`).count()).toBe(0);
  });

  it('says what the assistant’s limit is and when to ask again when a question is refused for it', async () => {
    const dir = tempDir();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'false', ASK_LIMIT_USER: '1' } });
    servers.push(server);
    await server.app.salon.store.upsertItem(item('news_lim', { title: 'Limits drill' }));
    const ada = await person(suite.browser, 'Ada');
    people.push(ada);
    await enter(ada, `${server.url}/chat?id=news_lim`, 1);
    await ask(ada.page, 'What is this about?');
    await expect.poll(() => ada.page.locator('salon-message-item[kind=assistant][state=sent]').count(), { timeout: 30_000 }).toBe(1);
    await say(ada.page, 'And what else?');
    const failed = ada.page.locator('salon-message-item[state=failed]');
    await expect.poll(() => failed.count()).toBe(1);
    const why = (await failed.locator('.failed').textContent())!;
    expect(why).toMatch(/the assistant takes 1 question a minute from each member; ask again in \d+ s/);
    expect(why).not.toContain('sending messages too fast');
    expect(await ada.page.locator('salon-connection-status [data-notice=ERR_RATE_LIMITED]').textContent()).toMatch(/ask again in \d+ s/);
  });

  it('asks privately: only the asker sees the question and the answer, and the room keeps neither', async () => {
    const dir = tempDir();
    const server = await startServer(dir.dir, { env: { SEED_DEMO: 'true' } });
    servers.push(server);
    const page1 = (await (await fetch(`${server.url}/api/v1/content?kind=news&limit=100`)).json()) as { items: { id: string; title: string }[] };
    const story = page1.items.find((i) => /sodium-ion/i.test(i.title)) ?? page1.items[0];
    const [ada, bob] = await adaAndBob(`${server.url}/chat?id=${story.id}`);
    await recordTypists(bob.page);

    await ada.page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
    const onlyMe = ada.page.locator('salon-composer input[name=private]');
    await ada.page.locator('salon-composer label.switch', { hasText: 'Only me' }).click();
    expect(await onlyMe.isChecked()).toBe(true);
    await say(ada.page, 'What energy density did the cell reach in the independent tests?');

    const question = ada.page.locator('salon-message-item[kind=user][only-you]', { hasText: 'What energy density' });
    await expect.poll(() => question.count()).toBe(1);
    expect(await question.locator('.badge').textContent()).toBe('asked the AI privately');
    const answer = ada.page.locator('salon-message-item[kind=assistant][only-you][state=sent]');
    await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
    expect(await answer.locator('.badge.private').textContent()).toBe('only you see this');
    expect((await shadowText(answer.locator('salon-markdown'))).length).toBeGreaterThan(20);

    // Bob's own message makes the round trip: anything the room was sent before it has arrived.
    await say(bob.page, 'anyone here?');
    await expect.poll(() => bob.page.locator('salon-message-item[state=sent]', { hasText: 'anyone here?' }).count()).toBe(1);
    expect(await bob.page.locator('salon-message-item', { hasText: 'What energy density' }).count()).toBe(0);
    expect(await bob.page.locator('salon-message-item[kind=assistant]').count()).toBe(0);
    const history = (await (await fetch(`${server.url}/api/v1/rooms/${story.id}/messages`)).json()) as { messages: { text: string }[] };
    expect(history.messages.map((m) => m.text)).toEqual(['anyone here?']);
    // Nor was Ada seen typing it; typing in the room again shows her (the record works).
    expect(await typists(bob.page)).not.toContain('Ada');
    await ada.page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
    await ada.page.locator('salon-composer textarea').fill('hello');
    await expect.poll(() => typists(bob.page)).toContain('Ada');
  });
});
