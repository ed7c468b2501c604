/**
 * The content plugin: the content, ingest and demo-image routes, jobs an earlier process left
 * unfinished marked failed, ingest jobs stopped before the store closes, and the demo seeded when
 * SEED_DEMO is on (in an onReady hook, so `listen()`, `ready()` and the first `inject()` wait for it).
 */
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { defaultDemoDir, seedDemo } from '../content/ingest/seed.js';
import contentRoutes from '../routes/content.js';
import demoAssets from '../routes/demo-assets.js';
import ingestRoutes from '../routes/ingest.js';
import sourceRoutes from '../routes/sources.js';
import { fixedSources } from '../content/refresh/fixed-sources.js';
import { succeedNode } from '../content/ingest/predecessor.js';

export interface ContentPluginOptions {
  /** A folder laid out as fixtures/demo to seed from; default fixtures/demo. */
  demoDir?: string;
}

async function contentPlugin(app: FastifyInstance, options: ContentPluginOptions): Promise<void> {
  const { config, store, ingest, sources } = app.salon;
  // Before any route can submit a job: the jobs of the process this one succeeds on DATA_DIR, and
  // those of nodes silent too long (on SQLite: every other), are orphans now.
  await ingest.failInterruptedJobs(succeedNode(config.DATA_DIR, ingest.node, { log: app.log }));
  // A bad DATA_DIR/sources line stops start-up, naming the file and the entry.
  await sources.syncFixed(await fixedSources(config));
  // preClose runs before any onClose hook, so running jobs stop while the store is still open;
  // polling stops first, so no poll starts meanwhile.
  app.addHook('preClose', async () => {
    await sources.stop();
    await ingest.close();
  });
  if (config.SOURCE_POLLING) app.addHook('onReady', async () => sources.start());

  const demoDir = options.demoDir ?? defaultDemoDir();
  await app.register(contentRoutes);
  await app.register(ingestRoutes);
  await app.register(sourceRoutes);
  await app.register(demoAssets, { dir: join(demoDir, 'img') });
  if (!config.SEED_DEMO) return;
  app.addHook('onReady', async () => {
    try {
      const r = await seedDemo({ store, pipeline: ingest.pipeline, dir: demoDir, log: app.log, signal: app.salon.stopping.signal });
      if (r.seeded)
        app.log.info({ created: r.created, updated: r.updated, unchanged: r.unchanged, failed: r.failures.length }, `demo content seeded (${r.reason})`);
      else app.log.debug(`demo content not seeded: ${r.reason}`);
    } catch (err) {
      // A shutdown: start-up stops here (the next start seeds what is missing).
      if (app.salon.stopping.signal.aborted) throw err;
      app.log.error({ err }, 'seeding the demo content failed; the server runs without it');
    }
  });
}

// After search: the index must be loaded before seeded chunks reach it.
export default fp(contentPlugin, { name: 'salon-content', dependencies: ['salon-search'] });
