import { describe, expect, it } from 'vitest';
import { scrub } from '../../src/ai/remote/errors-map.js';
import { clampClusters, hasOverlongCluster } from '../../src/protocol/clusters.js';
import { tellsTime } from '../../src/ai/local/time-told.js';
import { cleanText } from '../../src/content/text.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { MAX_LOG_TEXT_CHARS, errorForLog, textForLog } from '../../src/log-text.js';
import { deedAsked, namesDoer, namesModels, tellsDeed } from '../../src/ai/local/answer-cues.js';
import { askedUnits } from '../../src/ai/local/asked-units.js';
import { saySameThing } from '../../src/memory/threads/same-meaning.js';
import { citedNumbers } from '../../src/rag/cited-sources.js';
import { withoutNonceLookalikes } from '../../src/ai/nonce-lookalikes.js';

/**
 * Regexes that read untrusted text (sources' sentences, messages) over multi-megabyte adversarial
 * input: each case hung (quadratic backtracking) before its fix, and must now finish.
 */
const MIB = 1 << 20;

describe('regexes over megabytes of untrusted text', () => {
  it('tellsTime: a number then megabytes of spaces (the look back for "9 May" walked every run again)', () => {
    expect(tellsTime(`9${' '.repeat(4 * MIB)}x`)).toBe(false);
    expect(tellsTime(`on 9${' '.repeat(4 * MIB)}May`)).toBe(true);
    expect(tellsTime('The launch May slip')).toBe(false);
    expect(tellsTime('it opened 9 May')).toBe(true);
  });

  it('tellsTime: a long sentence is read in windows, and a time anywhere in it is still told', () => {
    const words = 'the launch team met again '.repeat(40_000);
    expect(tellsTime(words)).toBe(false);
    expect(tellsTime(`${words}in 1969`)).toBe(true);
    expect(tellsTime(`${words.slice(0, 4090)} two${' '.repeat(MIB)}years ${words}`)).toBe(true);
    expect(tellsTime(`${'ab'.repeat(3 * MIB)} 12 May`)).toBe(true);
    for (let cut = 4000; cut < 4200; cut += 7) expect(tellsTime(`${'a '.repeat(cut)}9 May ${'a '.repeat(cut)}`)).toBe(true);
  });

  it("textForLog: megabytes of scheme characters with no :// (a scheme was read to the run's end from each of its words)", () => {
    const dashed = 'a-'.repeat(2 * MIB);
    expect(textForLog(dashed)).toBe(`${dashed.slice(0, MAX_LOG_TEXT_CHARS)}… [${dashed.length - MAX_LOG_TEXT_CHARS} more characters]`);
    const kept = dashed.slice(0, MAX_LOG_TEXT_CHARS - 100);
    expect(textForLog(`${kept}x://u:secret@host`)).toBe(`${kept}x://host`);
    expect(textForLog('_http://u:secret@host')).toBe('_http://u:secret@host');
    expect(textForLog('see .redis://u:secret@cache')).toBe('see .redis://cache');
  });
});

describe('digits-only passwords in logs', () => {
  it('scrubs a password of digits after an empty user or past any port, and keeps host:port', () => {
    expect(textForLog('connect redis://:12 hunter@cache failed')).toBe('connect redis://cache failed');
    expect(textForLog('redis://u:123456 x@cache')).toBe('redis://cache');
    expect(textForLog('redis://u:70000 x@cache')).toBe('redis://cache');
    expect(textForLog('redis://cache:6379 failed')).toBe('redis://cache:6379 failed');
    expect(textForLog('"redis://cache:65535", ask ops@example.com')).toBe('"redis://cache:65535", ask ops@example.com');
    expect(textForLog('"redis://cache:6379" failed, ask ops@example.com')).toBe('"redis://cache:6379" failed, ask ops@example.com');
    expect(textForLog('http://[::1]:3000 refused')).toBe('http://[::1]:3000 refused');
  });

  it('scrubs a password of digits, a space or tab, then more before the @ (read as host:12 and logged)', () => {
    expect(textForLog('connect redis://u:12 hunter@cache failed')).toBe('connect redis://cache failed');
    expect(textForLog('redis://user:1234 5678@cache')).toBe('redis://cache');
    expect(textForLog('redis://u:1 2 3@cache:6379/0')).toBe('redis://cache:6379/0');
    expect(textForLog('http://u:12\thunter@[::1]:8080 refused')).toBe('http://[::1]:8080 refused');
    expect(textForLog('mongodb://u:12 hunter@h1,h2/db')).toBe('mongodb://h1,h2/db');
    expect(textForLog('redis://cache:6379 (ask ops@example.com)')).toBe('redis://cache:6379 (ask ops@example.com)');
    expect(textForLog('redis://u:12"x@cache refused')).toBe('redis://cache refused');
    expect(textForLog("redis://u:12'x y@cache refused")).toBe('redis://cache refused');
    expect(textForLog('see "redis://cache:6379". Mail ops@example.com')).toBe('see "redis://cache:6379". Mail ops@example.com');
  });
});

