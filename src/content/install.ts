/**
 * Wires the content area into the app: the item pipeline and ingest service (services.ingest),
 * the content, ingest and demo-image routes, and demo seeding when SEED_DEMO is on.
 *
 * Seeding runs in an onReady hook, so `listen()` / `ready()` / the first `inject()` wait for it;
 * call installContent after the search area has set `services.indexer` so seeded chunks reach it.
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import contentRoutes from '../routes/content.js';
import demoAssets from '../routes/demo-assets.js';
import ingestRoutes from '../routes/ingest.js';
import type { IngestDeps } from './article.js';
import { IngestService } from './ingest.js';
import { createItemPipeline } from './pipeline.js';
import { defaultDemoDir, seedDemo } from './seed.js';

export interface InstallContentOptions {
  /** Fetching and extraction (H1's fetcher and extractor, or test doubles). */
  deps: IngestDeps;
  /** Folder laid out as fixtures/demo; default fixtures/demo. */
  demoDir?: string;
}

/** Builds the pipeline and ingest service, registers the routes and, with SEED_DEMO, the seeding hook. */
export async function installContent(app: FastifyInstance, services: Services, options: InstallContentOptions): Promise<void> {
  const { config, store } = services;
  const pipeline = createItemPipeline({
    store,
    bodyMaxChars: config.BODY_MAX_CHARS,
    chunk: { size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP },
    sink: () => services.indexer,
  });
  const ingest = new IngestService({
    store,
    pipeline,
    deps: options.deps,
    hn: { base: config.HN_API_BASE, commentLimit: config.HN_COMMENT_LIMIT, intervalMs: config.HN_REQUEST_INTERVAL_MS },
    bodyMaxChars: config.BODY_MAX_CHARS,
    log: app.log,
  });
  services.ingest = ingest;
  // Before any route can submit a job: every queued or running server job is an orphan now.
  await ingest.failInterruptedJobs();
  // preClose runs before any onClose hook, so running jobs stop while the store is still open.
  app.addHook('preClose', async () => ingest.close());

  const demoDir = options.demoDir ?? defaultDemoDir();
  await app.register(contentRoutes);
  await app.register(ingestRoutes);
  await app.register(demoAssets, { dir: join(demoDir, 'img') });

  if (config.SEED_DEMO) {
    app.addHook('onReady', async () => {
      try {
        const r = await seedDemo({ store, pipeline, dir: demoDir, log: app.log });
        if (r.seeded) app.log.info({ created: r.created, updated: r.updated, unchanged: r.unchanged, failed: r.failures.length }, `demo content seeded (${r.reason})`);
        else app.log.debug(`demo content not seeded: ${r.reason}`);
      } catch (err) {
        app.log.error({ err }, 'seeding the demo content failed; the server runs without it');
      }
    });
  }
}
