// mapInTurns (src/slice-turns.ts): a long check of a batch lets the event loop turn.
import { describe, expect, it } from 'vitest';
import { mapInTurns } from '../src/slice-turns.js';
import { withTurnsDue } from './helpers.js';

describe('mapInTurns', () => {
  it('maps in order, with indexes, the event loop turning between two values once their time is spent', async () => {
    const ran: string[] = [];
    let turns = 0;
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    const out = await withTurnsDue(async () => {
      setImmediate(turn);
      return mapInTurns(['a', 'b', 'c'], (value, i) => {
        ran.push(`${value}${i}@${turns}`);
        return value.toUpperCase();
      });
    });
    turning = false;
    expect(out).toEqual(['A', 'B', 'C']);
    // Each value in a later turn than the one before it.
    const at = ran.map((r) => Number(r.split('@')[1]));
    expect(at[1]).toBeGreaterThan(at[0]);
    expect(at[2]).toBeGreaterThan(at[1]);
    expect(ran.map((r) => r.split('@')[0])).toEqual(['a0', 'b1', 'c2']);
  });
});
