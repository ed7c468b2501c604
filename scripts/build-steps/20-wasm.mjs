// Assembles the project's WebAssembly text modules (workers/*.wat, src/search/*.wat) into
// dist/workers/<name>.wasm with wabt, enabling SIMD and threads (the kernels import shared memory).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import initWabt from 'wabt';

const SOURCE_DIRS = ['workers', 'src/search'];
const FEATURES = { simd: true, threads: true };

/** Builds every .wat whose .wasm is missing or older than its source. */
export async function run({ root }) {
  const outDir = join(root, 'dist/workers');
  mkdirSync(outDir, { recursive: true });
  const sources = SOURCE_DIRS.map((d) => join(root, d))
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.endsWith('.wat'))
        .map((f) => join(d, f)),
    );
  let wabt;
  for (const src of sources) {
    const out = join(outDir, basename(src, '.wat') + '.wasm');
    if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) continue;
    wabt ??= await initWabt();
    const mod = wabt.parseWat(basename(src), readFileSync(src, 'utf8'), FEATURES);
    try {
      mod.validate(FEATURES);
      writeFileSync(out, mod.toBinary({}).buffer);
    } finally {
      mod.destroy();
    }
  }
}
