/**
 * TRUST_PROXY=true trusts X-Forwarded-For from every peer (src/routes/proxy-check.ts): the start
 * warns that any client can then name its own address and pass the per-address limits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function warnings(env: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  const t = await testApp({ LOG_LEVEL: 'warn', ...env } as never, { logStream: { write: (line: string) => void lines.push(line) } });
  close = t.close;
  await t.app.ready();
  return lines.map((l) => JSON.parse(l) as { level: number; msg: string }).flatMap((l) => (l.level >= 40 ? [l.msg] : []));
}

describe('TRUST_PROXY=true', () => {
  it('warns at start that any client can name its own address', async () => {
    const said = await warnings({ TRUST_PROXY: 'true' });
    expect(said.filter((m) => /TRUST_PROXY=true trusts X-Forwarded-For from anyone/.test(m))).toHaveLength(1);
  });

  it('says nothing of it when the proxy is named', async () => {
    const said = await warnings({ TRUST_PROXY: '10.0.0.5' });
    expect(said.filter((m) => /TRUST_PROXY/.test(m))).toEqual([]);
  });
});
