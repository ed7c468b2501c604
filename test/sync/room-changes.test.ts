/** The change log's `rooms` entries (`salon import`): a room's key, the seq to read after, and the runs of seqs an import made readable. */
import { describe, expect, it } from 'vitest';
import { roomChangeIds, roomChangesApplier } from '../../src/sync/room-changes.js';

function applied(ids: number[], live = ['news_1', 'news_2']): [string, number, unknown][] {
  const calls: [string, number, unknown][] = [];
  void roomChangesApplier({ liveRoomIds: () => live, catchUpLocal: (roomId, after, runs) => calls.push([roomId, after, runs]) }).applyStored(ids);
  return calls;
}

describe('rooms entries', () => {
  it('carry the runs of seqs an import made readable to the live room of their key', () => {
    const ids = roomChangeIds('news_1', 8_312, [
      [1, 20],
      [8_313, 8_330],
    ]);
    expect(ids.every((id) => Number.isSafeInteger(id) && id >= 0)).toBe(true);
    expect(applied(ids)).toEqual([
      [
        'news_1',
        8_312,
        [
          [1, 20],
          [8_313, 8_330],
        ],
      ],
    ]);
    // An entry of before (a pair a room) still catches its room up; a reader of pairs alone finds no room in the runs' pairs.
    expect(applied(roomChangeIds('news_2', 5))).toEqual([['news_2', 5, []]]);
    const pairsOnly = new Map<number, number>();
    for (let i = 0; i + 1 < ids.length; i += 2) pairsOnly.set(ids[i], ids[i + 1]);
    expect([...pairsOnly.keys()].filter((key) => key < 2 ** 48)).toEqual([ids[0]]);
  });

  it('skips a run whose end is missing or comes before its start', () => {
    const [key, after] = roomChangeIds('news_1', 3);
    expect(applied([key, after, key + 2 ** 48, 10, key + 2 ** 49, 4, key + 2 ** 49, 12])).toEqual([['news_1', 3, []]]);
  });
});
