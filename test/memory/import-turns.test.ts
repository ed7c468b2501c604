/**
 * An import shares the event loop with the rooms: its messages are checked and their keys hashed
 * with turns of the loop (5,000 messages of 4,000 characters held it for ~0.2 s before the store
 * was written), and the store writes them in slices (test/store/sqlite-append-slices.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkImport, checkImportInTurns, importMessages } from '../../src/memory/import.js';
import type { Store } from '../../src/store/types.js';
import { item } from '../store/contract.js';
import { testApp, withTurnsDue } from '../helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const minute = (m: number) => new Date(Date.UTC(2023, 4, 8, 13, m)).toISOString();
const history = Array.from({ length: 20 }, (_, i) => ({ author: { name: i % 2 ? 'Melanie' : 'Caroline' }, text: `Imported line ${i}.`, ts: minute(i) }));

describe('checkImportInTurns', () => {
  it('checks as checkImport does, letting the event loop turn meanwhile', async () => {
    const checked = await withTurnsDue(async (turned) => ({ messages: await checkImportInTurns(history, 4000), turned: turned() }));
    expect(checked).toEqual({ messages: checkImport(history, 4000), turned: true });
  });

  it('refuses the first bad message as checkImport does', async () => {
    const bad = [...history, { author: { name: 'Ann' }, text: 'later', ts: 'soon' }];
    await expect(checkImportInTurns(bad, 4000)).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST', message: expect.stringContaining('messages[20]: ts') });
    await expect(checkImportInTurns([], 4000)).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
  });
});

describe('importMessages', () => {
  it('lets the event loop turn while it makes the messages’ keys, before the store is written', async () => {
    const t = await testApp();
    closers.push(t.close);
    await t.app.ready();
    await t.app.salon.store.upsertItem(item('news_1'));
    const thread = await t.app.salon.store.ensureMainThread('news_1');
    const checked = checkImport(history, 4000);
    const result = await withTurnsDue(async (turned) => {
      let turnedBeforeWrite: boolean | null = null;
      const store = new Proxy(t.app.salon.store, {
        get(target, key, receiver) {
          if (key === 'appendMessages') {
            return (rows: Parameters<Store['appendMessages']>[0]) => {
              turnedBeforeWrite = turned();
              return target.appendMessages(rows);
            };
          }
          const value = Reflect.get(target, key, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const imported = await importMessages(store, t.app.salon.memory, 'news_1', thread.id, checked);
      return { stored: imported.stored, turnedBeforeWrite };
    });
    expect(result).toEqual({ stored: 20, turnedBeforeWrite: true });
    await t.app.salon.memory.idle();
  });
});
