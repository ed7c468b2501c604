/**
 * A request's JSON body as the app reads it: Fastify's own parser (secure-json-parse) refuses an
 * object holding a `__proto__` key, or a `constructor` key whose value holds a `prototype`, and a
 * leading byte order mark is skipped; every lone surrogate escaped in a string (`"\ud800"`) is
 * made U+FFFD (src/routes/empty-json-body.ts says why). The same reading off the event loop, for
 * bodies too large to parse on it (workers/json-body.ts).
 */
import { wellFormedValues } from './text.js';

/** A `\uD800`–`\uDFFF` escape: only through one can JSON text carry a lone surrogate (raw UTF-8 cannot). */
export const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A `__proto__` or `constructor` key, escaped or not, as secure-json-parse looks for them before scanning. */
const SUSPECT_KEY =
  /"(?:(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])|(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072))"\s*:/;

/** Whether some object in `value` would set a prototype when copied or merged (secure-json-parse's `error` actions). */
function poisoned(value: unknown): boolean {
  const own = (node: object, key: string) => Object.prototype.hasOwnProperty.call(node, key);
  const pending: unknown[] = [value];
  while (pending.length) {
    const node = pending.pop();
    if (!node || typeof node !== 'object') continue;
    if (own(node, '__proto__')) return true;
    const ctor = (node as { constructor?: unknown }).constructor;
    if (own(node, 'constructor') && ctor !== null && typeof ctor === 'object' && own(ctor, 'prototype')) return true;
    for (const v of Object.values(node)) if (v && typeof v === 'object') pending.push(v);
  }
  return false;
}

/** Parses `text` as a JSON body; throws a SyntaxError for text that is not JSON or a poisoned object. */
export function parseJsonBody(text: string): unknown {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const value: unknown = JSON.parse(json);
  if (value !== null && typeof value === 'object' && SUSPECT_KEY.test(json) && poisoned(value)) {
    throw new SyntaxError('Object contains forbidden prototype property');
  }
  return SURROGATE_ESCAPE.test(json) ? wellFormedValues(value) : value;
}
