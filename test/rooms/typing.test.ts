/**
 * The typing throttle: toggling `active` on and off gets no more "started" frames out than keeping it
 * on, a "stopped" goes out only after a "started", and one room forwards a bounded number of starts
 * a second however many typists (addresses) it has. Time is fake: nothing here waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import type { RoomOptions } from '../../src/rooms/options.js';
import type { Session } from '../../src/rooms/session.js';
import { TypingTracker } from '../../src/rooms/typing.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, until } from './helpers.js';

const FORWARD = 10_000;
const EXPIRE = 15_000;

describe('TypingTracker', () => {
  it('re-announces a typist who keeps refreshing once per interval', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, 0);
    expect(t.update('u', true, 0)).toBe(true);
    expect(t.update('u', true, 3_000)).toBe(false);
    expect(t.update('u', true, FORWARD)).toBe(true);
    expect(t.update('u', false, FORWARD + 1)).toBe(true);
    expect(t.update('u', false, FORWARD + 2)).toBe(false);
  });

  it('forwards one start per interval however often the typist toggles, and a stop only after a start', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, 0);
    expect(t.update('u', true, 0)).toBe(true);
    expect(t.update('u', false, 1)).toBe(true);
    for (let i = 2; i < 100; i += 2) {
      expect(t.update('u', true, i)).toBe(false);
      expect(t.update('u', false, i + 1)).toBe(false);
    }
    expect(t.update('u', true, FORWARD)).toBe(true);
    expect(t.update('u', false, FORWARD + 1)).toBe(true);
  });

  it('shows a start held back inside the interval at the first refresh past it', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, 0);
    t.update('u', true, 0);
    t.update('u', false, 2_000);
    expect(t.update('u', true, 3_000)).toBe(false);
    expect(t.update('u', true, 6_000)).toBe(false);
    expect(t.update('u', true, 10_000)).toBe(true);
    expect(t.update('u', false, 11_000)).toBe(true);
  });

  it('counts from now when the clock is set back, rather than waiting for it to catch up', () => {
    const HOUR = 3_600_000;
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, HOUR);
    expect(t.update('u', true, HOUR)).toBe(true);
    // The clock goes back an hour: the typist still stops showing expireMs after its last refresh.
    expect(t.expire(0)).toEqual([]);
    expect(t.expire(EXPIRE)).toEqual(['u']);
    // And a start goes out forwardMs after the last, counted from the clock's new time.
    const v = new TypingTracker(FORWARD, EXPIRE, 1000, HOUR);
    expect(v.update('v', true, HOUR)).toBe(true);
    expect(v.update('v', true, 0)).toBe(false);
    expect(v.update('v', true, FORWARD)).toBe(true);
  });

  it('lets the start after a sent message out at once, but not the start after leaving', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, 0);
    t.update('u', true, 0);
    expect(t.sent('u')).toBe(true);
    expect(t.update('u', true, 1)).toBe(true);
    expect(t.clear('u', 2)).toBe(true);
    expect(t.update('u', true, 3)).toBe(false);
    expect(t.clear('u', 4)).toBe(false);
    expect(t.sent('nobody')).toBe(false);
  });

  it('drops starts past the room budget, and then never forwards their stops', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 2, 0);
    const started = Array.from({ length: 10 }, (_, i) => t.update(`u${i}`, true, 0));
    expect(started.filter(Boolean)).toHaveLength(4);
    expect(t.update('u9', false, 1)).toBe(false);
    expect(t.update('u0', false, 1)).toBe(true);
    // A refresh after the budget refilled shows a typist whose start was dropped.
    expect(t.update('u8', true, 500)).toBe(true);
  });

  it('expires silent typists, forgets stopped ones after the interval, and so stays bounded', () => {
    const t = new TypingTracker(FORWARD, EXPIRE, 1000, 0);
    t.update('u', true, 0);
    t.update('u', false, 1_000);
    t.update('v', true, 2_000);
    t.update('w', true, 5_000);
    expect(t.size).toBe(3);
    expect(t.nextExpiry()).toBe(10_000);
    expect(t.expire(10_000)).toEqual([]);
    expect(t.size).toBe(2);
    expect(t.nextExpiry()).toBe(17_000);
    expect(t.expire(16_999)).toEqual([]);
    expect(t.expire(17_000)).toEqual(['v']);
    expect(t.size).toBe(1);
    expect(t.clear('w', 18_000)).toBe(true);
    expect(t.expire(18_000)).toEqual([]);
    expect(t.size).toBe(0);
    expect(t.nextExpiry()).toBeNull();

    // A thousand one-off typists leave nothing behind once their interval passed.
    for (let i = 0; i < 1000; i++) {
      t.update(`x${i}`, true, 40_000);
      t.update(`x${i}`, false, 40_001);
    }
    t.expire(40_000 + FORWARD);
    expect(t.size).toBe(0);
  });
});

describe('typing through the hub', () => {
  let hub: RoomHub;
  let closeStore: () => Promise<void>;
  let n = 0;

  const makeHub = (options: Partial<RoomOptions> = {}) => {
    const temp = tempStore();
    closeStore = temp.close;
    hub = new RoomHub({
      store: temp.store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      resolver: async (id) => (id === 'news_1' ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      options: { maxConnectionsPerIp: 100_000, typingForwardMs: FORWARD, typingExpireMs: EXPIRE, ...options },
    });
  };

  beforeEach(() => makeHub());
  afterEach(async () => {
    vi.useRealTimers();
    await hub.close();
    await closeStore();
  });

  async function member(name: string): Promise<{ conn: FakeConnection; session: Session }> {
    const conn = new FakeConnection(`c${++n}`);
    // One address each: the per-address frame rate is not what is under test.
    const session = hub.connect(conn, { roomId: 'news_1', ip: `10.0.${n >> 8}.${n & 255}` })!;
    session.receive(JSON.stringify({ type: 'hello', name }));
    await until(() => conn.frames('welcome').length === 1);
    return { conn, session };
  }

  const typing = (m: { session: Session }, active: boolean) => m.session.receive(JSON.stringify({ type: 'typing', active }));

  it('turns on/off toggles from several typists into one start and one stop each per interval', async () => {
    const watcher = await member('Watcher');
    const typists = [await member('A'), await member('B'), await member('C')];
    vi.useFakeTimers({ now: Date.now() });
    // As fast as the per-socket frame rate allows, for well under one interval.
    for (let round = 0; round < 5; round++) {
      for (const t of typists) {
        typing(t, true);
        typing(t, false);
      }
      vi.advanceTimersByTime(400);
    }
    expect(watcher.conn.frames('typing').map((f) => `${f.user.name}:${f.active}`)).toEqual(['A:true', 'A:false', 'B:true', 'B:false', 'C:true', 'C:false']);
    expect(typists.flatMap((t) => t.conn.frames('error'))).toEqual([]);

    vi.advanceTimersByTime(FORWARD - 5 * 400);
    typing(typists[0], true);
    expect(watcher.conn.frames('typing').slice(6)).toMatchObject([{ user: { name: 'A' }, active: true }]);
  });

  it('still shows a typist at once, hides them when they send, and expires them when they fall silent', async () => {
    const watcher = await member('Watcher');
    const ana = await member('Ana');
    vi.useFakeTimers({ now: Date.now() });
    typing(ana, true);
    expect(watcher.conn.frames('typing')).toMatchObject([{ user: { name: 'Ana' }, active: true }]);
    ana.session.receive(JSON.stringify({ type: 'say', text: 'hi', clientId: 'c1' }));
    await vi.waitFor(() => expect(watcher.conn.frames('message')).toHaveLength(1));
    expect(watcher.conn.frames('typing').map((f) => f.active)).toEqual([true, false]);
    // Her next message is shown at once: the one she sent paid for it out of the room's message rate.
    typing(ana, true);
    expect(watcher.conn.frames('typing').map((f) => f.active)).toEqual([true, false, true]);
    vi.advanceTimersByTime(EXPIRE);
    expect(watcher.conn.frames('typing').map((f) => f.active)).toEqual([true, false, true, false]);
    expect(ana.conn.frames('typing')).toEqual([]);
  });

  it('forwards a bounded number of starts a second into one room, dropping the rest without errors', async () => {
    vi.useRealTimers();
    await hub.close();
    await closeStore();
    makeHub({ roomTypingPerSecond: 2 });
    const watcher = await member('Watcher');
    const typists = [];
    for (let i = 0; i < 10; i++) typists.push(await member(`T${i}`));
    vi.useFakeTimers({ now: Date.now() });
    for (const t of typists) typing(t, true);
    const shown = watcher.conn.frames('typing').map((f) => f.user.name);
    expect(shown).toEqual(['T0', 'T1', 'T2', 'T3']);
    for (const t of typists) typing(t, false);
    expect(
      watcher.conn
        .frames('typing')
        .filter((f) => !f.active)
        .map((f) => f.user.name),
    ).toEqual(shown);
    expect(typists.flatMap((t) => t.conn.frames('error'))).toEqual([]);

    vi.advanceTimersByTime(1_000);
    for (const t of typists.slice(4)) typing(t, true);
    expect(
      watcher.conn
        .frames('typing')
        .slice(8)
        .map((f) => f.user.name),
    ).toEqual(['T4', 'T5']);
  });
});
