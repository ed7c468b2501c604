/** The headline's clause that tells how much something changed (ai/local/headline-change.ts). */
import { describe, expect, it } from 'vitest';
import { headlineChange, tellsChangeOf } from '../../src/ai/local/headline-change.js';

const TRIAGE = 'AI triage pilot cuts emergency waits by 22 minutes in Vessbridge; nurses warn on staffing';
const FEES = "Corvid's 'Lantern' upgrade cuts rollup fees by about 80%; one client misses blocks";

describe('headlineChange', () => {
  it('gives the clause telling a change with a number and every other term asked', () => {
    for (const question of ['How much did waits drop?', 'how much did waits fall', 'How much shorter were the waits?', 'By how much did the pilot cut waits?'])
      expect(headlineChange(question, TRIAGE)).toBe('AI triage pilot cuts emergency waits by 22 minutes in Vessbridge');
    expect(headlineChange('How much cheaper are fees?', FEES)).toBe("Corvid's 'Lantern' upgrade cuts rollup fees by about 80%");
    expect(headlineChange('How much did prices rise?', 'Bread — prices rise 12% in a year')).toBe('prices rise 12% in a year');
  });

  it('gives nothing for a question of no change, of a thing the clause does not name, or a clause without a number', () => {
    expect(headlineChange('How long did patients wait?', TRIAGE)).toBeNull();
    expect(headlineChange('How much did staffing fall?', TRIAGE)).toBeNull();
    expect(headlineChange('What happened to waits?', TRIAGE)).toBeNull();
    expect(headlineChange('How many blocks were missed?', FEES)).toBeNull();
    expect(headlineChange('How much did the fee fall on Skylark?', FEES)).toBeNull();
    expect(headlineChange('How much did waits drop?', 'Triage pilot cuts emergency waits sharply')).toBeNull();
    // The clause's only number is the one the question names.
    expect(headlineChange('How much did waits drop in 2026?', 'Waits drop in 2026')).toBeNull();
  });
});

describe('tellsChangeOf', () => {
  const asked = new Set(['fee', 'fall']);
  it('holds a verb of change, an asked thing and a number', () => {
    expect(tellsChangeOf('The median fee fell from $0.042 to $0.007.', asked)).toBe(true);
    expect(tellsChangeOf('The median fee fell sharply.', asked)).toBe(false);
    expect(tellsChangeOf('Blob space fell from 40% to 12%.', asked)).toBe(false);
    // A comparative alone tells another difference.
    expect(tellsChangeOf('Patients who needed help waited 6 minutes longer.', new Set(['wait', 'shorter']))).toBe(false);
  });
});
