import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SalonError, errors } from '../src/errors.js';

describe('error catalogue', () => {
  const entries = Object.entries(errors);

  it('names each error after its code', () => {
    for (const [key, cls] of entries) {
      expect(cls.code).toBe(key);
      expect(key).toMatch(/^ERR_[A-Z_]+$/);
    }
  });

  it('gives each error a 4xx or 5xx status and a message', () => {
    for (const [, cls] of entries) {
      expect(cls.statusCode).toBeGreaterThanOrEqual(400);
      expect(cls.statusCode).toBeLessThan(600);
      expect(cls.template.length).toBeGreaterThan(5);
    }
  });

  it('fills templates and keeps the cause', () => {
    const cause = new Error('boom');
    const e = new errors.ERR_FETCH_FAILED('http://x.test', 'reset', cause);
    expect(e).toBeInstanceOf(SalonError);
    expect(e.code).toBe('ERR_FETCH_FAILED');
    expect(e.statusCode).toBe(502);
    expect(e.message).toBe('Fetching http://x.test failed: reset');
    expect(e.cause).toBe(cause);
  });

  it('documents every code in docs/errors.md, and nothing else', () => {
    const doc = readFileSync(join(__dirname, '../docs/errors.md'), 'utf8');
    const documented = new Set(doc.match(/`(ERR_[A-Z_]+)`/g)?.map((s) => s.slice(1, -1)));
    for (const [key] of entries) expect(documented, `${key} missing from docs/errors.md`).toContain(key);
    for (const code of documented) expect(errors, `${code} documented but not in the catalogue`).toHaveProperty(code);
  });
});
