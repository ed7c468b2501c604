/**
 * Retrieval and answer evaluation on SQuAD-format data (README, Benchmarks): each passage becomes an item,
 * each question is asked through the whole pipeline, and the answer-bearing passage is looked for
 * among stage 1's candidates and the final sources.
 */
import { readFile } from 'node:fs/promises';
import type { ChatModel } from '../src/ai/types.js';
import { blankItem, type ContentItem } from '../src/content/types.js';
import { aboutTheRoom } from '../src/ai/questions.js';
import { ABSTAIN_TEXT } from '../src/rag/answer-run.js';
import { withoutLiteralEscapes } from '../src/protocol/markdown-literal.js';
import type { PreparedAnswer, RagPipeline } from '../src/rag/pipeline.js';
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
  /** Share of these (answerable) questions the pipeline abstained on. */
  abstained: number;
}

export interface QuestionOutcome {
  q: SquadQuestion;
  stage1Rank: number;
  inFinal: boolean;
  contains: boolean;
  abstained: boolean;
  answer: string;
}

/** Asks every question in `room` (or in the room `room` gives for it) and scores the outcomes. */
export async function evaluate(
  pipeline: RagPipeline,
  chat: ChatModel,
  room: RoomView | ((q: SquadQuestion) => Promise<RoomView>),
  questions: SquadQuestion[],
  onOutcome?: (o: QuestionOutcome) => void,
): Promise<EvalResult> {
  let hit5 = 0;
  let final = 0;
  let rr = 0;
  let contains = 0;
  let abstained = 0;
  for (const q of questions) {
    const prepared = await pipeline.prepare(typeof room === 'function' ? await room(q) : room, q.question);
    const answer = await answerOf(chat, prepared);
    const rank = prepared.candidates.findIndex((c) => c.itemId === q.itemId) + 1;
    const inFinal = prepared.sources.some((s) => s.id === q.itemId);
    const lower = answer.toLowerCase();
    const ok = q.answers.some((a) => lower.includes(a.toLowerCase().trim()));
    if (rank > 0 && rank <= 5) hit5++;
    if (rank > 0) rr += 1 / rank;
    if (inFinal) final++;
    if (ok) contains++;
    if (prepared.abstained) abstained++;
    onOutcome?.({ q, stage1Rank: rank, inFinal, contains: ok, abstained: prepared.abstained, answer });
  }
  const n = questions.length || 1;
  const round = (x: number) => Math.round((x / n) * 1000) / 1000;
  return {
    questions: questions.length,
    recall_at_5_stage1: round(hit5),
    recall_final: round(final),
    mrr: round(rr),
    answer_contains: round(contains),
    abstained: round(abstained),
  };
}

/**
 * The answer the room would get, as its members read it: the model's (its markdown escapes taken
 * out, as the page shows them), or the abstention the assistant sends without one.
 */
export async function answerOf(chat: ChatModel, prepared: PreparedAnswer): Promise<string> {
  if (prepared.abstained) return ABSTAIN_TEXT;
  let answer = '';
  for await (const piece of chat.stream(prepared.messages)) answer += piece;
  return withoutLiteralEscapes(answer);
}

export interface AbstentionResult {
  /** Questions whose passage is indexed, asked in the room of their own item: share not abstained. */
  answered_on_topic: number;
  /** Questions whose article is not indexed, asked in the room of an unrelated item: share abstained. */
  abstained_off_topic: number;
  on_topic_questions: number;
  off_topic_questions: number;
}

/**
 * Splits `set` by article: even-numbered articles are indexed (`indexed` items), odd ones are not.
 * Questions of indexed articles are asked in their own item's room and should be answered;
 * questions of the others are asked in the room of an indexed item of another subject and
 * should be abstained on.
 */
export function abstentionSplit(set: SquadSet): { indexed: ContentItem[]; onTopic: SquadQuestion[]; offTopic: SquadQuestion[] } {
  const article = (itemId: string) => Number(/^post_sq(\d+)_/.exec(itemId)![1]);
  const indexed = set.items.filter((i) => article(i.id) % 2 === 0);
  return {
    indexed,
    onTopic: set.questions.filter((q) => article(q.itemId) % 2 === 0),
    offTopic: set.questions.filter((q) => article(q.itemId) % 2 === 1),
  };
}

/** Asks the split's questions (abstentionSplit) through `pipeline`; `roomOf` gives an item's room view. */
export async function evaluateAbstention(
  pipeline: RagPipeline,
  split: ReturnType<typeof abstentionSplit>,
  roomOf: (itemId: string) => Promise<RoomView>,
): Promise<AbstentionResult & { sweep: Record<string, [number, number]> }> {
  const ask = async (q: SquadQuestion, roomItem: string) => {
    const prepared = await pipeline.prepare(await roomOf(roomItem), q.question);
    return { abstained: prepared.abstained, best: prepared.stages.search.best, general: aboutTheRoom(q.question) };
  };
  const on = [];
  for (const q of split.onTopic) on.push(await ask(q, q.itemId));
  const off = [];
  const rooms = split.indexed.map((i) => i.id);
  // An indexed item of another article, a different one for each question.
  for (const [i, q] of split.offTopic.entries()) off.push(await ask(q, rooms[i % rooms.length]));
  const share = (x: number, n: number) => Math.round((x / (n || 1)) * 1000) / 1000;
  // What other thresholds would have done: [answered on topic, abstained off topic].
  const sweep: Record<string, [number, number]> = {};
  for (let t = 0.08; t <= 0.4001; t += 0.02) {
    const abstains = (o: { best: number; general: boolean }) => !o.general && o.best < t;
    sweep[t.toFixed(2)] = [share(on.filter((o) => !abstains(o)).length, on.length), share(off.filter(abstains).length, off.length)];
  }
  return {
    answered_on_topic: share(on.filter((o) => !o.abstained).length, on.length),
    abstained_off_topic: share(off.filter((o) => o.abstained).length, off.length),
    on_topic_questions: on.length,
    off_topic_questions: off.length,
    sweep,
  };
}
