/**
 * Who this browser is: a display name and the identity token the server handed out in the latest
 * `welcome` (each one renews it). Both live in localStorage so the same person keeps their id
 * across reloads and reconnects.
 */

import { userIdOfToken } from '../../../src/protocol/identity-token.js';
import { MAX_NAME_CHARS, cleanName, isReservedName } from '../../../src/protocol/names.js';

const NAME_KEY = 'salon.name';
const TOKEN_KEY = 'salon.token';

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage can be full or disabled (private mode); the identity then lasts for this page only.
  }
}

/**
 * `raw` as a name the server takes at `hello` (src/protocol/names.ts), or why not: `reserved`
 * for a name kept for the assistant and the people running the server, `unusable` for an empty
 * one or one with invisible characters. Runs of white space become one space and a long name is
 * cut to MAX_NAME_CHARS (never inside a surrogate pair).
 */
export function usableName(raw: string): { name: string } | { refused: 'reserved' | 'unusable' } {
  const name = cleanName(
    raw
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, MAX_NAME_CHARS)
      .replace(/[\uD800-\uDBFF]$/, '')
      .trim(),
  );
  if (name === null) return { refused: 'unusable' };
  return isReservedName(name) ? { refused: 'reserved' } : { name };
}

/**
 * The saved display name, or a new guest name (saved for next time). A saved name the server
 * would refuse (saved before a rule, or by hand) is replaced too: the page would otherwise send
 * it at every join and never get in.
 */
export function displayName(): string {
  const saved = usableName(read(NAME_KEY) ?? '');
  if ('name' in saved) return saved.name;
  const name = `Guest ${Math.floor(1000 + Math.random() * 9000)}`;
  write(NAME_KEY, name);
  return name;
}

/** Saves `name` as the display name if the server would take it; returns usableName's answer. */
export function saveDisplayName(name: string): ReturnType<typeof usableName> {
  const usable = usableName(name);
  if ('name' in usable) write(NAME_KEY, usable.name);
  return usable;
}

export function identityToken(): string | undefined {
  return read(TOKEN_KEY) ?? undefined;
}

/** The user id of the saved token (unchecked: the server checks it at `hello`). */
export function identityUserId(): string | undefined {
  const token = identityToken();
  return token ? userIdOfToken(token) : undefined;
}

export function saveIdentityToken(token: string | null): void {
  write(TOKEN_KEY, token);
}

/**
 * A random id for a message, so the server and this client can recognise its echo.
 * (`crypto.randomUUID` exists only in secure contexts; a LAN address over plain HTTP is not one.)
 */
export function newClientId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
