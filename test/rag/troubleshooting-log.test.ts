/**
 * The seed's troubleshooting lines (specs: "Check logs for …"): one ask logs both searches, the
 * reranked selection and the room context, at debug, word for word.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import type { Logger } from '../../src/logger.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, ScriptedChat } from './fakes.js';

let temp: ReturnType<typeof tempStore>;
beforeEach(() => {
  temp = tempStore();
});
afterEach(async () => {
  await temp.close();
});

it('logs "Search 1/2 returned N results", "Selected N documents after reranking" and "Room context - Title: …, Summary length: …" at debug', async () => {
  const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
  await items.put(
    item('news_l', { title: 'The lighthouse', description: '', body: 'The lighthouse keeper was named Tomas Berg. He kept the lamp lit for forty years.' }),
  );
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_d: object, msg: string) => void lines.push({ level, msg });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const pipeline = new RagPipeline({ store: temp.store, search: new MemorySearch(temp.store, new LocalEmbedder()), chat: new ScriptedChat(), log });
  const context = 'The lighthouse. A keeper tends the lamp.';
  await pipeline.prepare({ id: 'news_l', title: 'The lighthouse', context }, 'What was the name of the lighthouse keeper?');
  const debug = lines.filter((l) => l.level === 'debug').map((l) => l.msg);
  expect(debug).toEqual([
    'Search 1/2 returned 2 results',
    'Search 2/2 returned 2 results',
    'Selected 1 documents after reranking',
    `Room context - Title: The lighthouse, Summary length: ${context.length}`,
  ]);
});
