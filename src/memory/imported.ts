/**
 * Imported messages are told by their author and their clientId (src/memory/import.ts makes both:
 * the clientId from the message, so that importing it again finds it): their memory is built by
 * the import, not by live windows. The clientId alone is the sender's to choose: a member saying
 * `{"clientId": "import_…"}` kept their messages out of the thread's memory. The author id is the
 * server's: live members are `u_…` (signed tokens), HTTP askers `http_…`.
 */
import type { Message } from '../protocol/messages.js';

/** The start of every imported message's clientId. */
export const IMPORT_CLIENT_PREFIX = 'import_';

/** The start of every imported author's id (never a live member's or an HTTP asker's). */
export const IMPORTED_AUTHOR_PREFIX = 'imp_';

/** Whether `message` came in by an import. */
export function isImported(message: Pick<Message, 'clientId' | 'author'>): boolean {
  return message.author.id.startsWith(IMPORTED_AUTHOR_PREFIX) && (message.clientId?.startsWith(IMPORT_CLIENT_PREFIX) ?? false);
}
