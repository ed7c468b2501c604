/**
 * Retrieval and answer evaluation on SQuAD-format data (README, Benchmarks): each passage becomes an item,
 * each question is asked through the whole pipeline, and the answer-bearing passage is looked for
 * among stage 1's candidates and the final sources.
 */
import { readFile } from 'node:fs/promises';
import type { ChatModel } from '../src/ai/types.js';
import { blankItem, type ContentItem } from '../src/content/types.js';
import type { RagPipeline } from '../src/rag/pipeline.js';
import type { RoomView } from '../src/rag/types.js';

export interface SquadQuestion {
  id: string;
  question: string;
  answers: string[];
  /** Id of the item holding the passage. */
  itemId: string;
}

export interface SquadSet {
  items: ContentItem[];
  questions: SquadQuestion[];
}

interface SquadFile {
  data: { title: string; paragraphs: { context: string; qas: { id: string; question: string; answers: { text: string }[] }[] }[] }[];
}

/** Category given to every evaluation item (so their topic room exists). */
export const EVAL_CATEGORY = 'Reference';

/** Reads a SQuAD-format file into items (`post_sq<a>_<p>`) and questions. Throws on a malformed file. */
export async function loadSquad(file: string, limit = Infinity): Promise<SquadSet> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as SquadFile;
  if (!parsed || !Array.isArray(parsed.data)) throw new Error(`${file}: not a SQuAD-format file (no "data" array)`);
  const items: ContentItem[] = [];
  const questions: SquadQuestion[] = [];
  parsed.data.forEach((article, a) => {
    article.paragraphs.forEach((p, i) => {
      const id = `post_sq${a}_${i}`;
      items.push(blankItem(id, { title: article.title.replace(/_/g, ' '), body: p.context, category: EVAL_CATEGORY }));
      for (const q of p.qas) {
        if (questions.length < limit) questions.push({ id: q.id, question: q.question, answers: q.answers.map((x) => x.text), itemId: id });
      }
    });
  });
  return { items, questions };
}

export interface EvalResult {
  questions: number;
  recall_at_5_stage1: number;
  recall_final: number;
  mrr: number;
  answer_contains: number;
}

export interface QuestionOutcome {
  q: SquadQuestion;
  stage1Rank: number;
  inFinal: boolean;
  contains: boolean;
  answer: string;
}

/** Asks every question in `room` and scores the outcomes. */
export async function evaluate(
  pipeline: RagPipeline,
  chat: ChatModel,
  room: RoomView,
  questions: SquadQuestion[],
  onOutcome?: (o: QuestionOutcome) => void,
): Promise<EvalResult> {
  let hit5 = 0;
  let final = 0;
  let rr = 0;
  let contains = 0;
  for (const q of questions) {
    const prepared = await pipeline.prepare(room, q.question);
    let answer = '';
    for await (const piece of chat.stream(prepared.messages)) answer += piece;
    const rank = prepared.candidates.findIndex((c) => c.itemId === q.itemId) + 1;
    const inFinal = prepared.sources.some((s) => s.id === q.itemId);
    const lower = answer.toLowerCase();
    const ok = q.answers.some((a) => lower.includes(a.toLowerCase().trim()));
    if (rank > 0 && rank <= 5) hit5++;
    if (rank > 0) rr += 1 / rank;
    if (inFinal) final++;
    if (ok) contains++;
    onOutcome?.({ q, stage1Rank: rank, inFinal, contains: ok, answer });
  }
  const n = questions.length || 1;
  const round = (x: number) => Math.round((x / n) * 1000) / 1000;
  return { questions: questions.length, recall_at_5_stage1: round(hit5), recall_final: round(final), mrr: round(rr), answer_contains: round(contains) };
}
