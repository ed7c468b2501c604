/**
 * A small memo of the last values made, for work an ask repeats on the same question at several
 * places (the kin of its terms, their joiner, its reading for each source quoted).
 */

/** `key`'s value in `cache`, made once while it is among the last `max` made (the oldest made goes first). */
export function recently<V>(cache: Map<string, V>, key: string, make: () => V, max: number): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    if (cache.size >= max) cache.delete(cache.keys().next().value as string);
    cache.set(key, value);
  }
  return value;
}
