// Build step: the browser client. Typechecks public/ with its own tsconfig, bundles it with
// esbuild into content-hashed files under dist/public/assets/, and writes dist/public/index.html
// pointing at them. Exported `buildClient` is also used by the browser tests.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as esbuild from 'esbuild';

const TARGETS = ['chrome111', 'edge111', 'firefox115', 'safari16.4'];

function esbuildOptions(root, outdir) {
  return {
    entryPoints: [
      { in: join(root, 'public/src/main.ts'), out: 'app' },
      { in: join(root, 'public/app.css'), out: 'app' },
    ],
    outdir: join(outdir, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    target: TARGETS,
    minify: true,
    sourcemap: 'linked',
    legalComments: 'eof',
    metafile: true,
    tsconfig: join(root, 'public/tsconfig.json'),
    logLevel: 'warning',
  };
}

function typecheck(root) {
  const r = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'public/tsconfig.json')], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('public/: type errors (see above)');
}

/** Writes index.html and the favicon next to the bundle, naming the hashed files. */
function writeShell(root, outdir, metafile) {
  const outputs = Object.keys(metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => /^app-[A-Z0-9]+\.js$/i.test(f));
  const css = outputs.find((f) => /^app-[A-Z0-9]+\.css$/i.test(f));
  if (!js || !css) throw new Error(`client build: missing bundle outputs (${outputs.join(', ')})`);
  const html = readFileSync(join(root, 'public/index.html'), 'utf8').replace('%APP_JS%', js).replace('%APP_CSS%', css);
  writeFileSync(join(outdir, 'index.html'), html);
  copyFileSync(join(root, 'public/favicon.svg'), join(outdir, 'assets/favicon.svg'));
  writeFileSync(join(outdir, '.built'), new Date().toISOString());
}

/**
 * Builds the client into dist/public. The new build is written beside the old one and swapped
 * in, so a server reading dist/public never sees half a build.
 */
export async function buildClient({ root, typecheck: check = true }) {
  if (check) typecheck(root);
  const final = join(root, 'dist/public');
  const staging = join(root, `dist/.public-${process.pid}-${Date.now()}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const result = await esbuild.build(esbuildOptions(root, staging));
  writeShell(root, staging, result.metafile);
  const old = `${final}.old-${process.pid}`;
  if (existsSync(final)) renameSync(final, old);
  renameSync(staging, final);
  rmSync(old, { recursive: true, force: true });
}

export async function run({ root, watch }) {
  if (!watch) {
    await buildClient({ root });
    return;
  }
  const outdir = join(root, 'dist/public');
  rmSync(outdir, { recursive: true, force: true });
  const ctx = await esbuild.context({
    ...esbuildOptions(root, outdir),
    plugins: [
      {
        name: 'salon-shell',
        setup(build) {
          build.onEnd((result) => {
            if (result.metafile) writeShell(root, outdir, result.metafile);
          });
        },
      },
    ],
  });
  await ctx.watch();
  console.log('client: watching public/ for changes');
}
