import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BenchUsageError, parseBenchArgs } from '../../bench/args.js';

const FLAGS = { items: 'string', ratio: 'string', mode: 'string', cpu: 'boolean' } as const;
const parse = (...argv: string[]) => parseBenchArgs(FLAGS, argv);
const refusal = (read: () => unknown) => {
  try {
    read();
  } catch (err) {
    if (err instanceof BenchUsageError) return err.message;
    throw err;
  }
  throw new Error('the command line was accepted');
};

describe('parseBenchArgs', () => {
  it('reads declared flags and falls back to defaults for the rest', () => {
    const { help, args } = parse('--items', '500', '--cpu', '--mode=fast');
    expect(help).toBe(false);
    expect(args.number('items', 10, { integer: true, min: 1 })).toBe(500);
    expect(args.number('ratio', 0.3, { min: 0, max: 1 })).toBe(0.3);
    expect(args.optionalNumber('ratio')).toBeUndefined();
    expect(args.flag('cpu')).toBe(true);
    expect(args.choice('mode', ['fast', 'slow'], 'slow')).toBe('fast');
  });

  it('refuses a flag the benchmark does not know, naming it', () => {
    expect(refusal(() => parse('--itmes', '500'))).toContain('--itmes');
  });

  it('refuses positionals and a string flag without its value', () => {
    expect(refusal(() => parse('500'))).toMatch(/500/);
    expect(refusal(() => parse('--items'))).toContain('--items');
  });

  it('refuses values a flag cannot take, naming the flag and the value', () => {
    expect(refusal(() => parse('--items', 'many').args.number('items', 1, { integer: true }))).toBe('--items: expected a whole number, got "many"');
    expect(refusal(() => parse('--items', '2.5').args.number('items', 1, { integer: true, min: 1 }))).toBe('--items: expected a whole number ≥ 1, got "2.5"');
    expect(refusal(() => parse('--items', '0').args.number('items', 1, { integer: true, min: 1 }))).toContain('≥ 1');
    expect(refusal(() => parse('--ratio', '1.5').args.number('ratio', 0, { min: 0, max: 1 }))).toBe('--ratio: expected a number ≥ 0 and ≤ 1, got "1.5"');
    expect(refusal(() => parse('--ratio', ' ').args.number('ratio', 0))).toContain('--ratio');
    expect(refusal(() => parse('--mode', 'medium').args.choice('mode', ['fast', 'slow'], 'slow'))).toBe('--mode: expected fast or slow, got "medium"');
    expect(refusal(() => parse().args.required('items'))).toBe('--items is required');
  });

  it('answers --help without reading the rest of the line', () => {
    expect(parse('--nonsense', '--help').help).toBe(true);
    expect(parse('-h').help).toBe(true);
  });

  it('treats reading an undeclared flag as the benchmark’s own bug', () => {
    expect(() => parse().args.text('other')).toThrow(/not a declared string flag/);
    expect(() => parse().args.flag('items')).toThrow(/not a declared boolean flag/);
  });
});

/** Every `bench:*` and `eval:*` script of package.json, as the compiled file it runs. */
function benchScripts(): { script: string; file: string }[] {
  const root = join(import.meta.dirname, '../..');
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return Object.entries(scripts)
    .filter(([name]) => /^(bench|eval):/.test(name))
    .map(([script, command]) => {
      const file = /node (dist\/bench\/[\w-]+\.js)/.exec(command)?.[1];
      if (!file) throw new Error(`${script}: no dist/bench file in ${JSON.stringify(command)}`);
      return { script, file: join(root, file) };
    });
}

describe('every benchmark and evaluation', () => {
  const scripts = benchScripts();

  it('is found in package.json', () => {
    expect(scripts.map((s) => s.script)).toEqual(expect.arrayContaining(['bench:search', 'bench:ws', 'bench:rag', 'bench:fusion', 'eval:memory']));
  });

  // A refused line stops before any work (no data generated, no server started), so these are quick.
  it.each(scripts)('$script prints its usage for --help and refuses an unknown flag with exit code 2', ({ file }) => {
    const help = spawnSync(process.execPath, [file, '--help'], { encoding: 'utf8', timeout: 60_000 });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run (bench|eval):/);

    const wrong = spawnSync(process.execPath, [file, '--no-such-flag', '3'], { encoding: 'utf8', timeout: 60_000 });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("'--no-such-flag'");
    expect(wrong.stderr).toContain('usage: npm run');
    expect(wrong.stdout).toBe('');
  });
});
