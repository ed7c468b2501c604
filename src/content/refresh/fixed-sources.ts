/** The configured sources: the `DATA_DIR/sources` file (one `kind target [everyMinutes]` a line) and `SOURCES`. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { parseSourceLines, sourceIdOf, type SourceSpec } from './source-spec.js';

/** The name of the sources file in DATA_DIR. */
export const SOURCES_FILE = 'sources';

/**
 * Every configured source, the file's first; a source named twice counts once (the later entry
 * wins). A bad line throws an Error naming the file and the entry, which stops start-up.
 */
export async function fixedSources(config: Pick<Config, 'DATA_DIR' | 'SOURCES'>): Promise<SourceSpec[]> {
  const path = join(config.DATA_DIR, SOURCES_FILE);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw new Error(`${path}: ${err.message}`);
  });
  const byId = new Map<string, SourceSpec>();
  for (const spec of [...parseSourceLines(text, path), ...config.SOURCES]) byId.set(sourceIdOf(spec), spec);
  return [...byId.values()];
}
