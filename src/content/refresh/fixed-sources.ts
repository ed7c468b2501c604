/** The configured sources: the `DATA_DIR/sources` file (one `kind target [everyMinutes]` a line) and `SOURCES`. */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { readLocalFile } from '../../local-files.js';
import { parseSourceLines, sourceIdOf, type SourceSpec } from './source-spec.js';

/** The name of the sources file in DATA_DIR. */
export const SOURCES_FILE = 'sources';
/** Largest sources file read: a line a source, of a few hundred characters at most. */
export const SOURCES_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The sources file's text, '' when there is none. Read as the operator's other files are: a FIFO
 * named `sources` held start-up forever, and `/dev/zero` until memory ran out.
 */
async function readSourcesFile(path: string): Promise<string> {
  const missing = await stat(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );
  if (missing) return '';
  try {
    return (await readLocalFile(path, SOURCES_FILE_MAX_BYTES)).toString('utf8');
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
}

/**
 * Every configured source, the file's first; a source named twice counts once (the later entry
 * wins). A bad line, or a file that cannot be read, throws an Error naming the file, which stops start-up.
 */
export async function fixedSources(config: Pick<Config, 'DATA_DIR' | 'SOURCES'>): Promise<SourceSpec[]> {
  const path = join(config.DATA_DIR, SOURCES_FILE);
  const text = await readSourcesFile(path);
  const byId = new Map<string, SourceSpec>();
  for (const spec of [...parseSourceLines(text, path), ...config.SOURCES]) byId.set(sourceIdOf(spec), spec);
  return [...byId.values()];
}
