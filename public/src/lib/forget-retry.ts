/**
 * What the page does with the server's answer to a pending "Forget them" (`/forget private`,
 * pressed or typed: isForgetCommand): done, sent again at the room's next welcome (the connection
 * lost the answer), sent again after a backoff (a refusal that passes), or refused for good, which
 * the member is told of. A refusal by a rate limit (src/rooms/chat.ts `command`,
 * src/rooms/session.ts) may say how long until the limit takes the command (`retryAfterMs`): the
 * page then waits that long, though never less than its own backoff's shortest wait nor more than
 * its cap; without it (an older server, a refusal that cannot know its end — a store failing, a
 * thread change crossing the forget, or a thread change refused because others are under way —,
 * a value that is not a wait) the page waits out its own backoff (backoff.ts). Either way a bounded
 * number of times, counted across reloads (pending-forgets.ts).
 */
import { Backoff } from './backoff.js';
import type { CommandReply } from './command-replies.js';

/** First wait after a passing refusal, before jitter (a command budget refills one command in seconds). */
export const FORGET_RETRY_BASE_MS = 2_000;
/** Longest wait between two tries, before jitter. */
export const FORGET_RETRY_CAP_MS = 30_000;
/** The shortest wait the backoff hands out (equal jitter: half its first ceiling); a server's shorter wait is lengthened to it. */
export const FORGET_RETRY_MIN_MS = FORGET_RETRY_BASE_MS / 2;
/** Passing refusals in a row after which the page stops and tells the member (30 to 60 s of waits in all). */
export const MAX_FORGET_REFUSALS = 6;

/**
 * Refusals that pass: the per-address command budget or a frame budget (ERR_RATE_LIMITED), a
 * failure of the store or the server while it forgot, or while it shut down (ERR_INTERNAL: a
 * SalonError of status 500 or more reaches a socket as that), a thread change that crossed the
 * forget (ERR_THREAD_CHANGED: nothing was changed, try again), and no answer within the page's wait
 * (ERR_TIMEOUT: the server may be stuck; forgetting twice is harmless).
 */
const PASSING = new Set(['ERR_RATE_LIMITED', 'ERR_INTERNAL', 'ERR_THREAD_CHANGED', 'ERR_TIMEOUT']);
/** No answer because the room is not joined: the request waits for the next welcome, as one pressed offline does. */
const NOT_CONNECTED = new Set(['ERR_NETWORK', 'ERR_NOT_JOINED']);

/**
 * Whether `text`, sent as a message (not a question), is the command "Forget them" sends: the
 * server's reading of it (src/rooms/commands.ts `parseCommand`, memory/commands.ts), any case, any
 * white space between its words. Typed in the composer it is taken as the button is.
 */
export function isForgetCommand(text: string): boolean {
  return /^\/forget\s+private$/i.test(text.trim());
}

/**
 * A pending forget the page has yet to get through: waiting for the room (`pending`) or out a
 * passing refusal (`retrying`). A state the room shows beside its notices, never in their place.
 */
export type ForgetState = 'pending' | 'retrying';

/** What to do with a pending forget after the server's `reply`. */
export type ForgetOutcome =
  | { kind: 'done' }
  | { kind: 'at-welcome' }
  | { kind: 'retry'; code: string; message: string; retryAfterMs?: unknown }
  | { kind: 'refused'; code: string; message: string };

export function forgetOutcome(reply: CommandReply): ForgetOutcome {
  if (reply.ok) return { kind: 'done' };
  if (NOT_CONNECTED.has(reply.code)) return { kind: 'at-welcome' };
  // Any other refusal (ERR_BAD_MESSAGE, ERR_FORBIDDEN, a code this page does not know) would come back the same.
  if (!PASSING.has(reply.code)) return { kind: 'refused', code: reply.code, message: reply.message };
  // Only a rate limit's wait is the server's to say; the other passing refusals end when they end.
  const serverWait = reply.code === 'ERR_RATE_LIMITED' ? reply.retryAfterMs : undefined;
  return { kind: 'retry', code: reply.code, message: reply.message, ...(serverWait !== undefined ? { retryAfterMs: serverWait } : {}) };
}

/**
 * The wait before the next try, after `refusals` passing refusals in a row (1 or more). `retryAfterMs`,
 * the server's word (untrusted), counts when it is a positive finite number: the wait is then that
 * long, at least FORGET_RETRY_MIN_MS, at most FORGET_RETRY_CAP_MS; otherwise the backoff's.
 */
export function forgetRetryDelay(refusals: number, random: () => number = Math.random, retryAfterMs?: unknown): number {
  const serverWait = typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs > 0 ? Math.ceil(retryAfterMs) : undefined;
  if (serverWait !== undefined) return Math.min(FORGET_RETRY_CAP_MS, Math.max(serverWait, FORGET_RETRY_MIN_MS));
  return new Backoff({ baseMs: FORGET_RETRY_BASE_MS, capMs: FORGET_RETRY_CAP_MS, random, failures: Math.max(0, refusals - 1) }).next();
}
