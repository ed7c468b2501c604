/** "Forget them" requests waiting for the room, filed by who asked: the user id, which survives the token's renewal at every welcome. */
import { describe, expect, it } from 'vitest';
import { PendingForgets } from '../../public/src/lib/pending-forgets.js';
import { userIdOfToken } from '../../src/protocol/identity-token.js';
import { FakeStorage } from './fake-storage.js';

const ROOM = 'news_1';

describe('PendingForgets', () => {
  it("finds a request again by the user id of the renewed token the next page's welcome brings", () => {
    // Two tokens of one user, issued a day apart (every welcome renews the token, never the id).
    const first = 'v2.u_AAAAAAAAAAAAAAAA.1793491200.c2lnbmF0dXJlMQ';
    const renewed = 'v2.u_AAAAAAAAAAAAAAAA.1793577600.c2lnbmF0dXJlMg';
    const storage = new FakeStorage();
    new PendingForgets(storage).add(ROOM, userIdOfToken(first)!);

    const nextPage = new PendingForgets(storage);
    expect(nextPage.has(ROOM, userIdOfToken(renewed)!)).toBe(true);
    expect(nextPage.has(ROOM, userIdOfToken('v2.u_BBBBBBBBBBBBBBBB.1793577600.c2lnbmF0dXJlMw')!)).toBe(false);
    nextPage.remove(ROOM, 'u_AAAAAAAAAAAAAAAA');
    expect(storage.items.size).toBe(0);
  });

  it('counts an entry an older page filed under its token under that token’s user id', () => {
    const storage = new FakeStorage();
    const v1 = 'v1.u_AAAAAAAAAAAAAAAA.c2lnbmF0dXJl';
    storage.setItem(`salon.forget.${ROOM}`, JSON.stringify([v1]));
    const pending = new PendingForgets(storage);
    expect(pending.has(ROOM, 'u_AAAAAAAAAAAAAAAA')).toBe(true);
    expect(pending.has(ROOM, 'u_BBBBBBBBBBBBBBBB')).toBe(false);
    pending.remove(ROOM, 'u_AAAAAAAAAAAAAAAA');
    expect(storage.getItem(`salon.forget.${ROOM}`)).toBeNull();
  });
});

describe('PendingForgets, the waits of a refused request', () => {
  const ADA = 'u_AAAAAAAAAAAAAAAA';

  it('keeps the refusals and the wait across pages, so a reload neither sends early nor counts afresh', () => {
    const storage = new FakeStorage();
    const first = new PendingForgets(storage);
    first.add(ROOM, ADA);
    expect(first.retry(ROOM, ADA)).toEqual({ refusals: 0, retryAt: 0 });
    expect(first.refused(ROOM, ADA, 5_000)).toEqual({ refusals: 1, retryAt: 5_000 });

    const reloaded = new PendingForgets(storage);
    expect(reloaded.has(ROOM, ADA)).toBe(true);
    expect(reloaded.retry(ROOM, ADA)).toEqual({ refusals: 1, retryAt: 5_000 });
    expect(reloaded.refused(ROOM, ADA, 9_000)).toEqual({ refusals: 2, retryAt: 9_000 });
    // Pressed again while it waits: the count goes on.
    reloaded.add(ROOM, ADA);
    expect(new PendingForgets(storage).retry(ROOM, ADA)).toEqual({ refusals: 2, retryAt: 9_000 });

    // Answered (or refused for good): nothing is left of it, and a new press starts afresh.
    reloaded.remove(ROOM, ADA);
    expect(storage.items.size).toBe(0);
    reloaded.add(ROOM, ADA);
    expect(new PendingForgets(storage).retry(ROOM, ADA)).toEqual({ refusals: 0, retryAt: 0 });
  });

  it('keeps a request answered while another command is wanted, its refusals and wait started afresh, across pages', () => {
    const storage = new FakeStorage();
    const page = new PendingForgets(storage);
    page.add(ROOM, ADA);
    page.refused(ROOM, ADA, 5_000);
    page.followedBy(ROOM, ADA);
    const reloaded = new PendingForgets(storage);
    expect(reloaded.has(ROOM, ADA)).toBe(true);
    expect(reloaded.retry(ROOM, ADA)).toEqual({ refusals: 0, retryAt: 0 });

    // Another page of the browser took the entry meanwhile (its own command answered): filed again.
    reloaded.remove(ROOM, ADA);
    page.followedBy(ROOM, ADA);
    expect(new PendingForgets(storage).has(ROOM, ADA)).toBe(true);
  });

  it('keeps the count in the page when storage refuses it', () => {
    const refusing = new FakeStorage();
    refusing.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    const pending = new PendingForgets(refusing);
    pending.add(ROOM, ADA);
    pending.refused(ROOM, ADA, 5_000);
    expect(pending.retry(ROOM, ADA)).toEqual({ refusals: 1, retryAt: 5_000 });
  });

  it('ignores a tampered wait rather than trusting it', () => {
    const storage = new FakeStorage();
    storage.setItem(`salon.forget.${ROOM}`, JSON.stringify([ADA, 'u_BBBBBBBBBBBBBBBB', 'u_CCCCCCCCCCCCCCCC']));
    storage.setItem(
      `salon.forget-retry.${ROOM}`,
      JSON.stringify({
        [ADA]: { refusals: -3, retryAt: 1 },
        u_BBBBBBBBBBBBBBBB: { refusals: 2, retryAt: 'soon' },
        u_CCCCCCCCCCCCCCCC: { refusals: 2, retryAt: 7 },
      }),
    );
    const pending = new PendingForgets(storage);
    expect(pending.retry(ROOM, ADA)).toEqual({ refusals: 0, retryAt: 0 });
    expect(pending.retry(ROOM, 'u_BBBBBBBBBBBBBBBB')).toEqual({ refusals: 0, retryAt: 0 });
    expect(pending.retry(ROOM, 'u_CCCCCCCCCCCCCCCC')).toEqual({ refusals: 2, retryAt: 7 });
    storage.setItem(`salon.forget-retry.${ROOM}`, '[1,2]');
    expect(new PendingForgets(storage).retry(ROOM, 'u_CCCCCCCCCCCCCCCC')).toEqual({ refusals: 0, retryAt: 0 });
  });
});
