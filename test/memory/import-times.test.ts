/**
 * The times of an import (checkImport's `ts`): ISO-8601 only, the same wherever the import runs,
 * days that exist.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkImport } from '../../src/memory/import.js';

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

const timeOf = (ts: unknown) => checkImport([{ author: { name: 'Ann' }, text: 'hi', ts }], 4_000)[0].ts;

describe('import times', () => {
  it('reads a time without an offset as UTC, whatever zone the command or server runs in', () => {
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
      process.env.TZ = tz;
      expect(timeOf('2024-01-01T10:00'), tz).toBe('2024-01-01T10:00:00.000Z');
      expect(timeOf('2024-01-01 10:00:00'), tz).toBe('2024-01-01T10:00:00.000Z');
      expect(timeOf('2024-01-01T10:00:00.5'), tz).toBe('2024-01-01T10:00:00.500Z');
    }
  });

  it('takes the ISO forms exports write', () => {
    expect(timeOf('2024-05-08')).toBe('2024-05-08T00:00:00.000Z');
    expect(timeOf('2024-05-08T13:00:00.000Z')).toBe('2024-05-08T13:00:00.000Z');
    expect(timeOf('2024-05-08t13:00:00z')).toBe('2024-05-08T13:00:00.000Z');
    expect(timeOf('2024-05-08T13:00:00+02:00')).toBe('2024-05-08T11:00:00.000Z');
    expect(timeOf('2024-05-08T13:00:00+0530')).toBe('2024-05-08T07:30:00.000Z');
    expect(timeOf('2024-05-08T13:00:00-02')).toBe('2024-05-08T15:00:00.000Z');
    expect(timeOf('2024-05-08T13:00:00.123456Z')).toBe('2024-05-08T13:00:00.123Z');
    expect(timeOf('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(timeOf('2000-02-29')).toBe('2000-02-29T00:00:00.000Z');
    expect(timeOf('0000-02-29')).toBe('0000-02-29T00:00:00.000Z');
    expect(timeOf('2024-12-31T24:00:00Z')).toBe('2025-01-01T00:00:00.000Z');
  });

  it('refuses text that is no ISO time, and days past the end of their month', () => {
    for (const ts of [
      '1',
      '0',
      '12',
      'May 8',
      'Jan 1 2024',
      'Mon, 01 Jan 2024 10:00:00 GMT',
      '2024-02-30T00:00:00Z',
      '2023-02-29',
      '2024-04-31',
      '1900-02-29',
      '2024-13-01',
      '2024-01-01T10Z',
      '2024-01-01T10:00:60Z',
      '',
      1_700_000_000_000,
    ])
      expect(() => timeOf(ts), String(ts)).toThrow(/messages\[0\]: ts must be an ISO-8601 time/);
  });
});
