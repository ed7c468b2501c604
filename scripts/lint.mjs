#!/usr/bin/env node
// Lint: the type checks, the dependency rules and the formatting check, run side by side.
// They share nothing, and one after another they left a core idle for most of a minute of every
// CI run. Each check's output is held and printed whole when it ends, so two never interleave.
import { spawn } from 'node:child_process';

/** The package.json scripts the lint runs; `npm run lint` fails if any of them fails. */
const CHECKS = ['typecheck:server', 'typecheck:client', 'lint:deps', 'lint:format'];

/** Runs `npm run <name>`, resolving to its exit code and everything it printed. */
function runScript(name) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => resolve({ name, code: 1, output: `${error.message}\n`, seconds: 0 }));
    child.on('close', (code, signal) =>
      resolve({ name, code: code ?? (signal ? 1 : 0), output: Buffer.concat(output).toString(), seconds: (performance.now() - started) / 1000 }),
    );
  });
}

const results = await Promise.all(
  CHECKS.map(async (name) => {
    const result = await runScript(name);
    process.stdout.write(`── ${name}: ${result.code === 0 ? 'ok' : `failed (exit ${result.code})`}, ${result.seconds.toFixed(1)} s\n${result.output}`);
    return result;
  }),
);
const failed = results.filter((r) => r.code !== 0).map((r) => r.name);
if (failed.length > 0) {
  process.stderr.write(`lint failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
