/**
 * Thread fusion on LoCoMo-format data (issue 14, "Measured"; README, Benchmarks):
 *
 *   npm run eval:fusion -- --dataset FILE [--threshold T]
 *
 * Per conversation, with the local providers: the first half of its sessions is imported into the
 * main thread of one room and the second half into the main thread of another (the import path,
 * as eval:memory does: each session's date as its time, memory indexing waited for). Each question
 * of categories 1–4 is asked in the thread holding its evidence (the one holding more of it when
 * it spans both; the first on a tie): `recall_separate`. The two threads are fused
 * (ThreadService.fuse, as `POST /api/v1/threads/fuse` does) and every question is asked in the
 * fused thread: `recall_fused`. A hit is a question with at least one evidence turn among the
 * conversation sources' messageIds (a fused chunk carries the ids of the original messages of
 * both threads). Then the whole conversation is imported twice, into two threads of a third room,
 * and the copies are fused. Prints
 * `{conversations, questions, recall_separate, recall_fused, size_ratio_disjoint,
 * size_ratio_duplicate, fuse_ms_p50, …}`: size ratios are the fused thread's chunks ÷ (|A| + |B|)
 * for the halves and ÷ |A| for the copies; fuse_ms_p50 is over every fusion run. Also printed:
 * `recall_whole` (questions asked in one copy, as eval:memory asks them), `recall_copies_fused`
 * (asked in the copies' fusion), the pairs fused in each case and the questions whose evidence
 * spans both halves.
 */
import type { FastifyInstance } from 'fastify';
import { BenchUsageError, benchOptions, runBench } from './args.js';
import { blankItem } from '../src/content/types.js';
import { checkImport, importMessages } from '../src/memory/import.js';
import { DEFAULT_FUSION_THRESHOLD } from '../src/memory/threads/fusion.js';
import type { SalonAssistant } from '../src/rag/assistant.js';
import { roomViews } from '../src/rag/room-context.js';
import { percentile, withLocalApp } from './local-app.js';
import { answerable, readSamples, roomIdOf, sessionsOf, turnsOf, type LocomoTurn, type Sample } from './locomo.js';

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Message id → LoCoMo turn id, over every thread imported. */
type DiaIds = Map<string, string>;

/** Imports `turns` into `threadId` of `roomId` and waits for its memory; records each message's turn id. */
async function importTurns(app: FastifyInstance, roomId: string, threadId: string, turns: LocomoTurn[], diaOf: DiaIds): Promise<number> {
  const { store, memory } = app.salon;
  const messages = checkImport(
    turns.map((t) => ({ author: { name: t.name }, text: t.text, ts: t.ts })),
    100_000,
  );
  const { messageIds } = await importMessages(store, memory, roomId, threadId, messages);
  messageIds.forEach((id, i) => diaOf.set(id, turns[i].diaId));
  await memory.idle();
  return store.countMemoryChunks(threadId);
}

/** A room of its own (an item), as eval:memory makes one per conversation. */
async function openRoom(app: FastifyInstance, roomId: string, title: string): Promise<void> {
  await app.salon.ingest.pipeline.put(blankItem(roomId, { title, body: `A conversation: ${title}.`, category: 'Conversations' }));
}

/** Asks every question in its thread; the share whose evidence was cited. */
async function recall(
  app: FastifyInstance,
  assistant: SalonAssistant,
  questions: { qa: Sample['qa'][number]; roomId: string; threadId: string }[],
  diaOf: DiaIds,
): Promise<number> {
  const views = roomViews(app.salon.rooms.resolve);
  let hits = 0;
  for (const { qa, roomId, threadId } of questions) {
    const room = (await views(roomId))!;
    const prepared = await assistant.pipeline.prepare(room, qa.question, {}, { id: threadId, asker: { userId: 'u_eval', private: false } });
    const cited = new Set(prepared.sources.filter((s) => s.sourceType === 'conversation').flatMap((s) => (s.messageIds ?? []).map((id) => diaOf.get(id))));
    if (qa.evidence.some((e) => cited.has(e))) hits++;
  }
  return hits;
}

/** Fuses two threads and reports the fused thread, its size, the pairs fused and the time taken. */
async function fuse(app: FastifyInstance, a: string, b: string, threshold: number): Promise<{ id: string; chunks: number; fused: number; ms: number }> {
  const t0 = performance.now();
  const outcome = await app.salon.threads.fuse([a, b], 'admin', threshold);
  const ms = performance.now() - t0;
  if (outcome.fallback) throw new Error(`fusion fell back to a union: ${outcome.fallback}`);
  return { id: outcome.thread.id, chunks: await app.salon.store.countMemoryChunks(outcome.thread.id), fused: outcome.fused, ms };
}

interface Totals {
  questions: number;
  separate: number;
  fused: number;
  whole: number;
  copiesFused: number;
  spanning: number;
  halves: number;
  fusedHalves: number;
  pairsDisjoint: number;
  copy: number;
  fusedCopies: number;
  pairsDuplicate: number;
  fuseMs: number[];
}

