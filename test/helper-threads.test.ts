/**
 * Node's helper threads yield to the event loop (src/helper-threads.ts): the server's entry moves
 * every thread but its own to SCHED_IDLE before the app starts any. Run in a child process, whose
 * threads at that point are Node's alone, as the server's are (this process runs test workers).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCHED_IDLE, SCHED_OTHER, policyOf } from './helpers.js';
import { startServer } from './faults/server-process.js';

const MODULE = pathToFileURL(resolve(__dirname, '../dist/src/helper-threads.js')).href;

/** Runs `body` in a fresh Node process with yieldHelperThreads and `policies()` in scope; returns what it prints. */
function inChild(body: string): any {
  const source = `
    import { readdirSync, readFileSync } from 'node:fs';
    import { yieldHelperThreads } from ${JSON.stringify(MODULE)};
    const policy = (id) => { const s = readFileSync('/proc/self/task/' + id + '/stat', 'utf8'); return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[38]); };
    const policies = () => Object.fromEntries(readdirSync('/proc/self/task').map((id) => [id, policy(id)]));
    ${body}
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' }));
}

describe.runIf(process.platform === 'linux')('yieldHelperThreads', () => {
  it("moves every thread of the process but the event loop's to SCHED_IDLE", () => {
    const { result, pid, before, after } = inChild(`
      const before = policies();
      const result = yieldHelperThreads();
      console.log(JSON.stringify({ result, pid: process.pid, before, after: policies() }));
    `);
    const helpers = Object.keys(before).filter((id) => Number(id) !== pid);
    expect(helpers.length).toBeGreaterThan(0);
    expect(Object.values(before).every((p) => p === SCHED_OTHER)).toBe(true);
    expect(result).toEqual({ moved: helpers.length });
    expect(after[pid]).toBe(SCHED_OTHER);
    for (const id of helpers) expect(after[id], `thread ${id}`).toBe(SCHED_IDLE);
  });

  it('leaves threads started after it alone, and does nothing from a worker thread', () => {
    const worker = [
      "import { parentPort } from 'node:worker_threads';",
      "import { readFileSync } from 'node:fs';",
      `import { yieldHelperThreads } from ${JSON.stringify(MODULE)};`,
      'const result = yieldHelperThreads();',
      "const s = readFileSync('/proc/thread-self/stat', 'utf8');",
      "parentPort.postMessage({ result, policy: Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[38]) });",
    ].join('\n');
    const { first, inWorker, workerPolicy } = inChild(`
      const { Worker } = await import('node:worker_threads');
      const first = yieldHelperThreads();
      const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(${JSON.stringify(worker)})));
      const reply = await new Promise((ok, fail) => { w.once('message', ok); w.once('error', fail); });
      await w.terminate();
      console.log(JSON.stringify({ first, inWorker: reply.result, workerPolicy: reply.policy }));
    `);
    expect(first.moved).toBeGreaterThan(0);
    expect(inWorker).toEqual({ skipped: 'not-main-thread' });
    expect(workerPolicy).toBe(SCHED_OTHER);
  });

  it("runs in the server's entry: Node's helpers yield, its event loop does not", async () => {
    const server = await startServer({ env: { SEED_DEMO: 'false' } });
    try {
      const pid = server.child.pid!;
      const policies = readdirSync(`/proc/${pid}/task`).map((id): [number, number] => [
        Number(id),
        policyOf(readFileSync(`/proc/${pid}/task/${id}/stat`, 'utf8')),
      ]);
      expect(new Map(policies).get(pid)).toBe(SCHED_OTHER);
      // V8's platform runs 4 worker threads by default (--v8-pool-size), besides its delayed-task thread.
      expect(policies.filter(([, p]) => p === SCHED_IDLE).length).toBeGreaterThanOrEqual(4);
    } finally {
      await server.stop();
    }
  });
});
