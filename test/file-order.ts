/**
 * The order vitest starts test files in: the largest first, as vitest orders files it has no
 * results for. CI installs afresh, so it never has them; a local run has the last run's durations
 * (node_modules/.vite/vitest/results.json) and would start the longest files first. Ordering by
 * size alone makes a local run start files as CI does, so their times compare.
 */
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Test files by size, largest first; ties by path. */
export function bySize<T>(files: readonly T[], path: (file: T) => string, size: (path: string) => number): T[] {
  const sizes = new Map(files.map((f) => [f, size(path(f))]));
  return [...files].sort((a, b) => sizes.get(b)! - sizes.get(a)! || (path(a) < path(b) ? -1 : path(a) > path(b) ? 1 : 0));
}

export default class FileSizeSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return bySize(
      files,
      (f) => f.moduleId,
      (p) => statSync(p).size,
    );
  }
}
