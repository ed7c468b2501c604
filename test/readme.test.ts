import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS, describeSettings } from '../src/config.js';
import { testApp } from './helpers.js';

const ROOT = join(__dirname, '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** A table row whose first cell is `first`, however prettier pads the cells to line the columns up. */
const rowStarting = (first: string) => new RegExp(`^\\| ${first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +\\|`, 'm');

/** The command names of the COMMANDS table in src/cli/main.ts. */
function cliCommands(): string[] {
  const names = [...read('src/cli/main.ts').matchAll(/^\s+(\w+): \(\) => import\('\.\/commands\//gm)].map((m) => m[1]);
  expect(names.length).toBeGreaterThan(0);
  return names;
}

describe('README', () => {
  const readme = read('README.md');
  it('lists every configuration variable', () => {
    for (const name of Object.keys(SETTINGS)) expect(readme, name).toMatch(rowStarting(`\`${name}\``));
  });
  it('gives each configuration variable the default and the values config.ts takes (the table had no ranges)', () => {
    const cells = (line: string) => line.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
    const table = new Map(
      readme
        .split(/^\| variable +\| default +\| accepts +\| meaning +\|$/m)[1]
        .split('\n\n')[0]
        .split('\n')
        .filter((l) => /^\| `[A-Z0-9_]+` +\|/.test(l))
        .map(cells)
        .map(([, name, def, accepts]) => [name.replace(/`/g, ''), { default: def.replace(/`/g, ''), accepts }]),
    );
    expect(table.size).toBe(describeSettings().length);
    for (const s of describeSettings()) expect(table.get(s.name), s.name).toEqual({ default: s.default, accepts: s.accepts });
  });
  it('states the two commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
  it('has a CLI table row for every command', () => {
    for (const name of cliCommands()) expect(readme, name).toMatch(new RegExp(`^\\| \`${name}[ \`]`, 'm'));
  });
  it('explains every bench and eval script', () => {
    const scripts = Object.keys(JSON.parse(read('package.json')).scripts as Record<string, string>).filter((s) => /^(bench|eval):/.test(s));
    expect(scripts.length).toBeGreaterThan(0);
    for (const s of scripts) expect(readme, s).toContain(`npm run ${s}`);
  });
  it('names every flag each bench and eval prints in its --help (needs a build)', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    for (const [name, command] of Object.entries(scripts).filter(([s]) => /^(bench|eval):/.test(s))) {
      const r = spawnSync(process.execPath, [join(ROOT, command.split(' ').pop()!), '--help'], { encoding: 'utf8' });
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      const flags = [...new Set(r.stdout.match(/--[a-z][a-z-]*/g))];
      expect(flags.length, name).toBeGreaterThan(0);
      for (const flag of flags) expect(readme, `${name} ${flag}`).toContain(flag);
    }
  });
  it('links the API, protocol, client and error docs, and they exist', () => {
    for (const doc of ['docs/api.md', 'docs/protocol.md', 'docs/client.md', 'docs/errors.md']) {
      expect(readme, doc).toContain(`](${doc})`);
      expect(existsSync(join(ROOT, doc)), doc).toBe(true);
    }
  });
});

describe('docs/api.md', () => {
  it('lists every route of the OpenAPI document with its method', async () => {
    const { app, close } = await testApp();
    try {
      const doc = (await app.inject('/api/v1/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> };
      const api = read('docs/api.md');
      const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`));
      expect(routes.length).toBeGreaterThan(5);
      for (const route of routes) expect(api, route).toContain(`\`${route}\``);
    } finally {
      await close();
    }
  });

  it('shows a thread with every field the API returns, config’s own fields included (privileged was missing)', async () => {
    const { app, close } = await testApp();
    try {
      type Schema = { properties?: Record<string, Schema>; items?: Schema };
      const doc = (await app.inject('/api/v1/openapi.json')).json() as {
        paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>>;
      };
      const thread = doc.paths['/api/v1/rooms/{id}/threads'].get.responses['200'].content['application/json'].schema.properties!.threads.items!.properties!;
      const shape = /a thread is `(\{.*?\})`/.exec(read('docs/api.md'))?.[1] ?? '';
      for (const field of Object.keys(thread)) expect(shape, field).toMatch(new RegExp(`[{ ]${field}[,:}]`));
      const config = /config: \{([^}]*)\}/.exec(shape)?.[1] ?? '';
      expect(config.split(',').map((s) => s.trim())).toEqual(Object.keys(thread.config.properties!));
    } finally {
      await close();
    }
  });

  it('lists every series of GET /metrics the app defines (the process’s go by their prefixes)', async () => {
    const { app, close } = await testApp();
    try {
      const row = read('docs/api.md')
        .split('\n')
        .find((l) => l.startsWith('| `GET /metrics`'))!;
      const names = (await app.salon.metrics.registry.getMetricsAsJSON()).map((m) => m.name);
      expect(names.length).toBeGreaterThan(10);
      for (const name of names) expect(row, name).toMatch(new RegExp(`\`${name}[\`{]`));
    } finally {
      await close();
    }
  });
});

describe('docs/protocol.md', () => {
  it('names every warning code a room can be sent (ASSISTANT_QUEUED and FUSION_FALLBACK were not)', () => {
    const sources = spawnSync('grep', ['-rhoPz', "type: 'warning',\\s*code: '\\w+'", join(ROOT, 'src')], { encoding: 'utf8' }).stdout;
    const codes = [...sources.matchAll(/code: '(\w+)'/g)].map((m) => m[1]);
    expect(codes.length).toBeGreaterThan(1);
    const row = read('docs/protocol.md')
      .split('\n')
      .find((l) => rowStarting('`warning`').test(l))!;
    for (const code of codes) expect(row, code).toContain(`\`${code}\``);
  });
});

describe('salon --help', () => {
  it('lists every command (needs a build: npm test builds first)', () => {
    const bin = join(ROOT, 'bin/salon.js');
    const r = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
    expect(r.status, r.stderr).toBe(0);
    for (const name of cliCommands()) expect(r.stdout, name).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    for (const name of Object.keys(SETTINGS)) expect(r.stdout, name).toContain(name);
  });

  it('matches the README’s CLI table for every command of one form (extract’s --json is optional)', () => {
    const rows = read('README.md').split('\n');
    for (const name of cliCommands()) {
      const usage = spawnSync(process.execPath, [join(ROOT, 'bin/salon.js'), name, '--help'], { encoding: 'utf8' }).stdout.split('\n')[0];
      if (!usage.startsWith('usage: salon ')) continue; // several forms, one a line: threads, sources
      const cell = rows
        .find((l) => l.startsWith(`| \`${name}`))!
        .split(/(?<!\\)\|/)[1]
        .trim();
      expect(cell.slice(1, -1).replace(/\\\|/g, '|'), name).toBe(usage.slice('usage: salon '.length).replace(/ \| /g, '|'));
    }
  });

  it('prints a command’s own usage for `salon COMMAND --help`, all its forms, with exit 0 (it was refused as an unknown option)', () => {
    const bin = join(ROOT, 'bin/salon.js');
    const help = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
    const threads = help('threads', '--help');
    expect(threads.status, threads.stderr).toBe(0);
    expect(threads.stdout).toContain('salon threads split THREAD --parts JSON|@FILE');
    expect(help('sources', 'add', '-h').stdout).toContain('salon sources add hn top|best|new|STORY_URL');
    expect(help('ingest', '--help').stdout).toContain('--youtube-feed URL');
    expect(help('search', '--help').stdout).toMatch(/^usage: salon search "query"/);
    expect(help('help', 'import').stdout).toMatch(/^usage: salon import FILE --room ID/);
  });
});