/** One conversation: its halves fused, then two copies of it fused. */
async function evaluate(app: FastifyInstance, assistant: SalonAssistant, sample: Sample, threshold: number, t: Totals): Promise<void> {
  const { store, threads } = app.salon;
  const base = roomIdOf(sample);
  const { speaker_a: sa, speaker_b: sb } = sample.conversation;
  const turns = turnsOf(sample);
  const sessions = sessionsOf(sample);
  const firstHalf = new Set(sessions.slice(0, Math.ceil(sessions.length / 2)));
  const sessionOf = new Map(turns.map((x) => [x.diaId, x.session]));
  const diaOf: DiaIds = new Map();

  const rooms = { a: `${base}_a`, b: `${base}_b`, copies: `${base}_copies` };
  await openRoom(app, rooms.a, `${sa} and ${sb}, first half`);
  await openRoom(app, rooms.b, `${sa} and ${sb}, second half`);
  const [ta, tb] = [await store.ensureMainThread(rooms.a), await store.ensureMainThread(rooms.b)];
  const sizeA = await importTurns(
    app,
    rooms.a,
    ta.id,
    turns.filter((x) => firstHalf.has(x.session)),
    diaOf,
  );
  const sizeB = await importTurns(
    app,
    rooms.b,
    tb.id,
    turns.filter((x) => !firstHalf.has(x.session)),
    diaOf,
  );

  // Only questions that list evidence: this evaluation measures where evidence is found.
  const questions = answerable(sample).filter((qa) => qa.evidence.length > 0);
  const home = questions.map((qa) => {
    const inA = qa.evidence.filter((e) => firstHalf.has(sessionOf.get(e) ?? -1)).length;
    const inB = qa.evidence.filter((e) => sessionOf.has(e) && !firstHalf.has(sessionOf.get(e)!)).length;
    if (inA && inB) t.spanning++;
    return inB > inA ? { qa, roomId: rooms.b, threadId: tb.id } : { qa, roomId: rooms.a, threadId: ta.id };
  });
  t.questions += questions.length;
  t.separate += await recall(app, assistant, home, diaOf);
  const halves = await fuse(app, ta.id, tb.id, threshold);
  t.fuseMs.push(halves.ms);
  t.halves += sizeA + sizeB;
  t.fusedHalves += halves.chunks;
  t.pairsDisjoint += halves.fused;
  t.fused += await recall(
    app,
    assistant,
    questions.map((qa) => ({ qa, roomId: rooms.a, threadId: halves.id })),
    diaOf,
  );

  await openRoom(app, rooms.copies, `${sa} and ${sb}, twice`);
  const c1 = await store.ensureMainThread(rooms.copies);
  const c2 = await threads.create(rooms.copies, 'second copy', 'admin');
  const sizeCopy = await importTurns(app, rooms.copies, c1.id, turns, diaOf);
  await importTurns(app, rooms.copies, c2.id, turns, diaOf);
  t.whole += await recall(
    app,
    assistant,
    questions.map((qa) => ({ qa, roomId: rooms.copies, threadId: c1.id })),
    diaOf,
  );
  const copies = await fuse(app, c1.id, c2.id, threshold);
  t.fuseMs.push(copies.ms);
  t.copy += sizeCopy;
  t.fusedCopies += copies.chunks;
  t.pairsDuplicate += copies.fused;
  t.copiesFused += await recall(
    app,
    assistant,
    questions.map((qa) => ({ qa, roomId: rooms.copies, threadId: copies.id })),
    diaOf,
  );
}

async function main(): Promise<number> {
  const { dataset, threshold } = benchOptions('npm run eval:fusion -- --dataset FILE [--threshold T]', { dataset: 'string', threshold: 'string' }, (a) => {
    const threshold = a.number('threshold', DEFAULT_FUSION_THRESHOLD, { min: 0, max: 1 });
    if (threshold === 0) throw new BenchUsageError('--threshold: expected a number above 0 and ≤ 1, got "0"');
    return { dataset: a.required('dataset'), threshold };
  });
  const samples = readSamples(dataset);
  const t: Totals = {
    questions: 0,
    separate: 0,
    fused: 0,
    whole: 0,
    copiesFused: 0,
    spanning: 0,
    halves: 0,
    fusedHalves: 0,
    pairsDisjoint: 0,
    copy: 0,
    fusedCopies: 0,
    pairsDuplicate: 0,
    fuseMs: [],
  };
  await withLocalApp(async (app, assistant) => {
    for (const sample of samples) await evaluate(app, assistant, sample, threshold, t);
  });
  const n = t.questions || 1;
  console.log(
    JSON.stringify({
      conversations: samples.length,
      questions: t.questions,
      recall_separate: round(t.separate / n),
      recall_fused: round(t.fused / n),
      size_ratio_disjoint: round(t.fusedHalves / (t.halves || 1)),
      size_ratio_duplicate: round(t.fusedCopies / (t.copy || 1)),
      fuse_ms_p50: round(
        percentile(
          t.fuseMs.sort((x, y) => x - y),
          50,
        ),
      ),
      threshold,
      recall_whole: round(t.whole / n),
      recall_copies_fused: round(t.copiesFused / n),
      questions_spanning_halves: t.spanning,
      chunks_halves: t.halves,
      pairs_fused_disjoint: t.pairsDisjoint,
      chunks_copy: t.copy,
      pairs_fused_duplicate: t.pairsDuplicate,
      fusions: t.fuseMs.length,
    }),
  );
  return 0;
}

runBench(main);
