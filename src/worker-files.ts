/**
 * Where compiled worker files live. Workers always run compiled code from dist/workers: this module
 * may be loaded from dist/src (production) or from src through vitest, so the path is resolved to
 * dist/workers either way. Every worker pool and thread finds its file here.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const inDist = here.split(sep).includes('dist');
const distRoot = inDist ? resolve(here, '..') : resolve(here, '../dist');

/** Absolute path of a built file in dist/workers, e.g. `search-scan.js` or `search-kernel.wasm`. */
export function builtWorkerFile(name: string): string {
  const path = join(distRoot, 'workers', name);
  if (!existsSync(path)) throw new Error(`${path} is missing; run \`node scripts/build.mjs\` first`);
  return path;
}
