/**
 * Imported messages are told by their clientId (src/memory/import.ts makes it from the message, so
 * that importing it again finds it): their memory is built by the import, not by live windows.
 */
import type { Message } from '../protocol/messages.js';

/** The start of every imported message's clientId. */
export const IMPORT_CLIENT_PREFIX = 'import_';

/** Whether `message` came in by an import. */
export function isImported(message: Pick<Message, 'clientId'>): boolean {
  return message.clientId?.startsWith(IMPORT_CLIENT_PREFIX) ?? false;
}
