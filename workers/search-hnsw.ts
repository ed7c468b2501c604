/**
 * The worker that owns the HNSW graph (hnswlib-node, cosine space). Unlike the scan workers this
 * one is stateful, so it is a plain worker thread answering messages in order (src/search/hnsw-index.ts
 * is its only client): building, searching and saving all happen here, off the event loop.
 */
import { parentPort } from 'node:worker_threads';
import hnswlib from 'hnswlib-node';
import { checkGraphFile, saveGraphFile } from '../src/search/hnsw-files.js';
import type { HnswFileFacts, HnswMessage, HnswReplies, HnswRequest } from '../src/search/hnsw-protocol.js';

type Index = InstanceType<typeof hnswlib.HierarchicalNSW>;

let index: Index | null = null;
let dimensions = 0;
/**
 * hnswlib-node takes plain arrays. Copying into one reused array costs ~2 µs per 768-d vector
 * where Array.from costs ~30 µs (hnswlib copies the values before returning, so reuse is safe).
 */
let scratch: number[] = [];

function asArray(v: Float32Array): number[] {
  if (scratch.length !== v.length) scratch = new Array<number>(v.length).fill(0);
  for (let i = 0; i < v.length; i++) scratch[i] = v[i];
  return scratch;
}

function need(): Index {
  if (!index) throw new Error('the HNSW index is not initialised');
  return index;
}

function ensureCapacity(idx: Index, extra: number): void {
  const needed = idx.getCurrentCount() + extra;
  if (needed > idx.getMaxElements()) idx.resizeIndex(Math.max(needed, Math.ceil(idx.getMaxElements() * 2)));
}

async function load(path: string, expect: HnswFileFacts, efSearch: number): Promise<HnswReplies['load']> {
  const check = await checkGraphFile(path, expect);
  if (!check.ok) return { loaded: false, reason: check.reason };
  const idx = new hnswlib.HierarchicalNSW('cosine', expect.dimensions);
  try {
    await idx.readIndex(path);
  } catch (err) {
    return { loaded: false, reason: `hnswlib could not read it: ${(err as Error).message}` };
  }
  idx.setEf(efSearch);
  index = idx;
  dimensions = expect.dimensions;
  return { loaded: true, count: idx.getCurrentCount() };
}

async function handle(req: HnswRequest): Promise<unknown> {
  switch (req.op) {
    case 'init': {
      const idx = new hnswlib.HierarchicalNSW('cosine', req.dimensions);
      idx.initIndex({ maxElements: Math.max(1, req.capacity), m: req.params.m, efConstruction: req.params.efConstruction, randomSeed: req.params.seed });
      idx.setEf(req.params.efSearch);
      index = idx;
      dimensions = req.dimensions;
      return null;
    }
    // Changes sent while a load is pending and then fails find no index: the rebuild that follows
    // starts from the current rows, so they are rightly dropped.
    case 'add': {
      if (!index) return { count: 0, capacity: 0 } satisfies HnswReplies['add'];
      const idx = index;
      ensureCapacity(idx, req.labels.length);
      for (let i = 0; i < req.labels.length; i++) {
        idx.addPoint(asArray(req.vectors.subarray(i * dimensions, (i + 1) * dimensions)), req.labels[i]);
      }
      return { count: idx.getCurrentCount(), capacity: idx.getMaxElements() } satisfies HnswReplies['add'];
    }
    case 'remove': {
      if (!index) return { deleted: 0 } satisfies HnswReplies['remove'];
      const idx = index;
      let deleted = 0;
      for (const label of req.labels) {
        try {
          idx.markDelete(label);
          deleted++;
        } catch {
          // Not in the graph (never added, or already deleted): nothing to do.
        }
      }
      return { deleted } satisfies HnswReplies['remove'];
    }
    case 'search': {
      const idx = need();
      const k = Math.min(req.k, idx.getCurrentCount());
      if (k > 0) idx.setEf(Math.max(req.ef, k));
      return req.queries.map((query) => {
        if (k === 0) return { labels: new Int32Array(0), distances: new Float32Array(0) };
        const r = idx.searchKnn(asArray(query), k);
        return { labels: Int32Array.from(r.neighbors), distances: Float32Array.from(r.distances) };
      }) satisfies HnswReplies['search'];
    }
    case 'save': {
      const idx = need();
      return { bytes: await saveGraphFile(req.path, req.facts, (tmp) => idx.writeIndex(tmp)) } satisfies HnswReplies['save'];
    }
    case 'load':
      return load(req.path, req.expect, req.efSearch);
    case 'export':
      await need().writeIndex(req.path);
      return null;
    case 'flush':
      return null;
  }
}

// Messages are handled strictly one after another, so a search sees every earlier add and delete.
let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (msg: HnswMessage) => {
  queue = queue.then(async () => {
    try {
      parentPort!.postMessage({ id: msg.id, result: await handle(msg) });
    } catch (err) {
      parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
});