describe('passwords that read like a port, a path or a line end', () => {
  it('scrubs digits then a comma, a path or an unpaired bracket before a space (read as host:port and logged)', () => {
    expect(textForLog('redis://u:12, x@h failed')).toBe('redis://h failed');
    expect(textForLog('redis://u:12/x y@h')).toBe('redis://h');
    expect(textForLog('redis://u:12) x@h')).toBe('redis://h');
    expect(textForLog('redis://u:12" x@h')).toBe('redis://h');
    expect(textForLog('at redis://cache:6379/0 for ann@example.com')).toBe('at redis://example.com');
    expect(textForLog('see "redis://cache:6379/0", ask ops@example.com')).toBe('see "redis://cache:6379/0", ask ops@example.com');
    expect(textForLog('(redis://cache:6379) ask ops@example.com')).toBe('(redis://cache:6379) ask ops@example.com');
  });

  it('scrubs a password with a line break in it, and keeps a port before a stack trace', () => {
    expect(textForLog('redis://u:pa\nss@h failed')).toBe('redis://h failed');
    expect(textForLog('redis://u:12\r\nx@h')).toBe('redis://h');
    expect(textForLog('redis://u:p w\nx@h')).toBe('redis://h');
    const trace = 'redis://cache:6379 failed\n    at x (/app/node_modules/@fastify/a.js:1:2)';
    expect(textForLog(trace)).toBe(trace);
    const pad = 'x'.repeat(MAX_LOG_TEXT_CHARS - 30);
    expect(textForLog(`${pad} redis://u:pa\n${'s'.repeat(40)}@h`)).not.toContain('u:pa');
  });

  it('scrubs a userinfo whose colon or @ is percent-encoded', () => {
    expect(textForLog('redis://u%3Ap@h')).toBe('redis://h');
    expect(textForLog('redis://u%3Ap w@h')).toBe('redis://h');
    expect(textForLog('redis://u%3A12, x@h')).toBe('redis://h');
    expect(textForLog('redis://%3Ap q@h')).toBe('redis://h');
    expect(textForLog('redis://u:p%40ss@h')).toBe('redis://h');
    expect(textForLog('redis://u:p%40s s@h')).toBe('redis://h');
  });
});

describe('log text over megabytes on one line', () => {
  it('keeps the first MAX_LOG_TEXT_CHARS and scrubs them, without running out of the backtrack stack', () => {
    const line = `fetch http://u:${'a'.repeat(8 * MIB)}`;
    const logged = textForLog(line);
    expect(logged).toBe(`fetch http://… [${line.length - 'fetch http://'.length} more characters]`);
    expect(textForLog(` /${'a('.repeat(4 * MIB)}?token=x`).startsWith(` /${'a('.repeat(100)}`)).toBe(true);
    const scrubbed = textForLog(`redis://u:pass word@cache ${'x '.repeat(4 * MIB)}`);
    expect(scrubbed.startsWith('redis://')).toBe(true);
    expect(scrubbed).not.toContain('pass');
  });

  it('never logs the start of a password cut by the bound', () => {
    const pad = 'x'.repeat(MAX_LOG_TEXT_CHARS - 20);
    expect(textForLog(`${pad} redis://u:hunter2hunter2@cache`)).toBe(`${pad} redis://… [${'u:hunter2hunter2@cache'.length} more characters]`);
    expect(textForLog(`${pad} redis://u:hunter2 and more@cache`)).not.toContain('hunter');
    const err = errorForLog(new Error(`connect http://u:${'b c '.repeat(2 * MIB)}@h failed`));
    expect(err.message).not.toContain('b c');
  });
});

