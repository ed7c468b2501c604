/**
 * Slash commands the page sends on the member's behalf (new thread, merge, split): each waits for
 * its answer, which the server sends to the sender alone — a `system` message with the command's
 * clientId, or an `error` frame naming it. These answers go to the control that asked, not into
 * the conversation.
 */
import type { Message } from '../../../src/protocol/messages.js';
import { withoutLiteralEscapes } from '../../../src/protocol/markdown-literal.js';

/** How long to wait for a command's answer before giving up on it. */
const REPLY_TIMEOUT_MS = 20_000;

/**
 * A command's answer. A refusal's `retryAfterMs` is the `error` frame's field as it came (ERR_RATE_LIMITED:
 * the server's wait until its limit takes the command): server data, checked where it is used (forget-retry.ts).
 */
export type CommandReply = { ok: true; text: string } | { ok: false; code: string; message: string; retryAfterMs?: unknown };

interface Waiting {
  resolve: (reply: CommandReply) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class CommandReplies {
  private readonly waiting = new Map<string, Waiting>();

  /** The answer to the command sent with `clientId`. */
  expect(clientId: string): Promise<CommandReply> {
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => this.settle(clientId, { ok: false, code: 'ERR_TIMEOUT', message: 'The server did not answer. Try again.' }),
        REPLY_TIMEOUT_MS,
      );
      this.waiting.set(clientId, { resolve, timer });
    });
  }

  /** Takes a `message` frame's message when it answers a waiting command; false otherwise. Its text, markdown, is kept as plain text. */
  message(m: Message): boolean {
    if (m.author.kind !== 'system' || !m.clientId) return false;
    return this.settle(m.clientId, { ok: true, text: withoutLiteralEscapes(m.text) });
  }

  /** Takes an `error` frame when it answers a waiting command; false otherwise. */
  error(code: string, message: string, clientId: string | undefined, retryAfterMs?: unknown): boolean {
    return clientId ? this.settle(clientId, { ok: false, code, message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }) : false;
  }

  /** Ends every wait (the connection dropped: the answers, if any, are lost). */
  abandonAll(message: string): void {
    for (const clientId of [...this.waiting.keys()]) this.settle(clientId, { ok: false, code: 'ERR_NETWORK', message });
  }

  private settle(clientId: string, reply: CommandReply): boolean {
    const w = this.waiting.get(clientId);
    if (!w) return false;
    this.waiting.delete(clientId);
    clearTimeout(w.timer);
    w.resolve(reply);
    return true;
  }
}
