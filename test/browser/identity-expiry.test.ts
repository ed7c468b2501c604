/** The browser and expiring identity tokens: it keeps the renewed token of every welcome, and recovers from an expired one. */
import type { Browser, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { parseIdentityToken } from '../../src/protocol/identity-token.js';
import { Identity, loadOrCreateSecret } from '../../src/rooms/identity.js';
import { browserSuite, describeBrowser, item, openAs, type Person as BasePerson } from './harness.js';

const DAY_MS = 86_400_000;
const ROOM = 'news_tokens';
const OTHER_ROOM = 'news_tokens_other';

/** A person whose page records the token of every `hello` it sends, and the rooms it sent `/forget private` in. */
interface Person extends BasePerson {
  helloTokens: (string | undefined)[];
  forgetsIn: string[];
}

async function person(browser: Browser, name: string): Promise<Person> {
  const { context, page } = await openAs(browser, name);
  const helloTokens: (string | undefined)[] = [];
  const forgetsIn: string[] = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const frame = JSON.parse(String(f.payload)) as { type: string; token?: string; text?: string };
      if (frame.type === 'hello') helloTokens.push(frame.token);
      if (frame.type === 'say' && frame.text === '/forget private') forgetsIn.push(decodeURIComponent(ws.url().split('/').pop()!));
    }),
  );
  return { context, page, helloTokens, forgetsIn };
}

const savedToken = (page: Page) => page.evaluate(() => localStorage.getItem('salon.token'));
const saveToken = (page: Page, token: string) => page.evaluate((t) => localStorage.setItem('salon.token', t), token);

/** The user id and issue time of a v2 token. */
function v2(token: string | null): { userId: string; issuedAt: number } {
  const parts = token ? parseIdentityToken(token) : null;
  if (parts?.version !== 2) throw new Error(`not a v2 token: ${token}`);
  return parts;
}

describeBrowser('identity tokens that expire', () => {
  const suite = browserSuite({ server: true });
  const url = () => `${suite.server.url}/chat?id=${ROOM}`;
  /** A token for `userId` signed with the server's secret `daysAgo` days ago (the test's clock, no waiting). */
  const tokenFrom = (userId: string, daysAgo: number) =>
    new Identity(loadOrCreateSecret(suite.dataDir), { now: () => Date.now() - daysAgo * DAY_MS }).renew(userId);
  const enter = async (page: Page) => page.locator('salon-member-list li:has(.you)').waitFor();

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item(ROOM, { title: 'Tokens that expire' }));
    await suite.server.app.salon.store.upsertItem(item(OTHER_ROOM, { title: 'Another room' }));
  });

  it('keeps the renewed token of every welcome: the same id, a later issue time', async () => {
    const ada = await person(suite.browser, 'Ada');
    try {
      await ada.page.goto(url());
      await enter(ada.page);
      const { userId } = v2(await savedToken(ada.page));

      // A token ten days old, as the browser would hold after ten days away: the reload's welcome renews it.
      const tenDaysOld = tokenFrom(userId, 10);
      await saveToken(ada.page, tenDaysOld);
      await ada.page.reload();
      await enter(ada.page);
      expect(ada.helloTokens.at(-1)).toBe(tenDaysOld);
      await expect.poll(() => savedToken(ada.page)).not.toBe(tenDaysOld);
      const renewed = v2(await savedToken(ada.page));
      expect(renewed.userId).toBe(userId);
      expect(renewed.issuedAt - v2(tenDaysOld).issuedAt).toBeGreaterThanOrEqual(10 * 86_400);

      // Not only a page's first welcome: a rejoin in the same page (a rename) renews it again.
      const twentyDaysOld = tokenFrom(userId, 20);
      await saveToken(ada.page, twentyDaysOld);
      await ada.page.getByRole('button', { name: 'Change your name' }).click();
      await ada.page.locator('salon-member-list #name').fill('Ada Lovelace');
      await ada.page.locator('salon-member-list').getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => ada.page.locator('salon-member-list li:has(.you) .name').textContent()).toBe('Ada Lovelace');
      expect(ada.helloTokens.at(-1)).toBe(twentyDaysOld);
      await expect.poll(() => savedToken(ada.page)).not.toBe(twentyDaysOld);
      expect(v2(await savedToken(ada.page)).userId).toBe(userId);
      expect(await ada.page.locator('salon-connection-status [data-notice]').count()).toBe(0);
    } finally {
      await ada.context.close();
    }
  });

  it('drops an expired token, joins as a new member and says plainly that the earlier identity expired', async () => {
    const bob = await person(suite.browser, 'Bob');
    try {
      await bob.page.goto(url());
      await enter(bob.page);
      const { userId } = v2(await savedToken(bob.page));

      const expired = tokenFrom(userId, 31);
      await saveToken(bob.page, expired);
      await bob.page.reload();
      const notice = bob.page.locator('salon-connection-status [data-notice=ERR_TOKEN_EXPIRED]');
      await notice.waitFor();
      expect(await notice.locator('span').first().textContent()).toBe(
        'Your earlier identity in this browser expired after going unused for a long time, so you have joined with a new one. The private questions you asked under it stay with the old identity.',
      );
      await enter(bob.page);
      // Refused with its expired token, the page asked again without one, and keeps the new identity's token.
      expect(bob.helloTokens.slice(-2)).toEqual([expired, undefined]);
      const fresh = v2(await savedToken(bob.page));
      expect(fresh.userId).not.toBe(userId);
      const members = bob.page.locator('salon-member-list');
      await members.locator('.count[data-count="1"]').waitFor();
      // The notice stays after the rejoin until the member dismisses it.
      expect(await notice.count()).toBe(1);
    } finally {
      await bob.context.close();
    }
  });

  it('sends a "Forget them" an older page left pending under its token once another room\'s welcome renewed the token', async () => {
    const cy = await person(suite.browser, 'Cy');
    try {
      await cy.page.goto(url());
      await enter(cy.page);
      const { userId } = v2(await savedToken(cy.page));
      // What a page before renewal left behind: a request for the other room, filed under the token it had.
      const old = tokenFrom(userId, 5);
      await saveToken(cy.page, old);
      await cy.page.evaluate(([key, token]) => localStorage.setItem(key, JSON.stringify([token])), [`salon.forget.${OTHER_ROOM}`, old]);
      await cy.page.reload();
      await enter(cy.page);
      await expect.poll(() => savedToken(cy.page)).not.toBe(old);
      expect(cy.forgetsIn).toEqual([]);

      await cy.page.goto(`${suite.server.url}/chat?id=${OTHER_ROOM}`);
      await enter(cy.page);
      await expect.poll(() => cy.forgetsIn).toEqual([OTHER_ROOM]);
      await expect.poll(() => cy.page.evaluate((key) => localStorage.getItem(key), `salon.forget.${OTHER_ROOM}`)).toBeNull();
    } finally {
      await cy.context.close();
    }
  });
});
