/**
 * `raw` without its userinfo: `http://alice:s3cret@host/p` is `http://host/p`. Credentials in a
 * URL are never sent, stored or shown: an item's URL is shown to every member, and a model
 * server's address (OLLAMA_HOST may carry its proxy's password) appears in errors. A string that
 * holds none, or is not a URL, comes back as it is.
 */
export function withoutUserinfo(raw: string): string {
  if (!raw.includes('@')) return raw;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw;
  }
  if (!u.username && !u.password) return raw;
  u.username = '';
  u.password = '';
  return u.href;
}
