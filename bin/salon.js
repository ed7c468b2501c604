#!/usr/bin/env node
// The `salon` command: runs the compiled CLI (build first with `npm run build`).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist/src/cli/main.js');
if (!existsSync(entry)) {
  console.error('salon: not built yet; run `npm run build` first');
  process.exit(1);
}
await import(pathToFileURL(entry).href);
