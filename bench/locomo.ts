/** LoCoMo-format conversations as the memory evaluations (eval:memory, eval:fusion) read them. */
import { readFileSync } from 'node:fs';
import { MONTHS } from '../src/memory/named-dates.js';

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: { question: string; answer?: unknown; evidence: string[]; category: number }[];
}

/** One turn of a conversation, ready to import: its LoCoMo id, its session (1-based), speaker, text and time. */
export interface LocomoTurn {
  diaId: string;
  session: number;
  name: string;
  text: string;
  ts: string;
}

/** `1:56 pm on 8 May, 2023` as epoch ms (UTC). */
export function sessionTime(text: string): number {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm) on (\d{1,2}) (\w+),? (\d{4})$/i.exec(text.trim());
  if (!m) throw new Error(`unreadable session date "${text}"`);
  const month = MONTHS.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`unreadable month in "${text}"`);
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** The room a sample's conversation is imported into: `post_` and its id, other characters made `_`. */
export function roomIdOf(sample: Pick<Sample, 'sample_id'>): string {
  return `post_${sample.sample_id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The samples of a LoCoMo JSON file, checked before any is imported: an error names the file, the
 * sample and what is wrong. Two samples whose ids give one room (`conv-1`, `conv_1`) were imported
 * into one thread, each answering from the other's turns; a turn id given twice made the evidence
 * ambiguous; a session that is not a list ended the evaluation with a TypeError.
 */
export function readSamples(file: string): Sample[] {
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
  if (!Array.isArray(samples)) throw new Error(`${file}: expected an array of LoCoMo samples`);
  const rooms = new Map<string, string>();
  samples.forEach((sample, i) => {
    const where = `${file}: sample ${i}`;
    if (!sample || typeof sample !== 'object' || typeof sample.sample_id !== 'string' || !sample.sample_id) throw new Error(`${where} has no sample_id`);
    const named = `${where} (${sample.sample_id})`;
    if (!sample.conversation || typeof sample.conversation !== 'object') throw new Error(`${named} has no conversation`);
    if (!Array.isArray(sample.qa)) throw new Error(`${named}: qa is not a list`);
    const room = roomIdOf(sample);
    const other = rooms.get(room);
    if (other !== undefined) throw new Error(`${named} and sample "${other}" would share room ${room}: give each a distinct sample_id`);
    rooms.set(room, sample.sample_id);
    checkTurns(sample, named);
  });
  return samples;
}

function checkTurns(sample: Sample, named: string): void {
  const seen = new Set<string>();
  for (const n of sessionsOf(sample)) {
    const turns = sample.conversation[`session_${n}`];
    if (!Array.isArray(turns)) throw new Error(`${named}: session_${n} is not a list of turns`);
    for (const turn of turns as Partial<Turn>[]) {
      const id = turn?.dia_id;
      if (typeof id !== 'string' || !id) throw new Error(`${named}: a turn of session_${n} has no dia_id`);
      if (seen.has(id)) throw new Error(`${named}: dia_id ${id} is given to two turns`);
      seen.add(id);
    }
  }
}

/** The numbers of the conversation's sessions, in order. */
export function sessionsOf(sample: Sample): number[] {
  return Object.keys(sample.conversation)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/**
 * The conversation's turns in order: each session's date is the time of its first turn, a minute
 * between turns; a shared photo is told by its caption.
 */
export function turnsOf(sample: Sample): LocomoTurn[] {
  return sessionsOf(sample).flatMap((n) => {
    const start = sessionTime(String(sample.conversation[`session_${n}_date_time`]));
    return (sample.conversation[`session_${n}`] as Turn[]).map((t, i) => ({
      diaId: t.dia_id,
      session: n,
      name: t.speaker,
      text: t.blip_caption ? `${t.text} [shares a photo: ${t.blip_caption}]` : t.text,
      ts: new Date(start + i * 60_000).toISOString(),
    }));
  });
}

/** A turn id as LoCoMo writes them: `D<session>:<turn>`. */
const DIA_ID = /^D\d+:\d+$/;

/**
 * The questions an evaluation asks: categories 1–4 (category 5 is unanswerable by design), with
 * their evidence as a list of turn ids: the dataset sometimes lists two in one string
 * (`"D8:6; D9:17"`), and a few questions list none (they count for answers, not for evidence).
 */
export function answerable(sample: Sample): Sample['qa'] {
  return sample.qa
    .filter((q) => q.category >= 1 && q.category <= 4)
    .map((q) => ({ ...q, evidence: (q.evidence ?? []).flatMap((e) => String(e).split(/[\s;,]+/)).filter((e) => DIA_ID.test(e)) }));
}

/** Words a LoCoMo answer is compared by: lower-cased, without punctuation, articles nor "and" (as LoCoMo's own scorer normalises). */
function answerTokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !ANSWER_FILLER.has(w));
}
const ANSWER_FILLER = new Set(['a', 'an', 'the', 'and']);

/**
 * The share of the expected answer's words the answer holds (0 when the expected one has none):
 * partial credit where `answer_contains` needs the expected text whole, so `8 May 2023` holds
 * "May 8, 2023" and `adoption agencies … for LGBTQ+ people` most of "LGBTQ+ adoption agencies".
 */
export function tokenRecall(answer: string, expected: string): number {
  const wanted = new Set(answerTokens(expected));
  if (!wanted.size) return 0;
  const said = new Set(answerTokens(answer));
  let held = 0;
  for (const w of wanted) if (said.has(w)) held++;
  return held / wanted.size;
}
