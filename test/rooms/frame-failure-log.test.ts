/**
 * A store outage fails every frame that writes to it: the log tells of it once (then a summary a
 * minute) and says when frames work again, instead of an error line a frame.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { joined, roomsApp, until } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

describe('room frames failing during an outage', () => {
  it('logs the first failure, not each one, and that frames work again', async () => {
    const lines: string[] = [];
    const { app, close } = await roomsApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    cleanups.push(close);
    const a = await joined(app, 'Ana');
    const store = app.salon.store;
    const append = store.appendMessage.bind(store);
    let down = true;
    store.appendMessage = async (m) => {
      if (down) throw new Error('disk I/O error');
      return append(m);
    };
    for (let i = 0; i < 5; i++) {
      a.client.send({ type: 'say', text: `lost ${i}`, clientId: `c${i}` });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_INTERNAL', clientId: `c${i}` });
    }
    const msgs = () => lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(msgs().filter((m) => m === 'room frame failed')).toHaveLength(1);
    down = false;
    a.client.send({ type: 'say', text: 'back', clientId: 'ok' });
    await a.client.next('message');
    await until(() => msgs().some((m) => /works again after 5 failure\(s\)/.test(m)));
  });
});
