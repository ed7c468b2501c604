// What a site is for `source=` (src/protocol/search.ts): the host of an item's url, compared without www. and case.
import { describe, expect, it } from 'vitest';
import { normalizeSite, onSite, siteOf } from '../../src/protocol/search.js';

describe('sites', () => {
  it('takes the host of an http(s) url, lowercased, without www.', () => {
    expect(siteOf('https://www.Example.COM/a?b#c')).toBe('example.com');
    expect(siteOf('http://news.example.com:8080/x')).toBe('news.example.com');
    expect(siteOf('http://127.0.0.1/x')).toBe('127.0.0.1');
    for (const url of [null, undefined, '', 'javascript:alert(1)', 'mailto:a@example.com', 'ftp://example.com/', '/relative', 'not a url'])
      expect(siteOf(url)).toBeNull();
  });

  it('accepts host names only', () => {
    expect(normalizeSite('WWW.Example.com.')).toBe('example.com');
    expect(normalizeSite('xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    for (const bad of [
      '',
      'https://example.com',
      'example.com/x',
      'exa mple.com',
      'example.com:80',
      '-example.com',
      'a..b',
      '<script>',
      'a.'.repeat(127) + 'com',
    ])
      expect(normalizeSite(bad)).toBeNull();
  });

  it('matches a site and its subdomains, not a host that merely ends in the same letters', () => {
    expect(onSite('example.com', 'example.com')).toBe(true);
    expect(onSite('news.example.com', 'example.com')).toBe(true);
    expect(onSite('notexample.com', 'example.com')).toBe(false);
    expect(onSite('example.com', 'news.example.com')).toBe(false);
    expect(onSite(null, 'example.com')).toBe(false);
  });
});
