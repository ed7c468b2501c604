/** The app evaluations run against: a real app with the local providers over a temporary DATA_DIR. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ChatModel } from '../src/ai/types.js';
import { loadConfig } from '../src/config.js';
import { yieldHelperThreads } from '../src/helper-threads.js';
import type { SalonAssistant } from '../src/rag/assistant.js';

/** Runs `use` with a ready app (one search thread, no demo), then closes it and removes its data. */
export async function withLocalApp<T>(use: (app: FastifyInstance, assistant: SalonAssistant, chat: ChatModel) => Promise<T>): Promise<T> {
  // The app is imported here rather than with this module, which the benchmarks import for
  // `percentile` too: their `--help` and refused command lines answer without loading it (~1 s).
  const [{ buildApp }, rag] = await Promise.all([import('../src/app.js'), import('../src/rag/assistant.js')]);
  const dir = mkdtempSync(join(tmpdir(), 'salon-eval-'));
  const app = await buildApp(loadConfig({ DATA_DIR: dir, AI_PROVIDER: 'local', SEED_DEMO: 'false', LOG_LEVEL: 'silent', SEARCH_WORKERS: '1' }));
  try {
    await app.ready();
    const { assistant, chat } = app.salon;
    if (!(assistant instanceof rag.SalonAssistant)) throw new Error('the app has no RAG assistant');
    return await use(app, assistant, chat);
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The p-th percentile of ascending `sorted` values (0 for none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * What src/server.ts does first: Node's helper threads to SCHED_IDLE (src/helper-threads.ts), for
 * the benchmarks that measure what a server does (bench:search's graph build among them);
 * BENCH_HELPERS=normal leaves them as they are, to compare. Call it before starting threads of
 * one's own.
 */
export function helperThreadsAsServed(): void {
  if (process.env.BENCH_HELPERS !== 'normal') yieldHelperThreads();
}
