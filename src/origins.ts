/**
 * Web origins as ALLOWED_ORIGINS lists them and browsers send them in `Origin`: the exact string
 * `scheme://host[:port]`, compared as a string. `URL.origin` is not used for comparing: it is the
 * opaque "null" for every scheme but http(s), ws(s) and ftp, so a mobile app's
 * `capacitor://localhost` and any extension's `chrome-extension://…` were the same origin.
 */

const ORIGIN_SHAPE = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\s]+)\/?$/i;

/**
 * The serialised origin of `text` (`https://example.com`, `capacitor://localhost`), or null when
 * `text` is not one: no `scheme://host`, a path, query, fragment or credentials, or a scheme whose
 * origins are opaque (`file:`). The scheme and host are lowercased and an http(s) default port is
 * dropped, as browsers serialise an origin; a trailing `/` is allowed.
 */
export function serializedOrigin(text: string): string | null {
  const trimmed = text.trim();
  if (!ORIGIN_SHAPE.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.username || url.password || !url.host || url.protocol === 'file:') return null;
  if (url.origin !== 'null') return url.origin;
  return `${url.protocol}//${url.host.toLowerCase()}`;
}
