/**
 * What members say: plain messages (persisted with the room's next seq, then broadcast), questions
 * for the assistant (`@ai …`, `/ask …`, `ask` frames) and other slash commands (answered to the
 * sender alone). Idempotent by clientId: a resent message returns the original to its sender only.
 */
import { randomUUID } from 'node:crypto';
import { SalonError, errors, withRetryAfterMs } from '../errors.js';
import type { AckFrame, AskFrame, Member, Message, SayFrame } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { ASK_MARK, askQuestion, parseCommand, type CommandRegistry } from './commands.js';
import type { Room } from './room.js';
import type { Session } from './session.js';
import { threadTakingMessages } from './thread-target.js';
import type { AskAdmission, RoomAssistant } from './types.js';

/** What Chat needs from the hub. */
export interface ChatHost {
  readonly store: Store;
  readonly commands: CommandRegistry;
  assistant(): RoomAssistant | undefined;
  /** Delivers a newly persisted message to the room on every node. */
  publishMessage(room: Room, message: Message): void;
  /** Tells the room a member stopped typing. */
  sendTyping(room: Room, member: Member, active: boolean): void;
  /** Takes a place in the room's message rate for a message about to be posted; the refusal when there is none. */
  admitPost(room: Room, address: string): SalonError | null;
  /** Takes a slash command from the budget the session's address shares with its other sockets. */
  admitCommand(session: Session, now: number): boolean;
  /** Milliseconds from `now` until that budget holds a command again (0: it does now). */
  commandWaitMs(session: Session, now: number): number;
  warn(details: Record<string, unknown>, msg: string): void;
}

const SYSTEM_AUTHOR = Object.freeze({ id: 'system', name: 'Salon', kind: 'system' as const });

/**
 * Tells the poster their message is stored while its echo waits behind older messages the room is
 * still sending (a catch-up): the echo carries the seq a client resumes from, so it cannot go
 * ahead of them, but the poster's confirmation need not wait for them.
 */
function ackFrame(message: Message): string {
  const ack: AckFrame = { type: 'ack', clientId: message.clientId ?? '', id: message.id };
  return JSON.stringify(ack);
}
function joined(session: Session): { room: Room; member: Member } {
  if (!session.room || !session.member) throw new errors.ERR_NOT_JOINED('talking');
  return { room: session.room, member: session.member };
}

export class Chat {
  constructor(private readonly host: ChatHost) {}

  async say(session: Session, frame: SayFrame): Promise<void> {
    const question = askQuestion(frame.text);
    if (question !== null) return this.question(session, question, frame.text, frame.clientId, frame.threadId);
    const command = parseCommand(frame.text);
    if (command) return this.command(session, command, frame.clientId, frame.threadId);
    // The member as admitted: an admitted frame is posted even if its socket closes while the thread resolves.
    const at = joined(session);
    await this.post(session, at, frame.text, frame.clientId, await this.thread(session, at.room, frame.threadId));
  }

  async ask(session: Session, frame: AskFrame): Promise<void> {
    const question = frame.text.trim();
    if (!frame.private) return this.question(session, question, `${ASK_MARK}${question}`, frame.clientId, frame.threadId);
    // A private question stays between the asker and the assistant: nothing is posted to the room.
    const { room } = joined(session);
    const threadId = await this.thread(session, room, frame.threadId);
    // The asker as now: a private answer for a member gone meanwhile would go to nobody.
    this.askAssistant(session, joined(session), question, frame.clientId, threadId, true);
  }

  /**
   * Persists and broadcasts a member's message in `threadId` (resolved by the caller in the frame's
   * turn, `thread`: one socket's messages join the room's queue in the order sent); null
   * when the clientId was already used. `at`: the room and member taken when the frame was admitted,
   * before any await: a flooding socket closed meanwhile (its later frames refused in the same read)
   * has left its room, and its admitted messages were dropped unstored.
   */
  private post(session: Session, at: { room: Room; member: Member }, text: string, clientId: string, threadId: string): Promise<Message | null> {
    const { room, member } = at;
    // The room's rate counts what is posted, here and nowhere else: a command, a private ask, a
    // question the assistant's limits refuse and a frame naming a thread that is gone post nothing,
    // and counted, one member sending them spent the room's messages without a word seen.
    const refused = this.host.admitPost(room, session.address);
    if (refused) return Promise.reject(refused);
    if (room.typing.sent(member.id)) this.host.sendTyping(room, member, false);
    return room.runPost(async () => {
      const { message, duplicate } = await this.host.store.appendMessage({
        roomId: room.id,
        threadId,
        author: { id: member.id, name: member.name, kind: 'user' },
        text,
        clientId,
      });
      if (duplicate) {
        // The original again, unless it waits behind a catch-up: it comes in its place, in seq order.
        session.deliver(!room.hasDelivered(message.seq) && room.held.holding ? ackFrame(message) : JSON.stringify({ type: 'message', message }));
        return null;
      }
      this.host.publishMessage(room, message);
      // Its echo waits behind a catch-up (Room.held): the poster is told it is stored meanwhile.
      if (!room.hasDelivered(message.seq)) session.deliver(ackFrame(message));
      return message;
    });
  }

