/** What the page makes of the server's answer to a pending "Forget them", and how long it waits before asking again. */
import { describe, expect, it, vi } from 'vitest';
import { CommandReplies } from '../../public/src/lib/command-replies.js';
import {
  FORGET_RETRY_BASE_MS,
  FORGET_RETRY_CAP_MS,
  FORGET_RETRY_MIN_MS,
  forgetOutcome,
  forgetRetryDelay,
  isForgetCommand,
} from '../../public/src/lib/forget-retry.js';
import { parseCommand } from '../../src/rooms/commands.js';
import { PendingForgets } from '../../public/src/lib/pending-forgets.js';
import { parseUntrustedJson } from '../../public/src/lib/untrusted-json.js';
import type { ErrorFrame } from '../../src/protocol/messages.js';
import { FakeStorage } from './fake-storage.js';

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

describe('the server’s retryAfterMs', () => {
  const randoms = [() => 0, () => 0.5, () => 0.999_999];

  it('is the wait when a rate limit gives it: from the error frame, through the reply, to when the forget is sent again', async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    try {
      for (const random of randoms) {
        const replies = new CommandReplies();
        const answer = replies.expect('f1');
        const raw = '{"type":"error","code":"ERR_RATE_LIMITED","message":"Slow down","clientId":"f1","retryAfterMs":7250}';
        const frame = parseUntrustedJson(raw) as ErrorFrame;
        expect(replies.error(frame.code, frame.message, frame.clientId, frame.retryAfterMs)).toBe(true);
        const outcome = forgetOutcome(await answer);
        if (outcome.kind !== 'retry') throw new Error(`expected a retry, got ${outcome.kind}`);
        // What the room controller records and then waits out (pending-forgets.ts, sendForget).
        const pending = new PendingForgets(new FakeStorage());
        pending.add('news_1', 'u_ada');
        pending.refused('news_1', 'u_ada', Date.now() + forgetRetryDelay(1, random, outcome.retryAfterMs));
        expect(pending.retry('news_1', 'u_ada').retryAt - Date.now()).toBe(7250);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('is lengthened to the backoff’s shortest wait and shortened to its cap, whatever the refusals in a row', () => {
    for (const random of randoms) {
      for (const refusals of [1, 3, 6]) {
        expect(forgetRetryDelay(refusals, random, 1)).toBe(FORGET_RETRY_MIN_MS);
        expect(forgetRetryDelay(refusals, random, 12_345)).toBe(12_345);
        expect(forgetRetryDelay(refusals, random, 600_000)).toBe(FORGET_RETRY_CAP_MS);
      }
    }
  });

  it('leaves the backoff as it was when missing, malformed, or given with another refusal', () => {
    const fixed = () => 0.25;
    const hostile = [undefined, null, '7250', -5, 0, Number.POSITIVE_INFINITY, Number.NaN, { ms: 7250 }, [7250], true];
    for (const refusals of [1, 2, 5]) {
      for (const value of hostile) expect(forgetRetryDelay(refusals, fixed, value)).toBe(forgetRetryDelay(refusals, fixed));
    }
    // JSON's own overflow is no wait either.
    expect(forgetRetryDelay(1, fixed, (parseUntrustedJson('{"retryAfterMs":1e400}') as { retryAfterMs: unknown }).retryAfterMs)).toBe(
      forgetRetryDelay(1, fixed),
    );
    // Only a rate limit says when it takes the command again.
    expect(forgetOutcome({ ok: false, code: 'ERR_INTERNAL', message: 'x', retryAfterMs: 7250 })).toEqual({ kind: 'retry', code: 'ERR_INTERNAL', message: 'x' });
  });
});

describe('isForgetCommand', () => {
  it('is what the server reads as /forget private: any case, any spaces between the words and around them', () => {
    for (const text of ['/forget private', '/FORGET Private', '  /forget   private  ', '/forget\tprivate', '/forget\nprivate']) {
      expect(isForgetCommand(text), text).toBe(true);
      const command = parseCommand(text)!;
      expect([command.name, command.args.toLowerCase()], text).toEqual(['forget', 'private']);
    }
  });

  it('is not another command, another argument, or a question about it', () => {
    for (const text of [
      '/forget',
      '/forget all',
      '/forget private now',
      '/forgetprivate',
      'forget private',
      '@ai /forget private',
      '/ask /forget private',
      '/forget-private',
    ]) {
      expect(isForgetCommand(text), text).toBe(false);
    }
  });
});

describe('a thread change refused as busy', () => {
  it('gives no wait, and the page waits out its own backoff: the same as for a refusal that never says one', () => {
    // ThreadChangeGate's refusals while other changes are under way (src/memory/threads/change-gate.ts).
    for (const message of [
      'another thread change is under way in this room; try again once it is done',
      'the server is busy with thread changes in other rooms; try again in a moment',
    ]) {
      const outcome = forgetOutcome({ ok: false, code: 'ERR_RATE_LIMITED', message });
      expect(outcome).toEqual({ kind: 'retry', code: 'ERR_RATE_LIMITED', message });
      if (outcome.kind !== 'retry') continue;
      for (const refusals of [1, 2, 5]) expect(forgetRetryDelay(refusals, () => 0.5, outcome.retryAfterMs)).toBe(forgetRetryDelay(refusals, () => 0.5));
    }
  });
});
