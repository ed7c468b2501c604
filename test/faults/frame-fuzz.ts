/**
 * Hostile room frames from a seeded generator: malformed JSON, wrong types, unicode in every field
 * (`type` and `name` included), huge and deeply nested values, prototype keys, binary frames, slash
 * commands with hostile arguments and private asks.
 * The same seed gives the same frames, so a failure can be replayed.
 */

/** A frame to send: text, or bytes sent as a binary frame. */
export type FuzzFrame = { kind: 'text'; data: string } | { kind: 'binary'; data: Buffer };

/** mulberry32: small, fast and good enough to vary test input. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_STRINGS = [
  '€'.repeat(40),
  '𝕊'.repeat(60),
  '\u202eevil\u202c',
  'a\u200bb',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  'e\u0301\u0301\u0301',
  'ﷺ'.repeat(30),
  '\n\r\t',
  '<script>alert(1)</script>',
  '"quoted"\\',
  'assistant',
  'system',
  '@ai ' + 'x'.repeat(50),
  '/ask ' + '€'.repeat(20),
  '/merge a b',
  '',
  ' ',
  '🙂'.repeat(200),
];
const TYPES = ['hello', 'say', 'ask', 'typing', 'ping'];
const FIELDS = ['type', 'name', 'text', 'clientId', 'threadId', 'token', 'lastSeq', 'active', 'private'];

export class FrameFuzzer {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = prng(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  private int(max: number): number {
    return Math.floor(this.random() * max);
  }

  /** Any JSON-able value, sometimes odd. */
  private value(depth = 0): unknown {
    switch (this.int(depth > 2 ? 6 : 9)) {
      case 0:
        return this.pick(ODD_STRINGS);
      case 1:
        return this.pick([0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 53]);
      case 2:
        return this.pick([true, false, null]);
      case 3:
        return String.fromCodePoint(...Array.from({ length: 1 + this.int(40) }, () => this.int(0x10ffff + 1) & ~0x800));
      case 4:
        return 'x'.repeat(this.int(5000));
      case 5:
        return this.pick(TYPES);
      case 6:
        return Array.from({ length: this.int(4) }, () => this.value(depth + 1));
      case 7:
        return Object.fromEntries(Array.from({ length: this.int(4) }, () => [this.pick(FIELDS), this.value(depth + 1)]));
      default:
        return `c${this.int(1000)}`;
    }
  }

  /** A frame object with every field drawn at random (sometimes a valid one). */
  private objectFrame(): string {
    const frame: Record<string, unknown> = { type: this.random() < 0.7 ? this.pick(TYPES) : this.value() };
    for (const field of FIELDS.slice(1)) if (this.random() < 0.5) frame[field] = this.value();
    if (this.random() < 0.3) {
      frame.clientId = `c${this.int(1_000_000)}`;
      frame.text = this.pick(ODD_STRINGS) || 'hi';
    }
    return JSON.stringify(frame);
  }

  private deepNesting(): string {
    const depth = 1000 + this.int(4000);
    const open = this.random() < 0.5 ? '['.repeat(depth) : '{"a":'.repeat(depth);
    const close = open.startsWith('[') ? ']'.repeat(depth) : '}'.repeat(depth);
    return `{"type":"say","clientId":"deep","text":${open}1${close}}`;
  }

  private protoKeys(): string {
    return this.pick([
      '{"__proto__":{"type":"hello","name":"x"}}',
      '{"type":"hello","name":"Proto","__proto__":{"admin":true,"token":"x"}}',
      '{"type":"say","clientId":"p","text":"hi","constructor":{"prototype":{"polluted":1}}}',
      '{"type":"__proto__"}',
      '{"type":"constructor","name":"toString"}',
      '{"type":"hello","name":{"__proto__":null}}',
    ]);
  }

  private brokenJson(): string {
    const valid = this.objectFrame();
    switch (this.int(6)) {
      case 0:
        return valid.slice(0, this.int(valid.length));
      case 1:
        return valid.replace(/"/g, "'");
      case 2:
        return Buffer.from(Array.from({ length: this.int(200) + 1 }, () => this.int(256))).toString('latin1');
      case 3:
        return this.pick(['', 'null', '[]', '1', '"hello"', 'NaN', '{}', '{"type":null}', 'true']);
      case 4:
        return `${valid}${valid}`;
      default:
        return `\ufeff${valid}`;
    }
  }

  /** An argument a command might get: an odd string, a thread-like id, a number, a key=value pair. */
  private argument(): string {
    switch (this.int(6)) {
      case 0:
        return this.pick(ODD_STRINGS).replace(/\s+/g, '_') || 'x';
      case 1:
        return `thr_${this.int(1e9).toString(16)}`;
      case 2:
        return this.pick(['NaN', 'Infinity', '-0', '1e-300', '0.5', '2', '0x1', 'constructor', '__proto__']);
      case 3:
        return `${this.pick(['titles', 'msgs_0', 'msgs_1', 'lock', 'constructor', 'msgs_99'])}=${this.pick(['A,B', 'abcdefgh,abcdefgh', '_,_', 'force', 'evil', ',,,'])}`;
      case 4:
        return 'x'.repeat(this.int(3000));
      default:
        return this.pick(['new', 'confirm', 'on', 'off', 'ON', '']);
    }
  }

  /** A slash command (docs/protocol.md §3.1) with hostile arguments, in a `say`. */
  private command(): string {
    const name = this.pick(['threads', 'thread', 'merge', 'fuse', 'split', 'unlock', 'memory', 'help', 'ask', 'constructor', 'toString', 'x-y']);
    const args = Array.from({ length: this.int(6) }, () => this.argument()).join(this.pick([' ', '  ', '\n', '\t']));
    const text = `/${name}${args ? ` ${args}` : ''}`.slice(0, 4000);
    return JSON.stringify({ type: 'say', clientId: `cmd${this.int(1_000_000)}`, text, ...(this.random() < 0.2 ? { threadId: this.argument() || 'x' } : {}) });
  }

  /** A private ask with odd text, sometimes naming a thread. */
  private privateAsk(): string {
    const text = this.random() < 0.5 ? this.pick(ODD_STRINGS) || 'why?' : `${this.pick(ODD_STRINGS)} ${this.argument()}`.slice(0, 4000);
    return JSON.stringify({
      type: 'ask',
      clientId: `pa${this.int(1_000_000)}`,
      text,
      private: true,
      ...(this.random() < 0.3 ? { threadId: this.argument() || 'x' } : {}),
    });
  }

  /** The next hostile frame. */
  next(): FuzzFrame {
    const r = this.random();
    if (r < 0.05) return { kind: 'binary', data: Buffer.from(Array.from({ length: this.int(300) }, () => this.int(256))) };
    if (r < 0.1) return { kind: 'text', data: this.deepNesting() };
    if (r < 0.15) return { kind: 'text', data: this.protoKeys() };
    if (r < 0.17) return { kind: 'text', data: JSON.stringify({ type: 'say', clientId: 'huge', text: '€'.repeat(6000 + this.int(4000)) }) };
    if (r < 0.27) return { kind: 'text', data: this.command() };
    if (r < 0.31) return { kind: 'text', data: this.privateAsk() };
    if (r < 0.5) return { kind: 'text', data: this.brokenJson() };
    return { kind: 'text', data: this.objectFrame() };
  }
}
