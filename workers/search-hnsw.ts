/**
 * The worker that owns an HNSW graph while it is built (salon-hnsw, hnswlib's cosine space). Unlike
 * the scan workers this one is stateful, so it is a plain worker thread answering messages in order
 * (src/search/hnsw-worker-client.ts is its only client): building, searching and saving all happen here,
 * off the event loop. A batch of adds runs on `threads` native threads at once.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Graph } from 'salon-hnsw';
import { checkGraphFile, saveGraphFile } from '../src/search/graph/hnsw-files.js';
import { GRAPH_ENCODING } from '../src/search/graph/hnsw-worker-client.js';
import type { HnswFileFacts, HnswMessage, HnswReplies, HnswRequest } from '../src/search/graph/hnsw-protocol.js';

// Lowest CPU priority for this thread (Linux applies a priority set with pid 0 to the calling thread
// alone): the event loop must win a core back the moment it wakes. The threads a build's adds start
// go further, into SCHED_IDLE (addPoints' `idle`), the class src/helper-threads.ts puts V8's
// garbage-collection helpers in: a build keeps every core busy for seconds, a nice-19 thread keeps
// its core for the rest of its slice when the event loop wakes on it, and nice 19 outweighed those
// helpers, so a collection waiting for a starved one held the loop up to 200 ms (docs/architecture.md,
// "Background threads yield at once"). This thread stays at nice 19 because threads it starts
// inherit its class, and in a process whose entry is CommonJS it may be the first to use libuv's
// pool, whose threads live on (an ES-module entry, as the server's, starts the pool as it loads).
if (process.platform === 'linux') {
  try {
    setPriority(19);
  } catch {
    // Not permitted here: the build runs at normal priority.
  }
}

/** Set by the client as it closes: queued messages are answered without touching the graph. */
const closing = (workerData as { closing?: SharedArrayBuffer } | null)?.closing;
const closed = closing ? new Int32Array(closing) : null;

let index: Graph | null = null;
/** Native threads per batch of adds (the graph's build parallelism). */
let threads = 1;

function need(): Graph {
  if (!index) throw new Error('the HNSW index is not initialised');
  return index;
}

async function load(path: string, expect: HnswFileFacts, efSearch: number): Promise<HnswReplies['load']> {
  const check = await checkGraphFile(path, expect);
  if (!check.ok) return { loaded: false, reason: check.reason };
  let idx: Graph;
  try {
    idx = await Graph.read(path, expect.dimensions, GRAPH_ENCODING);
  } catch (err) {
    return { loaded: false, reason: `hnswlib could not read it: ${(err as Error).message}` };
  }
  idx.setEf(efSearch);
  index = idx;
  return { loaded: true, count: idx.count };
}

async function handle(req: HnswRequest): Promise<unknown> {
  switch (req.op) {
    case 'init': {
      index = new Graph(req.dimensions, Math.max(1, req.capacity), req.params.m, req.params.efConstruction, req.params.seed, GRAPH_ENCODING);
      threads = req.threads;
      return null;
    }
    // Changes sent while a load is pending and then fails find no index: the rebuild that follows
    // starts from the current rows, so they are rightly dropped.
    case 'add': {
      if (!index) return { count: 0, capacity: 0 } satisfies HnswReplies['add'];
      index.addPoints(req.vectors, req.labels, threads, true);
      return { count: index.count, capacity: index.capacity } satisfies HnswReplies['add'];
    }
    case 'remove': {
      if (!index) return { deleted: 0 } satisfies HnswReplies['remove'];
      const idx = index;
      let deleted = 0;
      for (const label of req.labels) if (idx.markDelete(label)) deleted++;
      return { deleted } satisfies HnswReplies['remove'];
    }
    case 'search': {
      const idx = need();
      const k = Math.min(req.k, idx.count);
      idx.setEf(Math.max(req.ef, k, 1));
      return req.queries.map((query) => {
        const labels = new Uint32Array(k);
        const distances = new Float32Array(k);
        const found = k === 0 ? 0 : idx.search(query, k, labels, distances);
        return { labels: new Int32Array(labels.buffer, 0, found), distances: distances.subarray(0, found) };
      }) satisfies HnswReplies['search'];
    }
    case 'save': {
      const idx = need();
      return { bytes: await saveGraphFile(req.path, req.facts, (tmp) => idx.write(tmp)) } satisfies HnswReplies['save'];
    }
    case 'load':
      return load(req.path, req.expect, req.efSearch);
    case 'export':
      await need().write(req.path);
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
      if (closed && Atomics.load(closed, 0) === 1) throw new Error('the HNSW index is closed');
      parentPort!.postMessage({ id: msg.id, result: await handle(msg) });
    } catch (err) {
      parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
});
