/**
 * Untrusted markdown for the browser suites: markdown-it's XSS cases and marked's ReDoS specs from
 * the shared corpora (read in place), generated worst cases, and payloads that would run script.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA } from '../helpers.js';

/** The markdown inputs of markdown-it's xss.txt: blocks between `.` lines, input then expected HTML. */
export function xssCases(): string[] {
  const lines = readFileSync(join(CORPORA, 'markdown/markdown-it/test/fixtures/markdown-it/xss.txt'), 'utf8').split('\n');
  const inputs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '.') continue;
    const input: string[] = [];
    for (i++; i < lines.length && lines[i] !== '.'; i++) input.push(lines[i]);
    for (i++; i < lines.length && lines[i] !== '.'; i++);
    inputs.push(input.join('\n'));
  }
  return inputs;
}

export function redosCases(): { name: string; text: string }[] {
  const dir = join(CORPORA, 'markdown/marked-redos/test/specs/redos');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => ({ name: f, text: readFileSync(join(dir, f), 'utf8') }));
}

/** Payloads that would run script (and trip the page's probes) if anything rendered them as HTML. */
export const ACTIVE_PAYLOADS = [
  '<script>window.__xss = "script"</script>',
  '<img src=x onerror="window.__xss = \'img\'">',
  '<svg onload="window.__xss = \'svg\'"></svg>',
  '<iframe src="javascript:window.__xss=\'iframe\'"></iframe>',
  '[click](javascript:window.__xss=1)',
  '[click](  javascript:alert(1))',
  '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '![img](x" onerror="window.__xss=1)',
  '[t](https://ok.example "x\\" onmouseover=\\"window.__xss=1")',
  '<a href="javascript:alert(1)">html link</a>',
  '`<script>alert(1)</script>`',
  '```html\n<script>alert(1)</script>\n```',
  '<details open ontoggle="alert(1)">x</details>',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '[x](vbscript:msgbox(1)) [y](file:///etc/passwd) [z](//evil.example/path)',
];

/**
 * One character carrying thousands of modifiers or marks: a single grapheme cluster, which Chromium
 * lays out in time that grows with the square of its length. The server refuses them in new
 * messages; the client cuts them wherever it renders stored or fetched text.
 */
export const OVERLONG_CLUSTERS = [
  { name: '2,000 skin-tone modifiers', text: '\u{1F3FB}'.repeat(2000) },
  { name: "'a' + 4,000 combining acute accents", text: `a${'\u0301'.repeat(4000)}` },
];

export function corpus(): { name: string; text: string }[] {
  return [
    ...xssCases().map((text, i) => ({ name: `xss.txt #${i + 1}`, text })),
    ...redosCases(),
    { name: "'a' + 50,000 spaces", text: `a${' '.repeat(50_000)}` },
    { name: '50,000 nested *', text: '*'.repeat(50_000) },
    { name: '25,000 *a', text: '*a'.repeat(25_000) },
    { name: '50,000 [', text: '['.repeat(50_000) },
    { name: '10,000 [a](', text: '[a]('.repeat(10_000) },
    { name: '20,000 `', text: '`'.repeat(20_000) },
    ...ACTIVE_PAYLOADS.map((text, i) => ({ name: `payload #${i + 1}`, text })),
    ...OVERLONG_CLUSTERS,
  ];
}
