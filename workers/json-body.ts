/**
 * JSON body worker (run by src/routes/json-body-pool.ts). Task export `parse`: decodes and parses
 * one large request body off the main thread (32 MiB of JSON held the event loop for ~0.4 s). A
 * body that is not JSON comes back as `{ok: false}`: the caller answers it as Fastify does.
 */
import { parseJsonBody } from '../src/json-body.js';
import { markStarted, type StartStamped } from '../src/content/worker-task.js';

/** One request body, as its bytes. */
export interface JsonBodyTask extends StartStamped {
  bytes: Uint8Array;
}

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false };

/** Parses `task.bytes` (UTF-8) as src/json-body.ts reads a body. */
export function parse(task: JsonBodyTask): JsonBodyResult {
  markStarted(task);
  const text = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength).toString('utf8');
  try {
    return { ok: true, value: parseJsonBody(text) };
  } catch {
    return { ok: false };
  }
}
