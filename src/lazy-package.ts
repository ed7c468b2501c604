/**
 * A CommonJS package loaded at its first use rather than with the module that names it. Every
 * module a process imports is loaded at its start, used or not: pg and ioredis (~70 and ~80 ms of
 * a server's start on a 2-core VM) serve only a PostgreSQL store and a Redis bus, so a server, CLI
 * command or benchmark without them does not pay for them.
 */
import { createRequire } from 'node:module';

const requirePackage = createRequire(import.meta.url);

/** `load()` returns the package `name`, requiring it the first time. */
export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requirePackage(name) as T);
}
