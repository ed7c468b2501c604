/**
 * `raw` without its userinfo: `http://alice:s3cret@host/p` is `http://host/p`. Credentials in a
 * URL are never sent, stored or shown: an item's URL is shown to every member, and a model
 * server's address (OLLAMA_HOST may carry its proxy's password) appears in errors. A string that
 * holds none, or is not a URL, comes back as it is.
 *
 * A password holding an unescaped `/`, `?` or `#` (`postgres://u:pa/ss@db`) makes the URL one no
 * parser takes, and it came back whole, its secret with it: such a string loses everything between
 * its `scheme://` and its last `@`, where the parsers that do take it (pg, ioredis) end the userinfo.
 */
export function withoutUserinfo(raw: string): string {
  if (!raw.includes('@')) return raw;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw.replace(MALFORMED_USERINFO, '$1');
  }
  if (!u.username && !u.password) return raw;
  u.username = '';
  u.password = '';
  return u.href;
}

/** What a malformed URL holds between `scheme://` and its last `@`. */
const MALFORMED_USERINFO = /^(\s*[a-z][a-z0-9+.-]*:\/\/)[^]*@/i;
