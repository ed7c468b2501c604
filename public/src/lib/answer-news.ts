/**
 * Which answers being written are news for the message list's "New messages ↓": an answer shown
 * for the first time is; one shown before is not when it shows again (set aside by an assistant
 * failure and speaking again, answers-in-progress.ts; or listed again by a rejoin's welcome).
 */

/** Answer ids remembered at most; the oldest not being written any more go first. */
const MAX_SEEN = 200;

/** The answer ids a message list has shown, to tell an answer new to it from one shown again. */
export class AnswerNews {
  private readonly seen = new Set<string>();

  /**
   * Notes the answers shown now; returns whether one of them was never shown before. The first
   * list noted (`first`: the list's first render) is remembered but is not news.
   */
  note(answers: readonly { id: string }[], first = false): boolean {
    let fresh = false;
    for (const a of answers) {
      if (this.seen.has(a.id)) continue;
      this.seen.add(a.id);
      fresh = true;
    }
    if (this.seen.size > MAX_SEEN) {
      const shown = new Set(answers.map((a) => a.id));
      for (const id of this.seen) {
        if (this.seen.size <= MAX_SEEN) break;
        if (!shown.has(id)) this.seen.delete(id);
      }
    }
    return fresh && !first;
  }
}
