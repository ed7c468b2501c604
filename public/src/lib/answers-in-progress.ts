/**
 * The assistant's answers still being written in a room, as the page shows them, and which of
 * them an assistant failure ends.
 *
 * The protocol links an answer in progress to nothing: its `assistant.progress`/`delta` frames
 * carry only the answer's id, and a failure's `error` only the question's `clientId` (DESIGN §3).
 * What is certain is the order of frames: the server starts an answer only after it has its
 * question (and shows a posted question before the answer's frames), and a failure is an answer's
 * last frame. So an answer first seen before a question went out (or came in, another member's)
 * is not that question's answer, and one that speaks again after a failure did not fail.
 *
 * A failure ends the answers it may concern: those first seen after its question, or every one
 * when the question is unknown (an HTTP ask has no clientId). Ended answers are kept aside, not
 * dropped: one that speaks again comes back with its text; a failed one never does.
 */
import type { AssistantStage } from '../../../src/protocol/messages.js';

/** An assistant answer still being written. */
export interface AnswerInProgress {
  id: string;
  stage: AssistantStage;
  text: string;
}

/** Refusals of an ask before any answer to it started: they end no answer in progress. */
const REFUSALS = new Set(['ERR_ASSISTANT_BUSY']);
/** The codes of an assistant failure. */
const ASSISTANT_FAILURE = /^ERR_(AI|ASSISTANT)_/;
/** Most questions remembered, and most ended answers kept aside: the oldest go first. */
const MAX_QUESTIONS = 200;
const MAX_ASIDE = 20;

export class AnswersInProgress {
  private shown: AnswerInProgress[] = [];
  /** When each shown answer was first seen (a tick of `clock`). */
  private readonly firstSeen = new Map<string, number>();
  /** Answers a failure may have ended, kept in case they speak again, with when they were first seen. */
  private readonly aside = new Map<string, { answer: AnswerInProgress; seen: number }>();
  /** When each question (by clientId) first went out or was first seen. */
  private readonly questions = new Map<string, number>();
  private clock = 0;

  /** The answers to show, oldest first; a new array after each change. */
  get list(): readonly AnswerInProgress[] {
    return this.shown;
  }

  /** The welcome's answers in progress are the truth: everything else is forgotten but the questions. */
  replace(pending: readonly AnswerInProgress[]): void {
    const now = ++this.clock;
    this.shown = pending.map((p) => ({ ...p }));
    this.firstSeen.clear();
    this.aside.clear();
    for (const a of this.shown) this.firstSeen.set(a.id, now);
  }

  clear(): void {
    this.replace([]);
  }

  /**
   * A question went out from this page, or another member's was seen (its `message` frame). Only
   * the first time counts: an answer first seen before it cannot be the question's.
   */
  questionOut(clientId: string): void {
    if (!clientId || this.questions.has(clientId)) return;
    this.questions.set(clientId, ++this.clock);
    if (this.questions.size > MAX_QUESTIONS) this.questions.delete(this.questions.keys().next().value!);
  }

  /** A frame of answer `id` came (progress or delta): it goes on, brought back if a failure set it aside. */
  update(id: string, change: (a: AnswerInProgress) => AnswerInProgress): void {
    const i = this.shown.findIndex((a) => a.id === id);
    if (i >= 0) {
      this.shown = this.shown.map((a, j) => (j === i ? change(a) : a));
      return;
    }
    const back = this.aside.get(id);
    this.aside.delete(id);
    this.firstSeen.set(id, back?.seen ?? ++this.clock);
    this.shown = [...this.shown, change(back?.answer ?? { id, stage: 'searching', text: '' })];
  }

  /** Answers that ended with their stored message (`assistant.done`, or its `message` copy). */
  finished(ids: Iterable<string | undefined>): void {
    const done = new Set(ids);
    for (const id of done) {
      if (id === undefined) continue;
      this.aside.delete(id);
      // Kept, one entry per answer ever written grew until the next welcome (a long-open tab's many).
      this.firstSeen.delete(id);
    }
    if (!this.shown.some((a) => done.has(a.id))) return;
    this.shown = this.shown.filter((a) => !done.has(a.id));
  }

  /**
   * An `error` frame came: an assistant failure ends the answers it may concern (see the module's
   * comment); returns whether any was set aside. A refusal of an ask, or any other error, ends none.
   */
  failed(code: string, clientId: string | undefined): boolean {
    if (!ASSISTANT_FAILURE.test(code) || REFUSALS.has(code)) return false;
    const asked = clientId ? this.questions.get(clientId) : undefined;
    const ended = this.shown.filter((a) => asked === undefined || (this.firstSeen.get(a.id) ?? 0) > asked);
    if (!ended.length) return false;
    for (const a of ended) {
      this.aside.set(a.id, { answer: a, seen: this.firstSeen.get(a.id) ?? 0 });
      this.firstSeen.delete(a.id);
    }
    while (this.aside.size > MAX_ASIDE) this.aside.delete(this.aside.keys().next().value!);
    this.shown = this.shown.filter((a) => !ended.includes(a));
    return true;
  }
}
