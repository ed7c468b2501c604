/** A stored thread as clients see it: the HTTP API's routes and the `salon threads` command. */
import type { ThreadView } from '../../protocol/threads.js';
import type { Thread } from '../../store/types.js';

/** A thread as the API shows it (DESIGN §4). */
export function threadView(t: Thread): ThreadView {
  return {
    id: t.id,
    roomId: t.roomId,
    title: t.title,
    main: t.main,
    createdAt: t.createdAt,
    status: t.status,
    tags: t.tags,
    summary: t.summary,
    weight: t.weight,
    parentId: t.parentId,
    childIds: t.childIds,
    childCount: t.childCount,
    origin: t.origin,
    splitLocked: t.splitLockedUntil !== null,
    splitLockedUntil: t.splitLockedUntil,
    mergedInto: t.mergedInto,
    isMerged: t.isMerged,
    config: { enable_chat_history_rag: t.memoryEnabled, privileged: t.privileged },
  };
}
