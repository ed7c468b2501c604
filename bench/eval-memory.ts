/**
 * Conversation memory on LoCoMo-format data (README, Benchmarks):
 *
 *   npm run eval:memory -- --dataset FILE [--limit N] [--misses FILE] [--answers FILE]
 *
 * Each conversation is imported into the main thread of a room of its own through the import path
 * (each session's date as the time of its first message, a minute between turns; a shared photo
 * as its caption), memory indexing is waited for, then every question of categories 1–4 (the
 * answerable ones) is asked through the whole pipeline with the local providers, as a member
 * would after the conversation. Prints
 * `{conversations, questions, evidence_recall, evidence_recall_all, by_category, answer_contains, answer_token_recall,
 * past_messages_per_answer_max, index_ms_per_message, ask_p95_ms}`: evidence_recall is the share of
 * questions with at least one evidence turn among the conversation sources' messageIds
 * (`_all`: all of them), over the questions that list evidence (`questions_with_evidence`; the
 * others count for answer_contains only); answer_contains is the share of answers holding the
 * expected answer whole, answer_token_recall the mean share of its words they hold (tokenRecall:
 * a paraphrase or another date format gets partial credit). `--misses FILE` writes the questions whose evidence was not cited, with
 * the evidence turns and the answer; `--answers FILE` every question with its category, the expected
 * answer, the answer given and whether it held the expected one (for reading what the answers miss).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { benchOptions, runBench } from './args.js';
import { blankItem } from '../src/content/types.js';
import { checkImport, importMessages } from '../src/memory/import.js';
import { roomViews } from '../src/rag/room-context.js';
import { percentile, withLocalApp } from './local-app.js';
import { answerable, readSamples, roomIdOf, tokenRecall, turnsOf } from './locomo.js';

const round = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<number> {
  const { dataset, limit, missesFile, answersFile } = benchOptions(
    'npm run eval:memory -- --dataset FILE [--limit N] [--misses FILE] [--answers FILE]',
    { dataset: 'string', limit: 'string', misses: 'string', answers: 'string' },
    (a) => ({
      dataset: a.required('dataset'),
      limit: a.optionalNumber('limit', { integer: true, min: 1 }) ?? Infinity,
      missesFile: a.text('misses'),
      answersFile: a.text('answers'),
    }),
  );
  // Imported once the command line is accepted: `--help` and a refused flag answer without loading the pipeline (~1 s).
  const { answerOf } = await import('./squad.js');
  const samples = readSamples(dataset);
  const stats = { questions: 0, withEvidence: 0, any: 0, all: 0, contains: 0, recall: 0, pastMax: 0, indexMs: 0, messages: 0 };
  const byCategory = new Map<number, { questions: number; withEvidence: number; any: number; contains: number; recall: number }>();
  const askMs: number[] = [];
  const misses: { category: number; question: string; evidence: string[]; answer: string }[] = [];
  const answers: { category: number; question: string; expected: string; answer: string; contains: boolean; token_recall: number }[] = [];
  await withLocalApp(async (app, assistant, chat) => {
    const { store, memory, ingest } = app.salon;
    const views = roomViews(app.salon.rooms.resolve);
    for (const sample of samples) {
      const roomId = roomIdOf(sample);
      const { speaker_a: a, speaker_b: b } = sample.conversation;
      await ingest.pipeline.put(blankItem(roomId, { title: `${a} and ${b}`, body: `A conversation between ${a} and ${b}.`, category: 'Conversations' }));
      const turns = turnsOf(sample);
      const t0 = performance.now();
      const thread = await store.ensureMainThread(roomId);
      const imported = await importMessages(
        store,
        memory,
        roomId,
        thread.id,
        checkImport(
          turns.map((t) => ({ author: { name: t.name }, text: t.text, ts: t.ts })),
          100_000,
        ),
      );
      await memory.idle();
      stats.indexMs += performance.now() - t0;
      stats.messages += turns.length;
      const diaOf = new Map(imported.messageIds.map((id, i) => [id, turns[i].diaId]));
      const room = (await views(roomId))!;
      for (const qa of answerable(sample)) {
        if (stats.questions >= limit) break;
        const t = performance.now();
        const prepared = await assistant.pipeline.prepare(room, qa.question, {}, { id: thread.id, asker: { userId: 'u_eval', private: false } });
        const answer = await answerOf(chat, prepared);
        askMs.push(performance.now() - t);
        const cited = new Set(prepared.sources.filter((s) => s.sourceType === 'conversation').flatMap((s) => (s.messageIds ?? []).map((id) => diaOf.get(id))));
        stats.pastMax = Math.max(stats.pastMax, cited.size);
        const measured = qa.evidence.length > 0;
        const any = qa.evidence.some((e) => cited.has(e));
        const all = qa.evidence.length > 0 && qa.evidence.every((e) => cited.has(e));
        const contains = answer.toLowerCase().includes(
          String(qa.answer ?? '')
            .toLowerCase()
            .trim(),
        );
        const recall = tokenRecall(answer, String(qa.answer ?? ''));
        answers.push({ category: qa.category, question: qa.question, expected: String(qa.answer ?? ''), answer, contains, token_recall: round(recall) });
        if (measured && !any)
          misses.push({ category: qa.category, question: qa.question, evidence: qa.evidence.map((e) => turns.find((t) => t.diaId === e)?.text ?? e), answer });
        stats.questions++;
        if (measured) stats.withEvidence++;
        if (any) stats.any++;
        if (all) stats.all++;
        if (contains) stats.contains++;
        stats.recall += recall;
        const c = byCategory.get(qa.category) ?? { questions: 0, withEvidence: 0, any: 0, contains: 0, recall: 0 };
        c.recall += recall;
        c.questions++;
        if (measured) c.withEvidence++;
        if (any) c.any++;
        if (contains) c.contains++;
        byCategory.set(qa.category, c);
      }
    }
  });
  if (missesFile !== undefined) writeFileSync(missesFile, JSON.stringify(misses, null, 1));
  if (answersFile !== undefined) writeFileSync(answersFile, JSON.stringify(answers, null, 1));
  const n = stats.questions || 1;
  const measured = stats.withEvidence || 1;
  console.log(
    JSON.stringify({
      conversations: samples.length,
      questions: stats.questions,
      questions_with_evidence: stats.withEvidence,
      evidence_recall: round(stats.any / measured),
      evidence_recall_all: round(stats.all / measured),
      by_category: Object.fromEntries(
        [...byCategory.entries()]
          .sort(([x], [y]) => x - y)
          .map(([k, c]) => [
            k,
            {
              questions: c.questions,
              evidence_recall: round(c.any / (c.withEvidence || 1)),
              answer_contains: round(c.contains / c.questions),
              answer_token_recall: round(c.recall / c.questions),
            },
          ]),
      ),
      answer_contains: round(stats.contains / n),
      answer_token_recall: round(stats.recall / n),
      past_messages_per_answer_max: stats.pastMax,
      index_ms_per_message: round(stats.indexMs / (stats.messages || 1)),
      ask_p95_ms: round(
        percentile(
          askMs.sort((a, b) => a - b),
          95,
        ),
      ),
    }),
  );
  return 0;
}

runBench(main);
