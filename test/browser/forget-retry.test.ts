/** What the page makes of the server's answer to a pending "Forget them", and how long it waits before asking again. */
import { describe, expect, it } from 'vitest';
import { FORGET_RETRY_BASE_MS, FORGET_RETRY_CAP_MS, forgetOutcome, forgetRetryDelay } from '../../public/src/lib/forget-retry.js';

const refusal = (code: string, message = 'why') => ({ ok: false as const, code, message });

describe('forgetOutcome', () => {
  it('is done once the server answered, and waits for the next welcome when the connection lost the answer', () => {
    expect(forgetOutcome({ ok: true, text: 'Forgotten: …' })).toEqual({ kind: 'done' });
    expect(forgetOutcome(refusal('ERR_NETWORK'))).toEqual({ kind: 'at-welcome' });
    expect(forgetOutcome(refusal('ERR_NOT_JOINED'))).toEqual({ kind: 'at-welcome' });
  });

  it('sends again after the refusals that pass: the command budget, a failing or closing server, a crossing thread change, no answer', () => {
    for (const code of ['ERR_RATE_LIMITED', 'ERR_INTERNAL', 'ERR_THREAD_CHANGED', 'ERR_TIMEOUT']) {
      expect(forgetOutcome(refusal(code, 'Slow down'))).toEqual({ kind: 'retry', code, message: 'Slow down' });
    }
  });

  it('takes any other refusal, one it does not know included, as final, to be told to the member', () => {
    for (const code of ['ERR_BAD_MESSAGE', 'ERR_FORBIDDEN', 'ERR_THREAD_NOT_FOUND', 'ERR_SOMETHING_NEW']) {
      expect(forgetOutcome(refusal(code)).kind).toBe('refused');
    }
  });
});

describe('forgetRetryDelay', () => {
  it('grows with the refusals in a row, within the cap, and the count carried over a reload gives the same wait', () => {
    const top = () => 0.999_999;
    expect(forgetRetryDelay(1, () => 0)).toBe(FORGET_RETRY_BASE_MS / 2);
    expect(forgetRetryDelay(1, top)).toBeLessThanOrEqual(FORGET_RETRY_BASE_MS);
    expect(forgetRetryDelay(2, () => 0)).toBe(FORGET_RETRY_BASE_MS);
    for (let refusals = 1; refusals < 40; refusals++) expect(forgetRetryDelay(refusals, top)).toBeLessThanOrEqual(FORGET_RETRY_CAP_MS);
    expect(forgetRetryDelay(30, () => 0)).toBe(FORGET_RETRY_CAP_MS / 2);
  });
});
