/** Reading LoCoMo files for the memory evaluations: a malformed file is refused whole, naming the sample. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSamples, roomIdOf, tokenRecall, turnsOf } from '../../bench/locomo.js';
import { tempDir } from '../helpers.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

const turn = (dia_id: string, text: string) => ({ speaker: 'Ann', dia_id, text });
const sample = (id: string, turns: unknown = [turn('D1:1', 'Hello'), turn('D1:2', 'Bye')]) => ({
  sample_id: id,
  conversation: { speaker_a: 'Ann', speaker_b: 'Bob', session_1: turns, session_1_date_time: '1:56 pm on 8 May, 2023' },
  qa: [],
});

function file(content: unknown): string {
  const { dir, cleanup } = tempDir('salon-locomo-');
  closers.push(cleanup);
  const path = join(dir, 'locomo.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('readSamples', () => {
  it('reads a well-formed file', () => {
    const [s] = readSamples(file([sample('conv-1')]));
    expect(roomIdOf(s)).toBe('post_conv-1');
    expect(turnsOf(s).map((t) => t.diaId)).toEqual(['D1:1', 'D1:2']);
  });

  it('refuses two samples that would share a room (each answered from the other’s turns), naming both', () => {
    const path = file([sample('conv-1'), sample('conv 1'), sample('conv_1')]);
    expect(() => readSamples(path)).toThrow(`${path}: sample 2 (conv_1) and sample "conv 1" would share room post_conv_1`);
  });

  it('refuses a turn id given twice, a session that is not a list and a sample without id or questions', () => {
    expect(() => readSamples(file([sample('a', [turn('D1:1', 'x'), turn('D1:1', 'y')])]))).toThrow(/sample 0 \(a\): dia_id D1:1 is given to two turns/);
    expect(() => readSamples(file([sample('a', { text: 'no list' })]))).toThrow(/sample 0 \(a\): session_1 is not a list of turns/);
    expect(() => readSamples(file([sample('a', [{ speaker: 'Ann', text: 'x' }])]))).toThrow(/a turn of session_1 has no dia_id/);
    expect(() => readSamples(file([sample('a'), { conversation: {} }]))).toThrow(/sample 1 has no sample_id/);
    expect(() => readSamples(file([{ ...sample('a'), qa: undefined }]))).toThrow(/sample 0 \(a\): qa is not a list/);
  });
});

describe('tokenRecall', () => {
  it('gives the share of the expected answer’s words an answer holds, in any order and case, without articles or punctuation', () => {
    expect(tokenRecall('Caroline, on 8 May 2023: I went to the LGBTQ support group.', '7 May 2023')).toBeCloseTo(2 / 3);
    expect(tokenRecall('She went on May 7, 2023.', '7 May 2023')).toBe(1);
    expect(tokenRecall('Adoption agencies, she said.', 'The adoption agencies')).toBe(1);
    expect(tokenRecall('Nothing here.', 'Sweden')).toBe(0);
    expect(tokenRecall('Anything', '')).toBe(0);
  });
});
