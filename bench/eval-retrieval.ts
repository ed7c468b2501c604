/**
 * Retrieval and answer quality of the whole pipeline on a SQuAD-format file (README, Benchmarks):
 * every passage is ingested as an item into a temporary DATA_DIR through the item pipeline (store,
 * chunker, indexer) of a real app with the local providers, every question is asked in the
 * items' topic room through the three stages and the local model. Then abstention: a second app
 * indexes only the even-numbered articles; their questions are asked in their own item's room
 * (they should be answered), the others' in an unrelated item's room (they should be abstained
 * on). Every question is also asked in its own item's room, where members ask it
 * (`answer_contains_own_room`, `abstained_own_room`). Prints `{questions, recall_at_5_stage1,
 * recall_final, mrr, answer_contains, abstained, answer_contains_own_room, abstained_own_room,
 * answered_on_topic, abstained_off_topic, on_topic_questions, off_topic_questions}`.
 *
 *   npm run eval:retrieval -- --dataset FILE [--limit N] [--misses FILE]
 */
import { writeFileSync } from 'node:fs';
import { benchOptions, runBench } from './args.js';
import type { SalonAssistant } from '../src/rag/assistant.js';
import { withLocalApp } from './local-app.js';
import type { FastifyInstance } from 'fastify';
import type { ChatModel } from '../src/ai/types.js';
import type { ContentItem } from '../src/content/types.js';
import type { QuestionOutcome } from './squad.js';
import { roomViews } from '../src/rag/room-context.js';
import { topicRoomId } from '../src/protocol/room-ids.js';

/** A local app (withLocalApp) holding `items`, for `use`. */
function withApp<T>(items: ContentItem[], use: (app: FastifyInstance, assistant: SalonAssistant, chat: ChatModel) => Promise<T>): Promise<T> {
  return withLocalApp(async (app, assistant, chat) => {
    for (const item of items) await app.salon.ingest.pipeline.put(item);
    return use(app, assistant, chat);
  });
}

async function main(): Promise<number> {
  const { dataset, limit, missesFile } = benchOptions(
    'npm run eval:retrieval -- --dataset FILE [--limit N] [--misses FILE]',
    { dataset: 'string', limit: 'string', misses: 'string' },
    (a) => ({ dataset: a.required('dataset'), limit: a.optionalNumber('limit', { integer: true, min: 1 }) ?? Infinity, missesFile: a.text('misses') }),
  );
  // Imported once the command line is accepted: `--help` and a refused flag answer without loading the pipeline (~1 s).
  const { abstentionSplit, EVAL_CATEGORY, evaluate, evaluateAbstention, loadSquad } = await import('./squad.js');
  const set = await loadSquad(dataset, limit);
  const t0 = performance.now();
  const result = await withApp(set.items, async (app, assistant, chat) => {
    const room = await roomViews(app.salon.rooms.resolve)(topicRoomId(EVAL_CATEGORY));
    if (!room) throw new Error(`room ${topicRoomId(EVAL_CATEGORY)} did not resolve`);
    const misses: QuestionOutcome[] = [];
    const outcome = await evaluate(assistant.pipeline, chat, room, set.questions, (o) => {
      if (!o.contains || !o.inFinal || o.stage1Rank === 0 || o.stage1Rank > 5) misses.push(o);
    });
    if (missesFile !== undefined) writeFileSync(missesFile, JSON.stringify(misses, null, 1));
    // The same questions asked where members ask them: in the room of the item that answers them.
    const views = roomViews(app.salon.rooms.resolve);
    const own = await evaluate(assistant.pipeline, chat, async (q) => (await views(q.itemId))!, set.questions);
    return { ...outcome, answer_contains_own_room: own.answer_contains, abstained_own_room: own.abstained };
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

runBench(main);
