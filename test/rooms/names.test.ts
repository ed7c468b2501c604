/** Display names (src/protocol/names.ts) and client addresses (src/rooms/address.ts). */
import { describe, expect, it } from 'vitest';
import { MAX_NAME_CHARS, cleanName, isReservedName, nameKey, sameNameKey } from '../../src/protocol/names.js';
import { addressKey } from '../../src/rooms/address.js';
import { ROOM, inject, joined, roomsApp } from './helpers.js';

describe('reserved names', () => {
  it('keeps the assistant’s, the system’s and the admins’ names, however they are dressed up', () => {
    const imitations = [
      'Salon AI',
      'salon ai',
      'SALON-AI',
      'Salon.A.I.',
      'ＳａｌｏｎＡＩ',
      'AI',
      'A I',
      'Al',
      'A1',
      'assistant',
      'a\u200bssistant',
      'Аssistant',
      'System',
      'ѕystem',
      'SYST3M'.replace('3', 'E'),
      'Admin',
      'adm1n',
      'Moderator',
      'Salon',
    ];
    for (const name of imitations) expect(isReservedName(name), name).toBe(true);
  });

  it('leaves ordinary names alone', () => {
    for (const name of ['Ada', 'Aidan', 'Salomé', 'Sysadmin Sam', 'Assistant Manager Bo', 'Guest 1234', '李雷', 'Zoë', '👩‍💻 dev'])
      expect(isReservedName(name), name).toBe(false);
  });

  it('knows every look-alike the prompt checks know (one table, src/protocol/confusables.ts)', () => {
    for (const name of [
      '\ua731\u028f\ua731\u1d1b\u1d07\u1d0d', // Latin small capitals: ꜱʏꜱᴛᴇᴍ
      'Sal\u0585n', // Armenian օ
      '\u0391\u0399', // Greek capitals Α Ι
      '\u13aaI', // Cherokee Ꭺ
      'Adm\u0131n', // dotless ı
    ])
      expect(isReservedName(name), name).toBe(true);
    expect(sameNameKey('\u0555lga')).toBe(sameNameKey('Olga')); // Armenian Օ
    expect(sameNameKey('\u13a2om')).toBe(sameNameKey('Tom')); // Cherokee Ꭲ
    expect(sameNameKey('Ana 0')).not.toBe(sameNameKey('Ana o')); // digits still tell names apart
    // Case alone still makes no other name, in any script (`Υ` and `υ`, the final sigma and its capital).
    expect(sameNameKey('ΟΔΥΣΣΕΑΣ')).toBe(sameNameKey('Οδυσσεας'));
  });

  it('compares by letters and digits only', () => {
    expect(nameKey('Ｓａｌｏｎ Ａ.Ｉ')).toBe(nameKey('salon ai'));
    expect(nameKey('  --  ')).toBe('');
  });

  it('cleans names to one shared length', () => {
    expect(cleanName('x'.repeat(MAX_NAME_CHARS))).toBe('x'.repeat(MAX_NAME_CHARS));
    expect(cleanName('x'.repeat(MAX_NAME_CHARS + 1))).toBeNull();
  });

  it('refuses a reserved name at hello with ERR_NAME_RESERVED and lets the member try another', async () => {
    const started = await roomsApp();
    try {
      const c = await inject(started.app);
      c.send({ type: 'hello', name: 'Salon AI' });
      expect((await c.next('error')).code).toBe('ERR_NAME_RESERVED');
      const welcome = await c.hello('Ada');
      expect(welcome.you.name).toBe('Ada');
    } finally {
      await started.close();
    }
  });
});

describe('HTTP askers’ names', () => {
  it('get the suffix a second member of that name would get, so nobody asks as a member of the room', async () => {
    const { app, close } = await roomsApp();
    try {
      const ana = await joined(app, 'Ana');
      const ask = async (name: string) => {
        const res = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text: `what did ${name} say?`, name } });
        expect(res.statusCode).toBe(200);
        return (await ana.client.next('message', (f) => f.message.text === `@ai what did ${name} say?`)).message.author;
      };
      const asker = await ask('ＡＮＡ');
      expect(asker.name).toBe('ＡＮＡ (2)');
      expect(asker.id).not.toBe(ana.welcome.you.id);
      expect((await ask('Zed')).name).toBe('Zed');
    } finally {
      await close();
    }
  });
});

describe('client address keys', () => {
  it('keeps IPv4, unwraps IPv4-mapped IPv6 and groups IPv6 by /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('not an address')).toBe('not an address');
  });
});
