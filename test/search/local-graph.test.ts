// LocalGraph: the main thread's copy of a graph built in the HNSW worker (handed over by file).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HnswWorkerClient } from '../../src/search/graph/hnsw-worker-client.js';
import { LocalGraph } from '../../src/search/graph/local-graph.js';
import type { VectorEntry } from '../../src/search/types.js';
import { tempDir } from '../helpers.js';
import { clustered, entries, exact, near, recall } from './helpers.js';

const DIM = 32;

function packed(rows: VectorEntry[]): Float32Array {
  const out = new Float32Array(rows.length * DIM);
  rows.forEach((r, i) => out.set(r.vector, i * DIM));
  return out;
}

describe('LocalGraph', () => {
  const tmp = tempDir('salon-local-graph-');
  let rows: VectorEntry[];
  let graph: LocalGraph;

  beforeAll(async () => {
    rows = entries(clustered(1200, DIM, 12, 31));
    const worker = new HnswWorkerClient(DIM);
    try {
      await worker.init(100);
      await worker.add(
        rows.slice(0, 1000).map((r) => r.rowId),
        packed(rows.slice(0, 1000)),
      );
      await worker.export(join(tmp.dir, 'g'));
    } finally {
      await worker.close();
    }
    graph = await LocalGraph.read(join(tmp.dir, 'g'), DIM, 40);
  });
  afterAll(() => tmp.cleanup());

  it('searches the exported graph with the recall of the worker', () => {
    expect(graph.elements).toBe(1000);
    let total = 0;
    for (let q = 0; q < 30; q++) {
      const query = near(rows[(q * 31) % 1000].vector, q);
      total += recall(graph.search(query, 10), exact(rows.slice(0, 1000), query, 10, { includePrivileged: true }));
    }
    expect(total / 30).toBeGreaterThanOrEqual(0.95);
  });

  it('searches a batch of queries on several threads with the answers of one search each', () => {
    const queries = Array.from({ length: 70 }, (_, q) => near(rows[(q * 13) % 1000].vector, q));
    const lists = graph.searchMany(packed(queries.map((vector, rowId) => ({ rowId, vector, meta: rows[0].meta }))), 5, 2);
    expect(lists.k).toBe(5);
    queries.forEach((query, i) => {
      expect(lists.counts[i]).toBe(5);
      expect([...lists.labels.subarray(i * 5, i * 5 + 5)]).toEqual(graph.search(query, 5).map((h) => h.rowId));
    });
    expect(graph.searchMany(new Float32Array(0), 5, 2).counts).toHaveLength(0);
  });

  it('applies a large batch off the event loop (busy until done), growing the graph, then finds the new rows', async () => {
    const added = rows.slice(1000);
    const done = graph.add(
      added.map((r) => r.rowId),
      packed(added),
    );
    expect(graph.busy).toBe(true);
    await done;
    expect(graph.busy).toBe(false);
    expect(graph.elements).toBe(1200);
    expect(graph.search(added[17].vector, 1)[0].rowId).toBe(added[17].rowId);
  });

  it('builds on several native threads in batches, with the recall of one thread', async () => {
    const fresh = LocalGraph.empty(DIM, { m: 12, efConstruction: 64, efSearch: 32, seed: 7 });
    const done = fresh.add(
      rows.map((r) => r.rowId),
      packed(rows),
      2,
    );
    expect(fresh.busy).toBe(true);
    await done;
    expect(fresh.elements).toBe(rows.length);
    let total = 0;
    for (let q = 0; q < 30; q++) {
      const query = near(rows[(q * 37) % rows.length].vector, q);
      total += recall(fresh.search(query, 10), exact(rows, query, 10, { includePrivileged: true }));
    }
    expect(total / 30).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps changes in order behind a write, and links an added row on the thread pool, not the calling thread', async () => {
    const target = rows[5];
    const write = graph.write(join(tmp.dir, 'again'));
    const removed = graph.remove([target.rowId, 999_999]);
    expect(graph.busy).toBe(true);
    await write;
    expect(await removed).toBe(1);
    expect(graph.search(target.vector, 5).map((h) => h.rowId)).not.toContain(target.rowId);
    // The file holds the graph as it was before the delete.
    const copy = await LocalGraph.read(join(tmp.dir, 'again'), DIM, 40);
    expect(copy.search(target.vector, 1)[0].rowId).toBe(target.rowId);
    // The insert runs on the libuv pool: until it is done the graph is busy, and a search meanwhile
    // reads it under the insert's locks (it may not find the row yet; the tiered index scores such
    // rows exactly), while another change waits its turn.
    const readd = graph.add([target.rowId], target.vector.slice());
    expect(graph.busy).toBe(true);
    const during = graph.search(rows[7].vector, 3);
    expect(during[0].rowId).toBe(rows[7].rowId);
    const removedAgain = graph.remove([rows[9].rowId]);
    await readd;
    expect(await removedAgain).toBe(1);
    expect(graph.busy).toBe(false);
    expect(graph.search(target.vector, 1)[0].rowId).toBe(target.rowId);
  });
});
