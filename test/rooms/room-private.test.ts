import { describe, expect, it } from 'vitest';
import { roomOptions } from '../../src/rooms/options.js';
import { Room, type RoomSession } from '../../src/rooms/room.js';

/** A room of `members` users (u_0 has two connections) whose sessions count how often their user id is read. */
function bigRoom(members: number) {
  const room = new Room('news_1', roomOptions(), () => {});
  const got = new Map<RoomSession, string[]>();
  let idReads = 0;
  const session = (userId: string, heldFramesFrom = 0): RoomSession => {
    const s: RoomSession = {
      get userId() {
        idReads++;
        return userId;
      },
      welcomedAhead: new Set(),
      heldFramesFrom,
      deliver: (f) => void got.get(s)!.push(f),
      offer: (f) => void got.get(s)!.push(f),
    };
    got.set(s, []);
    return s;
  };
  const first = session('u_0');
  const second = session('u_0', 5);
  room.join(first, 'Ann');
  room.join(second, 'Ann');
  for (let i = 1; i < members; i++) room.join(session(`u_${i}`), `M${i}`);
  idReads = 0;
  return { room, got, first, second, session, reads: () => idReads };
}

describe('frames for one member', () => {
  it('reach only that user’s connections without looking at every connection in the room', () => {
    const { room, got, first, second, reads } = bigRoom(2_000);
    room.sendToUser('u_0', 'private');
    expect(got.get(first)).toEqual(['private']);
    expect(got.get(second)).toEqual(['private']);
    expect([...got.values()].flat()).toHaveLength(2);
    // The old loop read the user id of each of the 2,001 connections.
    expect(reads()).toBeLessThan(10);
  });

  it('follow joins and leaves of the user’s connections', () => {
    const { room, got, first, second, session } = bigRoom(3);
    room.leave(first);
    room.sendToUser('u_0', 'a');
    expect(got.get(first)).toEqual([]);
    expect(got.get(second)).toEqual(['a']);
    room.leave(second);
    room.sendToUser('u_0', 'b');
    expect([...got.values()].flat()).toEqual(['a']);
    const again = session('u_0');
    room.join(again, 'Ann');
    room.sendToUser('u_0', 'c');
    expect(got.get(again)).toEqual(['c']);
  });

  it('holds back a held frame from the user’s connections joined after it', () => {
    const { room, got, first, second, reads } = bigRoom(2_000);
    room.sendHeldFrame('held', 3, 'u_0');
    expect(got.get(first)).toEqual(['held']);
    expect(got.get(second)).toEqual([]);
    expect([...got.values()].flat()).toHaveLength(1);
    expect(reads()).toBeLessThan(10);
  });
});
