import { describe, expect, it } from 'vitest';
import { checkIndexModel, indexModelHealth, INDEX_EMBEDDER_META_KEY } from '../../src/ai/model-check.js';
import { LOCAL_EMBEDDER_MODEL } from '../../src/ai/local/local-embedder.js';

function metaStore(value: string | null) {
  return { getMeta: async (key: string) => (key === INDEX_EMBEDDER_META_KEY ? value : null) };
}

describe('checkIndexModel', () => {
  const embedder = { model: 'ollama:nomic-embed-text', dimensions: 768 };

  it('is ok when nothing was indexed yet', async () => {
    expect(await checkIndexModel(metaStore(null), embedder)).toEqual({ ok: true, current: embedder });
  });

  it('is ok when the index was built with the same model and dimension', async () => {
    const r = await checkIndexModel(metaStore(JSON.stringify(embedder)), embedder);
    expect(r).toEqual({ ok: true, stored: embedder, current: embedder });
  });

  it('reports a different model, naming both and `salon reindex`', async () => {
    const stored = { model: 'salon-local-hash-v1', dimensions: 2048 };
    const r = await checkIndexModel(metaStore(JSON.stringify(stored)), embedder);
    expect(r.ok).toBe(false);
    expect(r.stored).toEqual(stored);
    expect(r.message).toContain('salon-local-hash-v1 (2048 dimensions)');
    expect(r.message).toContain('ollama:nomic-embed-text (768 dimensions)');
    expect(r.message).toContain('salon reindex');
  });

  it('reports the same model at another dimension', async () => {
    const r = await checkIndexModel(metaStore(JSON.stringify({ model: 'salon-local-hash-v1', dimensions: 512 })), {
      model: 'salon-local-hash-v1',
      dimensions: 1024,
    });
    expect(r.ok).toBe(false);
    expect(r.message).toContain('512');
  });

  it('takes an index of an earlier built-in embedder as outdated, to rebuild, not as a mismatch', async () => {
    const current = { model: LOCAL_EMBEDDER_MODEL, dimensions: 2048 };
    const earlier = { model: LOCAL_EMBEDDER_MODEL.replace(/\d+$/, (v) => String(Number(v) - 1)), dimensions: 2048 };
    expect(await checkIndexModel(metaStore(JSON.stringify(earlier)), current)).toEqual({ ok: true, outdated: true, stored: earlier, current });
    expect((await indexModelHealth(metaStore(JSON.stringify(earlier)), current)).detail).toContain('rebuilt at start');
    // Another dimension, a later version or another model still asks for `salon reindex`.
    for (const stored of [
      { ...earlier, dimensions: 512 },
      { model: 'salon-local-hash-v999', dimensions: 2048 },
      { model: 'ollama:nomic-embed-text', dimensions: 2048 },
    ]) {
      expect((await checkIndexModel(metaStore(JSON.stringify(stored)), current)).ok).toBe(false);
    }
  });

  it('compares by name only while a remote dimension is unknown', async () => {
    const r = await checkIndexModel(metaStore(JSON.stringify({ model: 'openai:custom', dimensions: 1000 })), { model: 'openai:custom', dimensions: 0 });
    expect(r.ok).toBe(true);
  });

  it('asks for a reindex when the record is unreadable', async () => {
    const r = await checkIndexModel(metaStore('{not json'), embedder);
    expect(r.ok).toBe(false);
    expect(r.message).toContain('salon reindex');
  });

  it('works as a readiness check', async () => {
    expect(await indexModelHealth(metaStore(null), embedder)).toMatchObject({ ok: true, detail: 'nothing indexed yet' });
    const bad = await indexModelHealth(metaStore(JSON.stringify({ model: 'x', dimensions: 3 })), embedder);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toContain('salon reindex');
  });
});
