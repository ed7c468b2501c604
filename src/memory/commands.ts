/**
 * `/memory on|off` in a room: switches the current thread's memory (what `PUT
 * /api/v1/threads/:id/config {"enable_chat_history_rag"}` does over HTTP), and the room is told
 * when it changed; `/memory` alone says whether it is on and how much the thread remembers.
 * THREAD_OPS=admin leaves the switch to the admin's HTTP route. `/forget private` makes the
 * assistant forget the sender's private asks in the room (docs/architecture.md).
 */
import { errors } from '../errors.js';
import type { SlashCommand } from '../rooms/commands.js';
import type { RoomAssistant } from '../rooms/types.js';
import { survivorOf } from '../store/thread-survivor.js';
import type { Store } from '../store/types.js';
import { plural } from '../text.js';
import type { MemoryService } from './memory-service.js';
import type { ThreadService } from './threads/thread-service.js';
import { ThreadChangeGate } from './threads/change-gate.js';
import { Turns } from './threads/turns.js';

/**
 * A switch changes the thread's version, which fails a merge, split or fusion of it under way
 * (ERR_THREAD_CHANGED), and tells the room: it goes through the same gate as the thread commands
 * (`gate`, shared with them), so a member switching it over and over can do neither.
 */
export function memoryCommand(
  store: Store,
  memory: MemoryService,
  threads: ThreadService,
  threadOps: 'members' | 'admin',
  gate = new ThreadChangeGate(),
): SlashCommand {
  return {
    name: 'memory',
    usage: '/memory [on|off]',
    summary: 'whether the assistant searches and cites what this thread discussed before',
    async run({ roomId, threadId, args, user, address }) {
      const thread = await store.getThread(threadId);
      if (!thread) throw new errors.ERR_THREAD_NOT_FOUND(threadId);
      const wanted = args.toLowerCase();
      if (wanted === '') {
        const { chunks, pending } = await memory.stats(threadId);
        const waiting = pending ? `, ${plural(pending, 'message', 'messages')} waiting` : '';
        return `Memory is ${thread.memoryEnabled ? 'on' : 'off'} in this thread: ${plural(chunks, 'remembered passage', 'remembered passages')}${waiting}.`;
      }
      if (wanted !== 'on' && wanted !== 'off') throw new errors.ERR_BAD_MESSAGE('use /memory on or /memory off');
      if (threadOps !== 'members') throw new errors.ERR_FORBIDDEN('only the admin may switch a thread’s memory here (THREAD_OPS=admin)');
      await gate.run(roomId, { userId: user.id, address }, () => threads.setMemory(threadId, wanted === 'on'));
      return wanted === 'on'
        ? 'Memory is on: the assistant searches and cites what this thread discussed before.'
        : 'Memory is off: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts).';
    },
  };
}

/**
 * `/forget private`: the sender's private memory of the room (their private asks' exchanges, and
 * what a privileged thread kept for them alone) is deleted, wherever it went: the room's threads,
 * archived ones included, and the fusions made from them, in other rooms too; and their asks in the
 * room still waiting or being answered whose exchanges would join it (private ones, and those in a
 * privileged thread) are answered but never remembered: on this node the assistant is told first,
 * before anything is awaited (an answer that ends meanwhile is not filed), and on any other the
 * store refuses their exchanges (MemoryService.forgetPrivate moves the member's forget mark on,
 * also before anything is awaited: an ask acting after the command, sent before its reply, reads
 * the moved mark, and its exchange is remembered).
 * The count is what this node knows of: the asks running elsewhere are not counted. The browser's
 * "Forget them" sends it beside clearing the tab's copy.
 */
export function forgetCommand(store: Store, memory: MemoryService, threads: ThreadService, assistant: () => RoomAssistant | undefined): SlashCommand {
  return {
    name: 'forget',
    usage: '/forget private',
    summary: 'the assistant forgets your private questions in this room and its answers to them',
    async run({ roomId, user, args }) {
      if (args.toLowerCase() !== 'private') throw new errors.ERR_BAD_MESSAGE('use /forget private');
      // Marked at once, counted once their threads are read (a public ask is taken in a privileged one); it never rejects.
      const marking = assistant()?.forgetPrivateAsks?.(roomId, user.id);
      // Called before anything is awaited too: the store's mark moves, and the asks acting after this
      // (the member's next frame, sent before the reply) read the new one, their exchanges kept.
      const deleted = await memory.forgetPrivate(user.id, roomId, threadsHolding(store, threads, roomId));
      const running = (await marking) ?? 0;
      const forgotten = deleted + running;
      const answering = running ? ` (${running} still being answered: the answer reaches you, and is not remembered)` : '';
      return forgotten
        ? `Forgotten: the assistant no longer remembers ${plural(forgotten, 'private exchange', 'private exchanges')} of yours in this room${answering}.`
        : 'The assistant remembers no private exchange of yours in this room.';
    },
  };
}

/** Fusions followed from a room's threads, at most (each reads a thread's history). */
const MAX_FUSIONS_FOLLOWED = 1_000;

/**
 * The threads that may hold a member's private memory of `roomId`: the room's, the fusions made
 * from them, and from those, each with the thread it was merged into since (its memory went there).
 * One history read per thread followed, with turns of the event loop between them (SQLite answers
 * each at once: a room of a few thousand archived threads held every room ~0.1 s).
 */
async function threadsHolding(store: Store, threads: ThreadService, roomId: string): Promise<string[]> {
  const found = new Set((await store.listThreads(roomId)).map((t) => t.id));
  const next = [...found];
  const turns = new Turns();
  for (let followed = 0; next.length && followed < MAX_FUSIONS_FOLLOWED; followed++) {
    if (turns.due()) await turns.next();
    for (const fused of await threads.fusedFrom(next.shift()!)) {
      const survivor = (await survivorOf(store, fused))?.id;
      for (const id of survivor && survivor !== fused ? [fused, survivor] : [fused]) {
        if (found.has(id)) continue;
        found.add(id);
        next.push(id);
      }
    }
  }
  return [...found];
}
