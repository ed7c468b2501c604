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
