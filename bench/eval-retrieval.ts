/**
 * Retrieval and answer quality of the whole pipeline on a SQuAD-format file (README, Benchmarks):
 * every passage is ingested as an item into a temporary DATA_DIR through the item pipeline (store,
 * chunker, indexer) of a real app with the local providers, every question is asked in the
 * items' topic room through the three stages and the local model, and
 * `{questions, recall_at_5_stage1, recall_final, mrr, answer_contains}` is printed.
 *
 *   npm run eval:retrieval -- --dataset FILE [--limit N] [--misses FILE]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { parseArgs } from '../src/cli/command.js';
import { loadConfig } from '../src/config.js';
import { SalonAssistant } from '../src/rag/assistant.js';
import { EVAL_CATEGORY, evaluate, loadSquad, type QuestionOutcome } from './squad.js';
import { roomViews } from '../src/rag/room-context.js';
import { storeResolver } from '../src/rooms/resolver.js';
import { topicRoomId } from '../src/protocol/room-ids.js';

async function main(): Promise<number> {
  const { options } = parseArgs(process.argv.slice(2));
  const dataset = options.get('dataset');
  if (typeof dataset !== 'string') {
    console.error('usage: npm run eval:retrieval -- --dataset FILE [--limit N] [--misses FILE]');
    return 2;
  }
  const limit = options.has('limit') ? Number(options.get('limit')) : Infinity;
  const set = await loadSquad(dataset, limit);
  const dir = mkdtempSync(join(tmpdir(), 'salon-eval-'));
  const app = await buildApp(loadConfig({ DATA_DIR: dir, AI_PROVIDER: 'local', SEED_DEMO: 'false', LOG_LEVEL: 'silent', SEARCH_WORKERS: '1' }));
  try {
    await app.ready();
    const { ingest, assistant, chat, store } = app.salon;
    if (!ingest || !chat || !(assistant instanceof SalonAssistant)) throw new Error('the app has no item pipeline, chat model or RAG assistant');
    const t0 = performance.now();
    for (const item of set.items) await ingest.pipeline.put(item);
    const ingestS = (performance.now() - t0) / 1000;
    const room = await roomViews(app.salon.rooms?.resolve ?? storeResolver(store))(topicRoomId(EVAL_CATEGORY));
    if (!room) throw new Error(`room ${topicRoomId(EVAL_CATEGORY)} did not resolve`);
    const misses: QuestionOutcome[] = [];
    const t1 = performance.now();
    const result = await evaluate(assistant.pipeline, chat, room, set.questions, (o) => {
      if (!o.contains || !o.inFinal || o.stage1Rank === 0 || o.stage1Rank > 5) misses.push(o);
    });
    const missesFile = options.get('misses');
    if (typeof missesFile === 'string') writeFileSync(missesFile, JSON.stringify(misses, null, 1));
    console.error(
      `${set.items.length} passages ingested in ${ingestS.toFixed(1)} s; ${set.questions.length} questions in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
    );
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
