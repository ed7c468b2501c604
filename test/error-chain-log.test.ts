/**
 * An error's whole chain is logged as its top is: the causes and an AggregateError's errors
 * printable, without credentials in URLs, and a PostgreSQL error's `detail` (which may quote a
 * row: people's text) left out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const CONTROLS = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('errors in the log', () => {
  it('scrubs causes, aggregated errors and credentials, and leaves out a row a pg error quotes', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    const root = new Error('connect to http://proxyuser:hunter2pass@models.local:11434/api failed \u009b2J');
    const pg = Object.assign(new Error('duplicate key value violates unique constraint "messages_pkey"'), {
      code: '23505',
      detail: 'Key (text)=(my private diary entry) already exists.',
    });
    const many = new AggregateError([new Error('first \u202eevil'), pg], 'all attempts failed');
    t.app.log.error({ err: new Error('request to the model server failed', { cause: root }) }, 'asking failed');
    t.app.log.error({ err: many }, 'storing failed');
    t.app.log.error({ err: pg }, 'storing failed');
    const text = lines.join('');
    expect(text).toContain('models.local:11434');
    expect(text).toContain('first ');
    expect(text).toContain('23505');
    expect(text).not.toContain('hunter2pass');
    expect(text).not.toContain('proxyuser');
    expect(text).not.toContain('private diary');
    expect(text).not.toMatch(CONTROLS);
  });

  it('logs an error that is its own cause', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    const loop = new Error('loop \u009b');
    (loop as Error & { cause: unknown }).cause = loop;
    t.app.log.error({ err: loop }, 'looping');
    expect(lines.join('')).toContain('loop');
    expect(lines.join('')).not.toMatch(CONTROLS);
  });
});
