#!/usr/bin/env node
// Build: TypeScript → dist/, then the extra steps each area registers in scripts/build-steps/.
// Steps are small modules exporting `async function run({root, watch})`, run in name order.
import { spawnSync } from 'node:child_process';
import { readdirSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');

const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')], {
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const stepsDir = join(root, 'scripts/build-steps');
mkdirSync(stepsDir, { recursive: true });
for (const file of readdirSync(stepsDir)
  .filter((f) => f.endsWith('.mjs'))
  .sort()) {
  const step = await import(pathToFileURL(join(stepsDir, file)).href);
  await step.run({ root, watch });
}
writeFileSync(join(root, 'dist/.built'), new Date().toISOString());
