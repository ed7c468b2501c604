/**
 * The metered store's message count (`salon_messages_total`): messages stored, so a message
 * found again by its clientId (a retry, an import sent twice) is not counted a second time.
 */
import { describe, expect, it } from 'vitest';
import type { SalonMetrics } from '../../src/metrics/metrics.js';
import { meteredStore } from '../../src/metrics/metered-store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { NewMessage } from '../../src/store/types.js';
import { idleMetrics } from '../helpers.js';

async function messagesTotal(metrics: SalonMetrics): Promise<number> {
  const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith('salon_messages_total '));
  return Number(line?.split(' ')[1]);
}

describe('the metered store’s message count', () => {
  it('counts the messages a batch stored, not those it found stored already (an import sent again)', async () => {
    const inner = new SqliteStore({ filename: ':memory:' });
    try {
      const metrics = idleMetrics();
      const store = meteredStore(inner, metrics);
      const thread = await store.ensureMainThread('news_1');
      const batch = (ids: string[]): NewMessage[] =>
        ids.map((clientId) => ({ roomId: 'news_1', threadId: thread.id, author: { id: 'imp_a', name: 'Ann', kind: 'user' }, text: clientId, clientId }));

      await store.appendMessages(batch(['c1', 'c2', 'c3']));
      expect(await messagesTotal(metrics)).toBe(3);
      // The same three again and one new: one stored.
      const again = await store.appendMessages(batch(['c1', 'c2', 'c3', 'c4']));
      expect(again.map((a) => a.duplicate)).toEqual([true, true, true, false]);
      expect(await messagesTotal(metrics)).toBe(4);
      // appendMessage already counted only what it stored.
      await store.appendMessage(batch(['c4'])[0]);
      expect(await messagesTotal(metrics)).toBe(4);
    } finally {
      await inner.close();
    }
  });
});
