import { describe, expect, it } from 'vitest';
import { AnswersInProgress } from '../../public/src/lib/answers-in-progress.js';

const ids = (a: AnswersInProgress) => a.list.map((x) => x.id);
const write = (a: AnswersInProgress, id: string, text: string) => a.update(id, (x) => ({ ...x, stage: 'writing', text: x.text + text }));

describe('AnswersInProgress', () => {
  it("ends only the failed question's answer: one first seen before the question went out goes on", () => {
    const a = new AnswersInProgress();
    a.replace([{ id: 'ans_bob', stage: 'writing', text: 'Bob' }]);
    a.questionOut('q_ada');
    a.update('ans_ada', (x) => x);
    expect(ids(a)).toEqual(['ans_bob', 'ans_ada']);
    a.failed('ERR_AI_TIMEOUT', 'q_ada');
    expect(ids(a)).toEqual(['ans_bob']);
    write(a, 'ans_bob', "'s answer");
    expect(a.list).toEqual([{ id: 'ans_bob', stage: 'writing', text: "Bob's answer" }]);
  });

  it("uses another member's question as seen, and ends no answer for a refusal or a question no answer followed", () => {
    const a = new AnswersInProgress();
    a.update('ans_1', (x) => x);
    a.questionOut('q_eve');
    a.failed('ERR_ASSISTANT_BUSY', undefined);
    a.failed('ERR_AI_UNAVAILABLE', 'q_eve');
    a.failed('ERR_RATE_LIMITED', 'q_eve');
    expect(ids(a)).toEqual(['ans_1']);
  });

  it('sets aside every answer a failure may concern, and brings back with its text one that speaks again', () => {
    const a = new AnswersInProgress();
    a.questionOut('q_1');
    write(a, 'ans_x', 'first ');
    write(a, 'ans_y', 'second ');
    // Both started after the question: either may be its answer.
    a.failed('ERR_AI_BAD_RESPONSE', 'q_1');
    expect(ids(a)).toEqual([]);
    write(a, 'ans_y', 'goes on');
    expect(a.list).toEqual([{ id: 'ans_y', stage: 'writing', text: 'second goes on' }]);
    // An error without a clientId (an HTTP ask's) may concern any answer; the done one is gone for good.
    a.failed('ERR_ASSISTANT_FAILED', undefined);
    a.finished(['m_1', 'ans_y']);
    a.update('ans_y', (x) => x);
    expect(a.list).toEqual([{ id: 'ans_y', stage: 'searching', text: '' }]);
  });

  it('counts the first time a question went out: a resend does not make an earlier answer look later', () => {
    const a = new AnswersInProgress();
    a.questionOut('q_1');
    a.update('ans_1', (x) => x);
    a.questionOut('q_1');
    a.failed('ERR_AI_TIMEOUT', 'q_1');
    expect(ids(a)).toEqual([]);
  });
});

describe('AnswersInProgress in a long-open tab', () => {
  it('keeps nothing of the answers that ended: a socket open for days does not grow with every answer written in it', () => {
    const a = new AnswersInProgress();
    a.replace([]);
    for (let i = 0; i < 1_000; i++) {
      a.questionOut(`q_${i}`);
      write(a, `ans_${i}`, 'text');
      a.finished([`ans_${i}`, `q_${i}`]);
    }
    expect(ids(a)).toEqual([]);
    const kept = a as unknown as { firstSeen: Map<string, number>; aside: Map<string, unknown>; questions: Map<string, number> };
    expect(kept.firstSeen.size).toBe(0);
    expect(kept.aside.size).toBe(0);
    expect(kept.questions.size).toBeLessThanOrEqual(200);
    // What is still being written is still told from what came before it.
    a.questionOut('q_last');
    write(a, 'ans_last', 'on its way');
    a.failed('ERR_AI_TIMEOUT', 'q_last');
    expect(ids(a)).toEqual([]);
  });
});
