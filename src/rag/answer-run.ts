/**
 * One answer from start to finish: pipeline stages, streamed writing with batched deltas, the
 * persisted message and the `assistant.*` frames. Failures become an `error` frame and a SalonError.
 */
import { randomUUID } from 'node:crypto';
import type { ChatModel } from '../ai/types.js';
import { SalonError, clientMessage, errors } from '../errors.js';
import type { AssistantStage, Author, Message, ServerMessage } from '../protocol/messages.js';
import type { AskRequest, AskResult, PendingAnswer } from '../rooms/types.js';
import type { Store } from '../store/types.js';
import { DeltaBatcher } from './delta-batcher.js';
import { citedSources, withoutUngivenCitations } from './cited-sources.js';
import { ASSISTANT_NAME } from '../protocol/names.js';
import { isNotCovered } from '../ai/grounded-prompt.js';
import { safeCut } from '../content/text.js';
import { wellFormed, withoutCitations } from '../text.js';
import { since, type RagPipeline } from './pipeline.js';
import type { RoomView } from './types.js';
import type { Logger } from '../logger.js';
import type { ForegroundHolds } from '../idle-gate.js';

/** What an answer says when nothing it found is relevant enough (no model is called). */
export const ABSTAIN_TEXT = 'I could not find this in the sources of this room or in the discussion, so I cannot answer it.';

/**
 * Longest answer kept: the rest of a longer stream is not read. A model server that ignores
 * AI_MAX_ANSWER_TOKENS (or a model caught in a loop) could otherwise stream until the timeout,
 * each piece broadcast, and the whole stored and sent to every member as one message.
 */
export const ANSWER_MAX_CHARS = 64_000;

/** The assistant's author on every answer. */
export const ASSISTANT_AUTHOR: Author = { id: 'assistant', name: ASSISTANT_NAME, kind: 'assistant' };

export interface AnswerDeps {
  store: Store;
  chat: ChatModel;
  pipeline: RagPipeline;
  log: Logger;
  resolveRoom(roomId: string): Promise<RoomView | null>;
  /** Sends a frame of the answer `answerId` to the room, or only to the asker for a private ask. */
  emit(request: AskRequest, frame: ServerMessage, answerId: string): void;
  deltaIntervalMs: number;
  timeoutMs: number;
  /**
   * Background work held back (the memory's IdleGate) while the answer is being prepared; released
   * once the prompt is ready, before the model writes.
   */
  background?: ForegroundHolds;
}

