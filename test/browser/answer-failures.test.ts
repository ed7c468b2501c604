import type { Page, WebSocketRoute } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs, say, shadowText } from './harness.js';

// Two answers written at once in a room (another member's, and the page's own question's): the
// failure of one ends only its progress and partial text; the other goes on streaming. An answer
// a failure set aside that speaks again is not news for "New messages ↓": it was shown before.

/** Routes the page's room socket to the server, except the questions it asks, which the test answers itself. */
async function routeQuestions(page: Page): Promise<{ socket(): WebSocketRoute; asked: string[] }> {
  let route: WebSocketRoute | undefined;
  const asked: string[] = [];
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    route = ws;
    const server = ws.connectToServer();
    ws.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; text?: string; clientId?: string };
      if ((frame.type === 'say' && frame.text?.startsWith('@ai ')) || frame.type === 'ask') asked.push(frame.clientId!);
      else server.send(m);
    });
    server.onMessage((m) => ws.send(m));
  });
  return { socket: () => route!, asked };
}

const answer = (page: Page, id: string) => page.locator(`salon-message-item[data-answer="${id}"]`);

describeBrowser('an assistant failure among answers in progress', () => {
  const suite = browserSuite({ server: true });

  it("ends only the failed question's answer, and a refused ask ends none", async () => {
    await suite.server.app.salon.store.upsertItem(item('news_af', { title: 'Two answers at once' }));
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const routed = await routeQuestions(page);
      await page.goto(`${suite.server.url}/chat?id=news_af`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      const send = (frame: object) => routed.socket().send(JSON.stringify(frame));

      // Bob's answer is being written when Ada asks; hers starts after.
      send({ type: 'assistant.progress', id: 'ans_bob', stage: 'searching' });
      send({ type: 'assistant.delta', id: 'ans_bob', text: 'Bob is told ' });
      await answer(page, 'ans_bob').waitFor();
      await say(page, '@ai what happened next?');
      await expect.poll(() => routed.asked.length).toBe(1);
      send({ type: 'assistant.progress', id: 'ans_ada', stage: 'searching' });
      await answer(page, 'ans_ada').waitFor();

      send({ type: 'error', code: 'ERR_AI_TIMEOUT', message: 'The assistant took too long.', clientId: routed.asked[0] });
      await expect.poll(() => answer(page, 'ans_ada').count()).toBe(0);
      expect(await answer(page, 'ans_bob').count()).toBe(1);
      // Another question refused before any answer to it started ends nothing either.
      send({ type: 'error', code: 'ERR_ASSISTANT_BUSY', message: 'busy', clientId: 'someone-else' });
      send({ type: 'assistant.delta', id: 'ans_bob', text: 'the rest.' });
      await expect.poll(() => shadowText(answer(page, 'ans_bob').locator('salon-markdown'))).toContain('Bob is told the rest.');
      expect(await answer(page, 'ans_ada').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('does not count an answer set aside and speaking again as new below a reader up the list; a new answer counts', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_an', { title: 'Answers come back' }));
    const thread = await store.ensureMainThread('news_an');
    for (let i = 1; i <= 30; i++)
      await store.appendMessage({
        roomId: 'news_an',
        threadId: thread.id,
        author: { id: 'u_old', name: 'Old', kind: 'user' },
        text: `old ${i}\n\nsaid at length`,
      });
    const { context, page } = await openAs(suite.browser, 'Ada', { width: 1200, height: 700 });
    try {
      const routed = await routeQuestions(page);
      await page.goto(`${suite.server.url}/chat?id=news_an`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      const send = (frame: object) => routed.socket().send(JSON.stringify(frame));
      const jump = page.locator('salon-message-list button.jump');
      const settled = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

      // Bob's answer starts while the reader is at the bottom; then they scroll up the list.
      send({ type: 'assistant.progress', id: 'ans_bob', stage: 'searching' });
      await answer(page, 'ans_bob').waitFor();
      await page.locator('salon-message-list .scroller').evaluate((el) => (el.scrollTop = 0));
      await settled();
      expect(await page.locator('salon-message-list .scroller').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeGreaterThan(96);
      expect(await jump.count()).toBe(0);

      // A failure of an HTTP ask (no clientId) sets it aside; it speaks again: not news.
      send({ type: 'error', code: 'ERR_AI_TIMEOUT', message: 'The assistant took too long.' });
      await expect.poll(() => answer(page, 'ans_bob').count()).toBe(0);
      send({ type: 'assistant.delta', id: 'ans_bob', text: 'Bob is told.' });
      await answer(page, 'ans_bob').waitFor({ state: 'attached' });
      await settled();
      expect(await jump.count()).toBe(0);

      // An answer never shown before is.
      send({ type: 'assistant.progress', id: 'ans_new', stage: 'searching' });
      await page.getByRole('button', { name: 'New messages ↓' }).waitFor();
    } finally {
      await context.close();
    }
  });
});