describe('grapheme clusters over megabytes of marks', () => {
  it('a page of megabytes of combining marks is cut to the limit (the run was read whole, one backtrack entry a mark)', () => {
    const marks = '\u0301'.repeat(8 * MIB);
    expect(hasOverlongCluster(`a${marks}`)).toBe(true);
    expect(cleanText(`a${marks}b`)).toBe(`a${'\u0301'.repeat(16)}b`);
    expect(clampClusters(`x${'\u{1F44D}\u{1F3FD}\u200D'.repeat(MIB)}y z${marks}`)).toBe(
      `x${'\u{1F44D}\u{1F3FD}\u200D'.repeat(8)}\u{1F44D}y z${'\u0301'.repeat(16)}`,
    );
    const short = 'e\u0301'.repeat(2 * MIB);
    expect(hasOverlongCluster(short)).toBe(false);
    expect(clampClusters(short)).toBe(short);
  });
});

describe("a model server's error over megabytes", () => {
  it('scrub reads a bounded head of it (the key pattern read megabytes of key characters, one backtrack entry each)', () => {
    expect(scrub(`upstream said key-${'a'.repeat(8 * MIB)} then more`)).toBe('upstream said key-***');
    expect(scrub(`${'x '.repeat(4 * MIB)}`)).toBe(`${'x '.repeat(100)}…`);
    expect(scrub(`${'y'.repeat(150)} Bearer ${'b'.repeat(8 * MIB)}`, ['nothing'])).toBe(`${'y'.repeat(150)} Bearer-***`);
  });
});

describe('page metadata over megabytes', () => {
  it("a page's lang of megabytes of subtags is no language, and its article is still extracted (the tag's pattern ran out of the backtrack stack)", () => {
    const page = (lang: string) =>
      `<html lang="${lang}"><body><article><p>${'The council met again to vote on the bridge. '.repeat(20)}</p></article></body></html>`;
    const hostile = extractArticle(page(`en${'-ab'.repeat(3 * MIB)}`));
    expect(hostile.lang).toBeNull();
    expect(hostile.text).toContain('The council met again');
    expect(extractArticle(page('en_GB')).lang).toBe('en-GB');
  });
});

describe('words, numbers, citations and nonce look-alikes over megabytes', () => {
  const astral = '\u{10400}'.repeat(4 * MIB);
  const dashed = 'a-'.repeat(4 * MIB);

  it('a sentence of one megabyte word is read without RangeError (a repeated group or an astral letter class kept a backtrack entry a step)', () => {
    const built = deedAsked('who built the ships?')!;
    for (const sentence of [dashed, astral]) {
      expect(namesModels('Is the K2 fast?', sentence)).toBe(false);
      expect(tellsDeed(sentence, deedAsked('who forked the repo?')!)).toBe(false);
      expect(namesDoer(sentence, built)).toBe(false);
    }
    expect(namesDoer(`${"a'".repeat(4 * MIB)} built by Ann`, built)).toBe(true);
    expect(namesModels('Is the K2 fast?', `${astral} the K2 is fast`)).toBe(true);
    expect(askedUnits(`how dense is the VS-2 ${dashed}?`, ['vs', '2'])(['vs', '2'], () => 1)).toBe(1);
  });

  it('numbers and citations of megabytes of groups are read without RangeError', () => {
    expect(saySameThing(`it cost ${'1.'.repeat(4 * MIB)}5`, 'it cost 3')).toBe(false);
    expect(citedNumbers(`[${'1,'.repeat(4 * MIB)}1]`)).toEqual(new Set());
    expect(citedNumbers('as [2, 5] and [3] say')).toEqual(new Set([2, 5, 3]));
  });

  it('a run of megabytes of hex look-alikes is walked, and a nonce anywhere in it is still hidden', () => {
    const nonce = '0123456789abcdef0123456789abcdef';
    const run = 'a'.repeat(8 * MIB);
    expect(withoutNonceLookalikes(run, nonce)).toBe(run);
    expect(withoutNonceLookalikes(`x ${'a\u200b'.repeat(MIB)}${nonce.toUpperCase()}${'b'.repeat(MIB)} y`, nonce)).toBe(`x ${'x'.repeat(nonce.length)} y`);
    expect(withoutNonceLookalikes(`see ${nonce.slice(0, 16)}\u200d${nonce.slice(16)}.`, nonce)).toBe(`see ${'x'.repeat(nonce.length)}.`);
  });
});