  /**
   * Posts a question and asks the assistant. The assistant's limits are checked before the
   * question is written, as for HTTP asks: a refused question is neither stored nor broadcast, and
   * its error is the only answer.
   */
  private async question(session: Session, question: string, text: string, clientId: string, requestedThread?: string): Promise<void> {
    if (!question) throw new errors.ERR_BAD_MESSAGE('ask needs a question, e.g. "@ai what is this about?"');
    const { room, member } = joined(session);
    const threadId = await this.thread(session, room, requestedThread);
    // A resend of a question the room still holds gets the original, even once the limits are spent.
    const original = room.recent().find((m) => m.clientId === clientId && m.author.id === member.id);
    if (original) return session.deliver(JSON.stringify({ type: 'message', message: original }));
    const assistant = this.host.assistant();
    let admission: AskAdmission | undefined;
    try {
      admission = assistant?.admit?.({ roomId: room.id, threadId, text: question, asker: member, address: session.address, clientId, private: false });
    } catch (err) {
      return session.error(this.askFailure(room.id, err), clientId);
    }
    let message: Message | null;
    try {
      message = await this.post(session, { room, member }, text, clientId, threadId);
    } catch (err) {
      if (admission) assistant?.release?.(admission);
      throw err;
    }
    if (!message) {
      // A resend of an older question: nothing is asked, so its place in the limits is given back.
      if (admission) assistant?.release?.(admission);
      return;
    }
    // The asker as admitted, as the question was posted: one whose socket closed meanwhile still has its
    // question asked, and its admission taken (ERR_NOT_JOINED here kept the admission's place for good).
    this.askAssistant(session, { room, member }, question, clientId, message.threadId, false, message, admission);
  }

  private askAssistant(
    session: Session,
    at: { room: Room; member: Member },
    text: string,
    clientId: string,
    threadId: string,
    isPrivate: boolean,
    question?: Message,
    admission?: AskAdmission,
  ): void {
    const { room, member } = at;
    const assistant = this.host.assistant();
    if (!assistant) return session.error(new errors.ERR_ASSISTANT_FAILED('no assistant is configured'), clientId);
    try {
      const { done } = assistant.ask(
        {
          roomId: room.id,
          threadId,
          text,
          asker: member,
          address: session.address,
          clientId,
          private: isPrivate,
          ...(question ? { questionId: question.id, questionSeq: question.seq } : {}),
        },
        admission,
      );
      // The assistant reports failures to the room itself; this only keeps the rejection handled.
      done.catch(() => {});
    } catch (err) {
      session.error(this.askFailure(room.id, err), clientId);
    }
  }

  /** What the asker is told of a failed ask or admission: its own refusal, or a failure without details. */
  private askFailure(roomId: string, err: unknown): SalonError {
    if (err instanceof SalonError) return err;
    this.host.warn({ roomId, err: (err as Error)?.message }, 'assistant ask failed');
    return new errors.ERR_ASSISTANT_FAILED('internal error');
  }

  private async command(session: Session, command: { name: string; args: string }, clientId: string, requestedThread?: string): Promise<void> {
    const { room, member } = joined(session);
    // Typing the command is over, as a sent message's is: the client need not say so first.
    if (room.typing.clear(member.id, Date.now())) this.host.sendTyping(room, member, false);
    const now = Date.now();
    if (!this.host.admitCommand(session, now))
      throw withRetryAfterMs(new errors.ERR_RATE_LIMITED('too many commands from one address; wait a moment'), this.host.commandWaitMs(session, now));
    const threadId = await this.thread(session, room, requestedThread);
    const handler = command.name === 'help' ? undefined : this.host.commands.get(command.name);
    const reply = handler
      ? await handler.run({ roomId: room.id, threadId, user: member, address: session.address, args: command.args })
      : this.host.commands.help(command.name === 'help' ? undefined : command.name);
    const message: Message = {
      id: `sys_${randomUUID()}`,
      seq: 0,
      roomId: room.id,
      threadId,
      author: { ...SYSTEM_AUTHOR },
      text: reply,
      ts: new Date().toISOString(),
      clientId,
    };
    session.deliver(JSON.stringify({ type: 'message', message }));
  }

  /**
   * The thread a message goes to: the room's main thread unless another thread of this room is
   * named; a thread merged into another sends its messages on to the survivor. A thread the room
   * does not have (deleted, or another room's) is ERR_THREAD_NOT_FOUND, not ERR_BAD_MESSAGE: the
   * frame is well formed, and a client must tell "this thread is gone" from "this text is refused".
   * One that leads to no active thread is ERR_THREAD_ARCHIVED, as the store's append says of it.
   *
   * It comes in the frame's turn (Session.inTurn): a frame whose thread is read from the store acts
   * before one its socket sent after it whose thread the room knew. Called as the frame is
   * dispatched, and awaited at once; not async, which would await the turn one microtask late.
   */
  private thread(session: Session, room: Room, requested?: string): Promise<string> {
    const known = !requested || requested === room.threadId || room.knownThreads.has(requested);
    return session.inTurn(known ? requested || room.threadId : this.lookUp(room, requested));
  }

  private async lookUp(room: Room, requested: string): Promise<string> {
    const thread = await threadTakingMessages(this.host.store, room.id, requested);
    room.knownThreads.add(thread.id);
    return thread.id;
  }
}
