/**
 * `/memory on|off` in a room: switches the current thread's memory (what `PUT
 * /api/v1/threads/:id/config {"enable_chat_history_rag"}` does over HTTP), and the room is told
 * when it changed; `/memory` alone says whether it is on and how much the thread remembers.
 * THREAD_OPS=admin leaves the switch to the admin's HTTP route.
 */
import { errors } from '../errors.js';
import type { SlashCommand } from '../rooms/commands.js';
import type { Store } from '../store/types.js';
import { plural } from '../text.js';
import type { MemoryService } from './memory-service.js';
import type { ThreadService } from './threads/thread-service.js';

export function memoryCommand(store: Store, memory: MemoryService, threads: ThreadService, threadOps: 'members' | 'admin'): SlashCommand {
  return {
    name: 'memory',
    usage: '/memory [on|off]',
    summary: 'whether the assistant searches and cites what this thread discussed before',
    async run({ threadId, args }) {
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
      await threads.setMemory(threadId, wanted === 'on');
      return wanted === 'on'
        ? 'Memory is on: the assistant searches and cites what this thread discussed before.'
        : 'Memory is off: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts).';
    },
  };
}
