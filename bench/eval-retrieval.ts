/**
 * Retrieval and answer quality of the whole pipeline on a SQuAD-format file (README, Benchmarks):
 * every passage is ingested as an item into a temporary DATA_DIR through the item pipeline (store,
 * chunker, indexer) of a real app with the local providers, every question is asked in the
 * items' topic room through the three stages and the local model. Then abstention: a second app
 * indexes only the even-numbered articles; their questions are asked in their own item's room
 * (they should be answered), the others' in an unrelated item's room (they should be abstained
 * on). Prints `{questions, recall_at_5_stage1, recall_final, mrr, answer_contains, abstained,
 * answered_on_topic, abstained_off_topic, on_topic_questions, off_topic_questions}`.
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
import type { FastifyInstance } from 'fastify';
import type { ChatModel } from '../src/ai/types.js';
import type { ContentItem } from '../src/content/types.js';
import { abstentionSplit, EVAL_CATEGORY, evaluate, evaluateAbstention, loadSquad, type QuestionOutcome } from './squad.js';
import { roomViews } from '../src/rag/room-context.js';
import { topicRoomId } from '../src/protocol/room-ids.js';

/** A real app with the local providers over a temporary DATA_DIR holding `items`, for `use`. */
async function withApp<T>(items: ContentItem[], use: (app: FastifyInstance, assistant: SalonAssistant, chat: ChatModel) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'salon-eval-'));
  const app = await buildApp(loadConfig({ DATA_DIR: dir, AI_PROVIDER: 'local', SEED_DEMO: 'false', LOG_LEVEL: 'silent', SEARCH_WORKERS: '1' }));
  try {
    await app.ready();
    const { ingest, assistant, chat } = app.salon;
    if (!(assistant instanceof SalonAssistant)) throw new Error('the app has no RAG assistant');
    for (const item of items) await ingest.pipeline.put(item);
    return await use(app, assistant, chat);
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const { options } = parseArgs(process.argv.slice(2));
  const dataset = options.get('dataset');
  if (typeof dataset !== 'string') {
    console.error('usage: npm run eval:retrieval -- --dataset FILE [--limit N] [--misses FILE]');
    return 2;
  }
  const limit = options.has('limit') ? Number(options.get('limit')) : Infinity;
  const set = await loadSquad(dataset, limit);
  const t0 = performance.now();
  const result = await withApp(set.items, async (app, assistant, chat) => {
    const room = await roomViews(app.salon.rooms.resolve)(topicRoomId(EVAL_CATEGORY));
    if (!room) throw new Error(`room ${topicRoomId(EVAL_CATEGORY)} did not resolve`);
    const misses: QuestionOutcome[] = [];
    const outcome = await evaluate(assistant.pipeline, chat, room, set.questions, (o) => {
      if (!o.contains || !o.inFinal || o.stage1Rank === 0 || o.stage1Rank > 5) misses.push(o);
    });
    const missesFile = options.get('misses');
    if (typeof missesFile === 'string') writeFileSync(missesFile, JSON.stringify(misses, null, 1));
    return outcome;
  });
  const t1 = performance.now();
  const split = abstentionSplit(set);
  const abstention = await withApp(split.indexed, async (app, assistant) => {
    const views = roomViews(app.salon.rooms.resolve);
    return evaluateAbstention(assistant.pipeline, split, async (itemId) => {
      const view = await views(itemId);
      if (!view) throw new Error(`room ${itemId} did not resolve`);
      return view;
    });
  });
  console.error(
    `${set.items.length} passages, ${set.questions.length} questions: ${((t1 - t0) / 1000).toFixed(1)} s; abstention (half the articles indexed): ${((performance.now() - t1) / 1000).toFixed(1)} s`,
  );
  console.log(JSON.stringify({ ...result, ...abstention }));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
