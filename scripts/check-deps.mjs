#!/usr/bin/env node
// Dependency rules, checked on the import graph esbuild resolves (the same resolver the client
// build uses, so `.js` specifiers that name `.ts` files are followed exactly):
//   - no import cycles among our own modules;
//   - domain folders never import `src/routes/` or `src/plugins/` (the edge depends on the domain);
//   - the browser client (`public/`) imports only itself and `src/protocol/`.
// Exits 1 listing every violation. Rules and their reasons: docs/architecture.md, "Dependency rules".
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOMAIN_FOLDERS = ['ai', 'content', 'rag', 'rooms', 'search', 'store', 'sync', 'protocol'];

/** Every .ts file under `dir`, relative to the root. */
function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `file → [imported files]` for our own modules (packages stay external). */
async function importGraph(entryPoints) {
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: 'out',
    logLevel: 'silent',
  });
  const graph = new Map();
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    const values = input.imports.filter((i) => !i.external && i.path.endsWith('.ts')).map((i) => i.path);
    graph.set(file, [...new Set([...values, ...typeImports(file)])]);
  }
  return graph;
}

const TYPE_IMPORT = /^(?:import|export) type [^;]*? from '(\.{1,2}\/[^']+)\.js';/gm;

/** Relative `import type` targets: esbuild erases them, but a cycle of types is a cycle of concepts. */
function typeImports(file) {
  const source = readFileSync(join(root, file), 'utf8');
  return [...source.matchAll(TYPE_IMPORT)].map((m) => normalize(join(dirname(file), `${m[1]}.ts`)));
}

/** Strongly connected components with more than one module (or a self-import): the cycles. */
function cycles(graph) {
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  // Iterative Tarjan: the graph is a few hundred modules, but recursion depth should not depend on it.
  for (const start of graph.keys()) {
    if (indexOf.has(start)) continue;
    const work = [[start, 0]];
    while (work.length) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      if (i === 0) {
        indexOf.set(node, index);
        low.set(node, index++);
        stack.push(node);
        onStack.add(node);
      }
      const next = (graph.get(node) ?? [])[i];
      if (next !== undefined) {
        frame[1]++;
        if (!indexOf.has(next)) work.push([next, 0]);
        else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexOf.get(next)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === indexOf.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
      }
    }
  }
  return found;
}

function violations(graph) {
  const out = [];
  for (const component of cycles(graph)) out.push(`cycle: ${component.join(' → ')}`);
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const domain = DOMAIN_FOLDERS.find((d) => file.startsWith(`src/${d}/`));
      if (domain && (target.startsWith('src/routes/') || target.startsWith('src/plugins/'))) out.push(`domain imports the edge: ${file} → ${target}`);
      if (file.startsWith('public/') && !target.startsWith('public/') && !target.startsWith('src/protocol/')) {
        out.push(`client imports beyond src/protocol: ${file} → ${target}`);
      }
    }
  }
  return out;
}

const entryPoints = [...tsFiles('src'), ...tsFiles('public/src'), ...tsFiles('bench')].map((f) => relative(root, join(root, f)));
const found = violations(await importGraph(entryPoints));
if (found.length) {
  console.error(`Dependency rules: ${found.length} violation(s)\n  ${found.join('\n  ')}`);
  process.exit(1);
}
console.log(`Dependency rules: ${entryPoints.length} entry points, no violations`);