/** Runs one ask. `pending` is updated as the answer grows, so late joiners see the text so far. */
export async function runAnswer(deps: AnswerDeps, request: AskRequest, pending: PendingAnswer, signal: AbortSignal): Promise<AskResult> {
  const started = performance.now();
  const setStage = (stage: AssistantStage) => {
    pending.stage = stage;
    deps.emit(request, { type: 'assistant.progress', id: pending.id, stage }, pending.id);
  };
  const batcher = new DeltaBatcher((text) => {
    pending.text += text;
    deps.emit(request, { type: 'assistant.delta', id: pending.id, text }, pending.id);
  }, deps.deltaIntervalMs);
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  const deadline = setTimeout(() => controller.abort(new errors.ERR_AI_TIMEOUT(deps.timeoutMs)), deps.timeoutMs);
  // The stages wait on other threads between them (the memory's line search on the store's reader):
  // a background task started in such a gap would make the answer wait for it. The model's writing
  // is not held: a model server's pieces leave the loop idle, and there background work costs nothing.
  const releaseBackground = deps.background?.hold();
  try {
    setStage('searching');
    let t = performance.now();
    const room = await deps.resolveRoom(request.roomId);
    const roomMs = since(t);
    if (!room) throw new errors.ERR_ROOM_NOT_FOUND(request.roomId);
    const preparing = deps.pipeline.prepare(
      room,
      request.text,
      { signal: controller.signal, onStage: (s) => s !== 'searching' && setStage(s) },
      { id: request.threadId, beforeSeq: request.questionSeq, asker: { userId: request.asker.id, private: request.private === true } },
    );
    // Raced against the abort, as the stream is: a stage that ignores the signal (a model server
    // that never answers an embedding) must not hold the answer past its time, or a shutdown.
    const prepareStopped = whenAborted(controller.signal, () => void preparing.catch(() => {}));
    let prepared: Awaited<typeof preparing>;
    try {
      prepared = await Promise.race([preparing, prepareStopped.promise]);
    } finally {
      prepareStopped.dispose();
      releaseBackground?.();
    }
    setStage('writing');
    t = performance.now();
    let full = '';
    const pieces = (
      prepared.reply !== undefined ? fixedAnswer(prepared.reply) : prepared.abstained ? abstention() : deps.chat.stream(prepared.messages, controller.signal)
    )[Symbol.asyncIterator]();
    const stop = whenAborted(controller.signal, () => void pieces.return?.()?.catch(() => {}));
    try {
      for (;;) {
        const next = await Promise.race([pieces.next(), stop.promise]);
        if (next.done) break;
        const room = ANSWER_MAX_CHARS - full.length;
        const cut = next.value.length > room;
        const piece = cut ? next.value.slice(0, safeCut(next.value, room)) : next.value;
        full += piece;
        batcher.push(piece);
        // A piece cut short ends the answer, though the cut (between characters) may leave it under
        // the limit: a model streaming a letter and its mark never reached it, and timed out.
        if (cut || full.length >= ANSWER_MAX_CHARS) {
          deps.log.warn({ roomId: request.roomId, answerId: pending.id, chars: full.length }, 'answer cut at its longest; the model was stopped');
          void pieces.return?.()?.catch(() => {});
          break;
        }
      }
    } finally {
      stop.dispose();
    }
    controller.signal.throwIfAborted();
    batcher.finish();
    // Half of a surrogate pair (a server may send one) made U+FFFD, as a member's text is at the edge:
    // SQLite kept it as three, so the history read back was not the answer the room was sent.
    const said = wellFormed(full).trim();
    if (!said) throw new errors.ERR_AI_BAD_RESPONSE('the answer was empty');
    const write = { ms: since(t), chars: said.length };
    t = performance.now();
    // An abstention, the pipeline's or the model's own, cites nothing and says so with an empty
    // list (clients read `sources` on every answer); an answer lists the sources it cites, and
    // cites none it was not given.
    const abstained = prepared.abstained || isNotCovered(said);
    const text = abstained ? withoutCitations(said) : withoutUngivenCitations(said, new Set(prepared.sources.map((s) => s.n))) || said;
    const sources = abstained ? [] : citedSources(text, prepared.sources);
    const message = await persist(deps, request, pending.id, text, sources);
    deps.emit(request, { type: 'assistant.done', message, ...(abstained ? { abstained: true as const } : {}) }, pending.id);
    const done = { ms: since(t) };
    const stages = { room: { ms: roomMs }, ...prepared.stages, write, done, totalMs: since(started) };
    return { message, sources, abstained, stages };
  } catch (err) {
    batcher.cancel();
    const failure = toSalonError(controller.signal.aborted && !(err instanceof SalonError) ? (controller.signal.reason ?? err) : err);
    // Ended by the room (its thread deleted, the asker gone, on this node or another) or refused for
    // the request's own reason (a thread gone or archived meanwhile): told to the asker, not a
    // failure of the server, which the error level is kept for.
    const ended = signal.aborted || failure.statusCode < 500;
    const details = { roomId: request.roomId, answerId: pending.id, code: failure.code, err: (err as Error)?.message };
    if (ended) deps.log.info(details, 'assistant failed');
    else deps.log.error(details, 'assistant failed');
    deps.emit(
      request,
      { type: 'error', code: failure.code, message: clientMessage(failure), ...(request.clientId ? { clientId: request.clientId } : {}) },
      pending.id,
    );
    throw failure;
  } finally {
    releaseBackground?.();
    clearTimeout(deadline);
    signal.removeEventListener('abort', abort);
  }
}

/** The abstention streamed like any answer, so clients need no second path. */
async function* abstention(): AsyncIterable<string> {
  yield ABSTAIN_TEXT;
}

/** An answer the pipeline wrote itself (PreparedAnswer.reply). */
async function* fixedAnswer(text: string): AsyncIterable<string> {
  yield text;
}

/** Public answers are stored like any message; private ones are only sent to the asker. */
async function persist(deps: AnswerDeps, request: AskRequest, answerId: string, text: string, sources: AskResult['sources'] | undefined): Promise<Message> {
  const replyTo = request.questionId;
  if (request.private) {
    return {
      id: `private_${randomUUID()}`,
      seq: 0,
      roomId: request.roomId,
      threadId: request.threadId,
      author: ASSISTANT_AUTHOR,
      text,
      ts: new Date().toISOString(),
      clientId: answerId,
      ...(replyTo ? { replyTo } : {}),
      ...(sources ? { sources } : {}),
    };
  }
  // An answer written while its thread was merged goes where the question went: the store follows the merge.
  const { message } = await deps.store.appendMessage({
    roomId: request.roomId,
    threadId: request.threadId,
    author: ASSISTANT_AUTHOR,
    text,
    clientId: answerId,
    replyTo,
    sources,
  });
  return message;
}

/**
 * A promise that rejects with the signal's reason when it aborts, after calling `onAbort` (a model
 * that ignores its signal cannot hang an answer). Raced against every piece of the stream: one
 * listener for the whole answer instead of one per piece.
 */
function whenAborted(signal: AbortSignal, onAbort: () => void): { promise: Promise<never>; dispose(): void } {
  let abort!: () => void;
  const promise = new Promise<never>((_, reject) => {
    abort = () => {
      onAbort();
      reject(signal.reason);
    };
  });
  promise.catch(() => {});
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  return { promise, dispose: () => signal.removeEventListener('abort', abort) };
}

/** Catalogued errors (ERR_AI_*, ERR_ROOM_NOT_FOUND, …) pass through; anything else is ERR_ASSISTANT_FAILED. */
export function toSalonError(err: unknown): SalonError {
  if (err instanceof SalonError) return err;
  return new errors.ERR_ASSISTANT_FAILED('the model stopped with an error', err instanceof Error ? err : undefined);
}
