/**
 * Who this browser is: a display name and the identity token the server handed out in `welcome`.
 * Both live in localStorage so the same person keeps their id across reloads and reconnects.
 */

const NAME_KEY = 'salon.name';
const TOKEN_KEY = 'salon.token';
import { MAX_NAME_CHARS } from '../../../src/protocol/names.js';

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

/** The saved display name, or a new guest name (saved for next time). */
export function displayName(): string {
  const saved = read(NAME_KEY)?.trim();
  if (saved) return saved.slice(0, MAX_NAME_CHARS);
  const name = `Guest ${Math.floor(1000 + Math.random() * 9000)}`;
  write(NAME_KEY, name);
  return name;
}

export function saveDisplayName(name: string): string {
  const clean = name.replace(/\s+/g, ' ').trim().slice(0, MAX_NAME_CHARS);
  if (clean) write(NAME_KEY, clean);
  return clean || displayName();
}

export function identityToken(): string | undefined {
  return read(TOKEN_KEY) ?? undefined;
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
