/** The small pieces of the rooms core, without sockets. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { askQuestion, parseCommand } from '../../src/rooms/commands.js';
import { decodeEnvelope, encodeEnvelope, parseThreadMove } from '../../src/rooms/envelope.js';
import { FloodGuard } from '../../src/rooms/flood-guard.js';
import { parseClientFrame } from '../../src/rooms/frames.js';
import { cleanName } from '../../src/protocol/names.js';
import { IDENTITY_SECRET_FILE, Identity, loadOrCreateSecret } from '../../src/rooms/identity.js';
import { roomOptions } from '../../src/rooms/options.js';
import { topicSlug } from '../../src/protocol/room-ids.js';
import { originAllowed } from '../../src/routes/rooms-ws.js';
import { tempDir } from '../helpers.js';

describe('FloodGuard', () => {
  const limits = { ratePerSecond: 5, rateBurst: 10, abuseRejections: 20, abuseWindowMs: 10_000 };

  it('admits a burst, then refills at the rate', () => {
    const g = new FloodGuard(limits, 0);
    for (let i = 0; i < 10; i++) expect(g.admit(0)).toBe('ok');
    expect(g.admit(0)).toBe('rejected');
    expect(g.admit(199)).toBe('rejected');
    expect(g.admit(200)).toBe('ok');
    expect(g.admit(10_000)).toBe('ok');
  });

  it('keeps admitting at the rate when the clock is set back, and starts its abuse window again', () => {
    const HOUR = 3_600_000;
    const g = new FloodGuard(limits, HOUR);
    for (let i = 0; i < 10; i++) expect(g.admit(HOUR)).toBe('ok');
    // An hour back: the bucket neither refills nor owes an hour of tokens (it did, refusing every frame).
    expect(g.admit(0)).toBe('rejected');
    expect(g.admit(200)).toBe('ok');
    expect(g.admit(400)).toBe('ok');
    // Rejections before the step do not pile up with those after it for an hour.
    const w = new FloodGuard(limits, HOUR);
    for (let i = 0; i < 19; i++) expect(w.reject(HOUR + i)).toBe('rejected');
    for (let i = 0; i < 19; i++) expect(w.reject(i)).toBe('rejected');
  });

  it('calls 20 rejections within the window abuse, but not 20 spread out', () => {
    const spread = new FloodGuard(limits, 0);
    for (let i = 0; i < 40; i++) expect(spread.reject(i * 600)).toBe('rejected');
    const burst = new FloodGuard(limits, 0);
    for (let i = 0; i < 19; i++) expect(burst.reject(i)).toBe('rejected');
    expect(burst.reject(20)).toBe('abuse');
  });
});

describe('client frames', () => {
  it('accepts the protocol’s frames and drops unknown fields', () => {
    expect(parseClientFrame('{"type":"hello","name":" Ana ","lastSeq":3,"x":1}', 4000)).toEqual({
      ok: true,
      frame: { type: 'hello', name: 'Ana', lastSeq: 3 },
    });
    expect(parseClientFrame('{"type":"ask","text":"q","clientId":"c","private":true,"threadId":"t"}', 4000)).toEqual({
      ok: true,
      frame: { type: 'ask', text: 'q', clientId: 'c', threadId: 't', private: true },
    });
    expect(parseClientFrame('{"type":"typing","active":false}', 4000)).toEqual({ ok: true, frame: { type: 'typing', active: false } });
  });

  it.each([
    ['{"type":"hello","name":"A","lastSeq":-1}'],
    ['{"type":"hello","name":"A","lastSeq":1.5}'],
    ['{"type":"hello","name":"A","token":5}'],
    ['{"type":"say","text":"x","clientId":""}'],
    [`{"type":"say","text":"x","clientId":"${'c'.repeat(129)}"}`],
    ['{"type":"ask","text":"x","clientId":"c","private":"yes"}'],
    ['{"type":"typing","active":"yes"}'],
    ['{"type":"SAY","text":"x","clientId":"c"}'],
    ['null'],
  ])('refuses %s with ERR_BAD_MESSAGE', (raw) => {
    const r = parseClientFrame(raw, 4000);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('ERR_BAD_MESSAGE');
  });

  it('makes every string of a frame well-formed, each half of a surrogate pair U+FFFD, as the store keeps them', () => {
    expect(parseClientFrame('{"type":"hello","name":"Ana\\ud800","token":"t\\udc00"}', 4000)).toEqual({
      ok: true,
      frame: { type: 'hello', name: 'Ana\ufffd', token: 't\ufffd' },
    });
    expect(parseClientFrame('{"type":"say","text":"a\\ud800 \\ud83d\\ude00","clientId":"id\\ud800","threadId":"thr_\\udfff"}', 4000)).toEqual({
      ok: true,
      frame: { type: 'say', text: 'a\ufffd \ud83d\ude00', clientId: 'id\ufffd', threadId: 'thr_\ufffd' },
    });
    expect(parseClientFrame('{"type":"ask","text":"q\\udbff","clientId":"\\udc00","private":true}', 4000)).toEqual({
      ok: true,
      frame: { type: 'ask', text: 'q\ufffd', clientId: '\ufffd', private: true },
    });
    // A refused frame echoes the clientId as a valid one would carry it.
    expect(parseClientFrame('{"type":"say","text":" ","clientId":"id\\ud800"}', 4000)).toMatchObject({ ok: false, clientId: 'id\ufffd' });
  });

  it('refuses frames with nested values or too many fields before parsing them, and keeps brackets inside strings', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const raw of [
        '['.repeat(8000) + ']'.repeat(8000),
        `{"type":"ping","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        '{"type":"ping","x":{"y":1}}',
        `{${Array.from({ length: 1500 }, (_, i) => `"k${i}":1`).join(',')},"type":"ping"}`,
      ]) {
        expect(parseClientFrame(raw, 4000)).toMatchObject({ ok: false, error: { code: 'ERR_BAD_MESSAGE' } });
      }
      // JSON.parse of 8,000 nested arrays cost ~0.8 ms a frame, of 1,500 fields ~0.3 ms.
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    const text = 'a [bracket] {brace} "quote" \\ and: colons: ' + ':'.repeat(40);
    expect(parseClientFrame(JSON.stringify({ type: 'say', text, clientId: 'c{[' }), 4000)).toEqual({ ok: true, frame: { type: 'say', text, clientId: 'c{[' } });
  });

  it('measures the text limit on the text and keeps the clientId', () => {
    const r = parseClientFrame(JSON.stringify({ type: 'say', text: 'é'.repeat(11), clientId: 'c' }), 10);
    expect(r).toMatchObject({ ok: false, clientId: 'c', error: { code: 'ERR_MESSAGE_TOO_LONG' } });
  });

  it('keeps a public ask within the text limit once posted as "@ai <text>"; a private one may use it all', () => {
    const ask = (text: string, extra = {}) => parseClientFrame(JSON.stringify({ type: 'ask', text, clientId: 'c', ...extra }), 10);
    expect(ask('x'.repeat(7))).toMatchObject({ ok: false, clientId: 'c', error: { code: 'ERR_MESSAGE_TOO_LONG', message: expect.stringContaining(' 6 ') } });
    expect(ask('x'.repeat(6))).toMatchObject({ ok: true });
    expect(ask(` ${'x'.repeat(6)} `)).toMatchObject({ ok: true });
    expect(ask('x'.repeat(10), { private: true })).toMatchObject({ ok: true });
    expect(ask('x'.repeat(11), { private: true })).toMatchObject({ ok: false, error: { code: 'ERR_MESSAGE_TOO_LONG' } });
  });

  it('cleans names', () => {
    expect(cleanName('  Zoë  ')).toBe('Zoë');
    expect(cleanName('👩‍💻 dev')).toBe('👩‍💻 dev');
    for (const bad of ['', ' ', 'a\nb', 'a\u200bb', '\u202eevil', 'x'.repeat(33), null]) expect(cleanName(bad)).toBeNull();
  });

  it('refuses names that look empty or hide characters, and keeps emoji sequences', () => {
    const hidden = [
      'Ana\u{E0041}', // a tag character outside a flag
      '\u3164', // Hangul filler
      '\u115F',
      '\uFFA0',
      '\u2800', // braille blank
      'A\u034Fna', // combining grapheme joiner
      'Ana\u{1D173}', // musical format control
      'Ana\u2028x',
      'Ana\u200D', // a joiner that joins nothing
      'a\uFE0F', // a variation selector on a letter
      `a${'\u0301'.repeat(20)}`, // an overlong cluster
    ];
    for (const bad of hidden) expect(cleanName(bad), JSON.stringify(bad)).toBeNull();
    for (const good of [
      'Ana \u2764\uFE0F',
      '1\uFE0F\u20E3 Bob',
      '\u{1F441}\uFE0F\u200D\u{1F5E8}\uFE0F eye',
      '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Scot',
      '\u{1F44D}\u{1F3FD} Kim',
      'Nguy\u1EC5n',
      '\u0645\u062D\u0645\u062F',
    ]) {
      expect(cleanName(good)).toBe(good);
    }
  });

  it('refuses text with an overlong grapheme cluster, naming why, and keeps ordinary marks and emoji', () => {
    for (const text of ['\u{1F3FB}'.repeat(2000), `a${'\u0301'.repeat(3999)}`, '\u1100'.repeat(40), `\u{1F469}${'\u200D\u{1F469}'.repeat(20)}`]) {
      const r = parseClientFrame(JSON.stringify({ type: 'say', text, clientId: 'c' }), 4000);
      expect(r).toMatchObject({ ok: false, clientId: 'c', error: { code: 'ERR_BAD_MESSAGE', message: expect.stringContaining('combining marks') } });
    }
    const fine = 'Ti\u1EBFng Vi\u1EC7t, \u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}, \u{1F44D}\u{1F3FD}, \uD55C\uAD6D\uC5B4, a\u0301\u0302\u0303';
    expect(parseClientFrame(JSON.stringify({ type: 'say', text: fine, clientId: 'c' }), 4000)).toEqual({
      ok: true,
      frame: { type: 'say', text: fine, clientId: 'c' },
    });
  });
});

describe('Identity', () => {
  it('keeps one secret in DATA_DIR with mode 0600 and verifies only its own tokens', () => {
    const { dir, cleanup } = tempDir();
    try {
      const a = new Identity(loadOrCreateSecret(join(dir, 'data')));
      expect(statSync(join(dir, 'data', IDENTITY_SECRET_FILE)).mode & 0o777).toBe(0o600);
      const b = new Identity(loadOrCreateSecret(join(dir, 'data')));
      const { id, token } = a.issue();
      expect(b.check(token)).toEqual({ ok: true, userId: id, legacy: false });
      const other = new Identity(loadOrCreateSecret(join(dir, 'elsewhere')));
      expect(other.check(token)).toEqual({ ok: false, reason: 'invalid' });
      expect(a.check(token.replace(id, other.issue().id))).toEqual({ ok: false, reason: 'invalid' });
      expect(a.issue().id).not.toBe(id);
    } finally {
      cleanup();
    }
  });
});

describe('bus envelopes', () => {
  it('round-trip and refuse foreign payloads', () => {
    const frame = JSON.stringify({ type: 'message', message: { text: 'line\nbreak' } });
    const e = { node: 'n1', delivery: 'typing' as const, user: 'u_1', frame };
    expect(decodeEnvelope(encodeEnvelope(e))).toEqual(e);
    // A frame of an answer says beside it which answer it is part of, and its question's seq.
    const piece = { node: 'n1', delivery: 'all' as const, answer: { answer: 'ans_1', questionSeq: 7 }, frame: '{"type":"error"}' };
    expect(decodeEnvelope(encodeEnvelope(piece))).toEqual(piece);
    const unasked = { ...piece, answer: { answer: 'ans_1' } };
    expect(decodeEnvelope(encodeEnvelope(unasked))).toEqual(unasked);
    for (const bad of ['', 'no newline', '{bad json}\nx', '{"n":"a","d":"everyone"}\nx']) expect(decodeEnvelope(bad)).toBeNull();
    // A header naming no node, a user that is no id, a `user` frame for nobody, or an answer or a question seq that is none.
    for (const header of [
      { n: '', d: 'all' },
      { n: 'x'.repeat(257), d: 'all' },
      { n: 'a', d: 'typing', u: 5 },
      { n: 'a', d: 'user' },
      { n: 'a', d: 'all', a: '' },
      { n: 'a', d: 'all', a: 'ans_1', q: 0 },
      { n: 'a', d: 'all', a: 'ans_1', q: 1.5 },
      { n: 'a', d: 'all', a: 'ans_1', q: '7' },
    ]) {
      expect(decodeEnvelope(`${JSON.stringify(header)}\n{}`), JSON.stringify(header)).toBeNull();
    }
  });

  it('carry thread moves, merges and deletions, and refuse malformed ones', () => {
    for (const move of [{ moves: [{ ids: ['m1', 'm2'], threadId: 't2' }] }, { merged: { absorbedId: 't2', survivorId: 't1' } }, { deleted: 't3' }]) {
      expect(parseThreadMove(JSON.stringify(move))).toEqual(move);
    }
    for (const bad of [
      '',
      'nope',
      '{}',
      '{"moves":[{"ids":[1],"threadId":"t"}]}',
      '{"moves":[{"ids":["a"]}]}',
      '{"merged":{"absorbedId":"a"}}',
      '{"deleted":5}',
      'null',
    ]) {
      expect(parseThreadMove(bad), bad).toBeNull();
    }
  });
});

describe('commands and asks', () => {
  it('recognises @ai and /ask questions and slash commands', () => {
    expect(askQuestion('@ai  what?')).toBe('what?');
    expect(askQuestion('/ask why')).toBe('why');
    expect(askQuestion('/ASK')).toBe('');
    expect(askQuestion('@aid me')).toBeNull();
    expect(askQuestion('hello @ai')).toBeNull();
    expect(parseCommand('/thread new  My title ')).toEqual({ name: 'thread', args: 'new  My title' });
    expect(parseCommand('/r/programming')).toBeNull();
    expect(parseCommand('not /a command')).toBeNull();
  });
});

describe('origins', () => {
  it('allows absent, same-host, listed and wildcard origins only', () => {
    expect(originAllowed(undefined, 'h', [])).toBe(true);
    expect(originAllowed('https://h:8443', 'h:8443', [])).toBe(true);
    expect(originAllowed('https://H.example', 'h.example', [])).toBe(true);
    expect(originAllowed('https://a.example', 'h', ['https://a.example'])).toBe(true);
    expect(originAllowed('https://b.example', 'h', ['*'])).toBe(true);
    expect(originAllowed('https://b.example', 'h', ['https://a.example'])).toBe(false);
    expect(originAllowed('null', 'h', [])).toBe(false);
    expect(originAllowed('https://h:8443', 'h', [])).toBe(false);
  });

  it('compares a custom scheme’s origin exactly, never as the opaque origin "null" every such scheme shares', () => {
    const allowed = loadConfig({ ALLOWED_ORIGINS: 'capacitor://localhost' }).ALLOWED_ORIGINS;
    expect(originAllowed('capacitor://localhost', 'salon.test', allowed)).toBe(true);
    for (const origin of ['evil-scheme://attacker.example', 'chrome-extension://abcdefgh', 'capacitor://localhost.evil', 'null', 'http://localhost']) {
      expect(originAllowed(origin, 'salon.test', allowed), origin).toBe(false);
    }
    // The page's own origin is an http(s) one: another scheme on the same host is not it.
    expect(originAllowed('evil-scheme://salon.test', 'salon.test', [])).toBe(false);
  });
});

describe('room options and topic slugs', () => {
  it('names a bad option', () => {
    expect(() => roomOptions({ rateBurst: 0 })).toThrow(/rateBurst/);
    expect(() => roomOptions({ softBufferedBytes: 10, hardBufferedBytes: 5 })).toThrow(/softBufferedBytes/);
    expect(() => roomOptions({ softBufferedBytes: 1_000, hardBufferedBytes: 10_000, nodeBufferedBytes: 5_000 })).toThrow(/nodeBufferedBytes/);
  });

  it('slugs categories', () => {
    expect(topicSlug(' Tech & Science ')).toBe('tech-science');
    expect(topicSlug('Économie')).toBe('économie');
  });
});
