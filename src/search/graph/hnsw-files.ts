/**
 * Saved HNSW graph files (shared by the worker and the main thread): each graph file has a sidecar
 * `<file>.json` with the facts it was saved under and its sha256, so a stale, truncated or corrupt
 * file is never handed to hnswlib. Files are written through a temp file and a rename.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { isMainThread, Worker } from 'node:worker_threads';
import type { HnswFileFacts, HnswSidecar } from './hnsw-protocol.js';

export const sidecarPath = (path: string): string => `${path}.json`;

const FACT_KEYS: (keyof HnswFileFacts)[] = ['dimensions', 'fingerprint', 'count', 'checksum', 'm', 'efConstruction', 'encoding'];

/** Hashes a file in a short-lived worker: a graph file is hundreds of MB, too much hashing for the event loop. */
const HASH_WORKER = `
const { createHash } = require('node:crypto');
const { createReadStream } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const hash = createHash('sha256');
createReadStream(workerData)
  .on('data', (chunk) => hash.update(chunk))
  .on('error', (err) => { throw err; })
  .on('end', () => parentPort.postMessage(hash.digest('hex')));
`;

async function sha256File(path: string): Promise<string> {
  if (!isMainThread) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }
  const worker = new Worker(HASH_WORKER, { eval: true, workerData: path });
  try {
    return await new Promise<string>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the hashing worker exited with code ${code}`)));
    });
  } finally {
    void worker.terminate();
  }
}

/** Writes `data` to `path` through a temp file and a rename, so readers never see half a file. */
async function writeAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

/** Saves a graph atomically: `write` writes the graph to the temp path it is given; resolves to the file's size. */
export async function saveGraphFile(path: string, facts: HnswFileFacts, write: (tmp: string) => Promise<unknown>): Promise<number> {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await write(tmp);
    const sha256 = await sha256File(tmp);
    await rename(tmp, path);
    const sidecar: HnswSidecar = { version: 1, ...facts, sha256, savedAt: new Date().toISOString() };
    await writeAtomic(sidecarPath(path), JSON.stringify(sidecar));
    return (await stat(path)).size;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Whether the graph saved at `path` matches `expect` and is intact, or why not. */
export async function checkGraphFile(path: string, expect: HnswFileFacts): Promise<{ ok: true } | { ok: false; reason: string }> {
  let sidecar: HnswSidecar;
  try {
    sidecar = JSON.parse(await readFile(sidecarPath(path), 'utf8')) as HnswSidecar;
  } catch {
    return { ok: false, reason: 'no readable sidecar file' };
  }
  // A sidecar of `null`, a number or a list is as unreadable as a missing one: the graph is built
  // again, instead of the check throwing and the graph being given up until the next start.
  if (typeof sidecar !== 'object' || sidecar === null || Array.isArray(sidecar)) return { ok: false, reason: 'no readable sidecar file' };
  const differs = FACT_KEYS.filter((k) => sidecar[k] !== expect[k]);
  if (sidecar.version !== 1 || differs.length) return { ok: false, reason: `saved index differs in ${differs.join(', ') || 'version'}` };
  let sha256: string;
  try {
    sha256 = await sha256File(path);
  } catch {
    return { ok: false, reason: 'index file missing or unreadable' };
  }
  if (sha256 !== sidecar.sha256) return { ok: false, reason: 'index file checksum mismatch (corrupt or partial)' };
  return { ok: true };
}
