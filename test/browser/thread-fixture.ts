/**
 * A thread as the API shows it (`ThreadView`), for tests that hand threads to the client: an active,
 * original, unlocked thread titled by its id unless `fields` say otherwise.
 */
import type { ThreadView } from '../../src/protocol/threads.js';

export function threadView(id: string, fields: Partial<ThreadView> = {}): ThreadView {
  return {
    id,
    roomId: 'news_1',
    title: id,
    main: false,
    createdAt: '2026-01-10T09:00:00.000Z',
    status: 'active',
    tags: [],
    summary: '',
    weight: 0,
    parentId: null,
    childIds: [],
    childCount: 0,
    origin: 'original',
    splitLocked: false,
    splitLockedUntil: null,
    mergedInto: null,
    isMerged: false,
    config: { enable_chat_history_rag: true, privileged: false },
    ...fields,
  };
}
