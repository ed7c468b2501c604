/**
 * Tests that read the shared corpora (SALON_CORPORA, default ../shared/corpora) in place. Where
 * the corpora are absent, vitest.config.ts leaves those test files out with a message naming them;
 * with SALON_REQUIRE_CORPORA=1 (CI) their absence stops the run instead. A file needs the corpora
 * when it names CORPORA or imports (at any depth) a test module that does.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { readSetting } from '../src/config.js';

const IMPORT = /from '(\.{1,2}\/[^']+)\.js'/g;

function testModules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testModules(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Test files (relative to `root`) that need the corpora. */
export function filesNeedingCorpora(root: string): string[] {
  const modules = testModules(join(root, 'test'));
  const imports = new Map(modules.map((m) => [m, [...readFileSync(m, 'utf8').matchAll(IMPORT)].map((i) => resolve(dirname(m), `${i[1]}.ts`))]));
  // helpers.ts defines CORPORA; it does not need the corpora by itself.
  const needs = new Set(modules.filter((m) => !m.endsWith(join('test', 'helpers.ts')) && /\bCORPORA\b/.test(readFileSync(m, 'utf8'))));
  for (let grew = true; grew;) {
    grew = false;
    for (const [m, deps] of imports) {
      if (!needs.has(m) && deps.some((d) => needs.has(d))) {
        needs.add(m);
        grew = true;
      }
    }
  }
  return [...needs].filter((m) => m.endsWith('.test.ts')).map((m) => relative(root, m));
}

/** Test files to leave out of this run: none when the corpora are here. Throws when CI requires them. */
export function corporaExclusions(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const corpora = resolve(root, readSetting('SALON_CORPORA', env));
  if (existsSync(corpora)) return [];
  if (env.SALON_REQUIRE_CORPORA === '1') throw new Error(`SALON_REQUIRE_CORPORA=1 but the corpora are not at ${corpora} (SALON_CORPORA)`);
  const skipped = filesNeedingCorpora(root);
  console.warn(
    `The shared corpora are not at ${corpora} (set SALON_CORPORA): skipping ${skipped.length} test files that read them:\n  ${skipped.join('\n  ')}`,
  );
  return skipped;
}
