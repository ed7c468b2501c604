/**
 * The prompt cut to its budget: whatever the budget, every block the prompt opens is closed, no
 * cut falls between the halves of a surrogate pair, and the room context is cut between characters.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import { ROOM_CONTEXT_MAX_CHARS, roomViews } from '../../src/rag/room-context.js';
import { buildPrompt, TOPIC_MAX_CHARS } from '../../src/rag/prompt.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, ScriptedChat } from './fakes.js';

const NONCE = '0123456789abcdef';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text of emoji and words, so a cut at any index may fall inside a pair. */
function emojiText(n: number, seed: string): string {
  return Array.from({ length: n }, (_, i) => `${seed}${i} 😀🚀${i % 3 ? ' ' : ''}`).join('');
}

describe('a prompt cut to its budget', () => {
  const sources: GroundedSource[] = [
    { n: 1, label: 'Launch 😀 news', content: emojiText(120, 'doc') },
    { n: 2, label: 'Second 🚀 page', content: emojiText(90, 'more') },
    { n: 3, label: 'From this discussion — Ann', content: emojiText(40, 'said'), section: 'memory' },
    {
      n: 4,
      label: 'Recent chat',
      content: Array.from({ length: 30 }, (_, i) => `Ann (1 Dec 2026, 10:${String(i).padStart(2, '0')}): line ${i} 😀`).join('\n'),
      section: 'recent',
    },
  ];
  const topic = `Launch news\n${emojiText(200, 'topic')}`;

  it('closes every block it opens and splits no surrogate pair, at every budget', () => {
    for (let budget = 2000; budget <= 16_000; budget += 37) {
      const built = buildPrompt({ topic, sources, question: 'When is the launch? 🚀' }, NONCE, budget);
      const user = built.messages[1].content;
      expect(user.split(`<data-${NONCE}>`).length, `budget ${budget}`).toBe(user.split(`</data-${NONCE}>`).length);
      expect(parseGroundedPrompt(user), `budget ${budget}`).not.toBeNull();
      for (const m of built.messages) {
        expect(m.content, `budget ${budget}`).not.toMatch(LONE_SURROGATE);
        expect(m.content, `budget ${budget}`).not.toContain('\uFFFD');
      }
      // Over the budget only when nothing is left to cut.
      if (built.chars > budget) expect(built.sources, `budget ${budget}`).toEqual([]);
    }
  });
});

describe('the room context in the prompt', () => {
  let store: SqliteStore;
  let close: () => Promise<void>;
  beforeEach(() => {
    ({ store, close } = tempStore());
  });
  afterEach(async () => {
    await close();
  });

  it('is cut between characters when an emoji straddles its limit', async () => {
    const items = createItemPipeline({ store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    await items.put(item('news_l', { title: 'The lighthouse', description: '', body: 'The lighthouse keeper was named Tomas Berg.' }));
    const pipeline = new RagPipeline({ store, search: new MemorySearch(store, new LocalEmbedder()), chat: new ScriptedChat() });
    const context = `The lighthouse\n${'a'.repeat(TOPIC_MAX_CHARS - 16)}😀 and after`;
    expect(context.charCodeAt(TOPIC_MAX_CHARS - 1)).toBe(0xd83d);
    const prepared = await pipeline.prepare({ id: 'news_l', title: 'The lighthouse', context }, 'Who was the lighthouse keeper?');
    expect(prepared.abstained).toBe(false);
    const user = prepared.messages[1].content;
    expect(user).not.toContain('\uFFFD');
    expect(parseGroundedPrompt(user)!.topic).toBe(context.slice(0, TOPIC_MAX_CHARS - 1));
    expect(prepared.stages.context.roomContextChars).toBe(TOPIC_MAX_CHARS - 1);
  });
});

describe('a room view', () => {
  it('cuts a long context between characters', async () => {
    const context = `${'a'.repeat(ROOM_CONTEXT_MAX_CHARS - 1)}😀 and after`;
    const views = roomViews(async (id) => ({ id, kind: 'news', title: 'Long', url: null, context }));
    const view = await views('news_long');
    expect(view!.context).toBe('a'.repeat(ROOM_CONTEXT_MAX_CHARS - 1));
  });
});
