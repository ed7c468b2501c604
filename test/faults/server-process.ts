/**
 * A Salon server in a child process, as an outside client meets it: `node dist/src/server.js` on
 * 127.0.0.1 with port 0 and its own DATA_DIR. A crash is then an exit the test can see, and the
 * server's memory is its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { tempDir } from '../helpers.js';

const SERVER_ENTRY = resolve(__dirname, '../../dist/src/server.js');
const START_TIMEOUT_MS = 30_000;
export const FAULTS_ADMIN_TOKEN = 'faults-admin-token';

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly dataDir: string;
  /** `http://127.0.0.1:PORT` */
  readonly base: string;
  /** `ws://127.0.0.1:PORT/ws/rooms/<roomId>` */
  roomUrl(roomId: string): string;
  /** Every line the server logged (pino JSON) so far. */
  readonly logs: string[];
  /** The exit code and signal once the process ended, or null while it runs. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Resident memory of the server process in MB (Linux /proc). */
  rssMb(): number;
  /** Stops the process (SIGTERM, then SIGKILL after `graceMs`) and waits for its exit. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends SIGKILL and waits for the exit. */
  kill9(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse a DATA_DIR (restart after a crash); otherwise a fresh temporary one, removed on stop. */
  dataDir?: string;
}

/** Starts a server and resolves once it listens. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const temp = options.dataDir ? null : tempDir('salon-faults-');
  const dataDir = options.dataDir ?? temp!.dir;
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      SEED_DEMO: 'true',
      SEARCH_WORKERS: '1',
      ADMIN_TOKEN: FAULTS_ADMIN_TOKEN,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exitedPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      done(exit);
    });
  });
  const port = await new Promise<number>((done, fail) => {
    const timer = setTimeout(() => {
      // Nothing would stop a server that never said where it listens.
      child.kill('SIGKILL');
      temp?.cleanup();
      fail(new Error(`server did not listen within ${START_TIMEOUT_MS} ms:\n${logs.join('\n')}`));
    }, START_TIMEOUT_MS);
    let pending = '';
    const onData = (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        logs.push(line);
        const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          done(Number(match[1]));
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exitedPromise.then(() => {
      clearTimeout(timer);
      fail(new Error(`server exited before listening:\n${logs.join('\n')}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async (graceMs = 10_000) => {
    if (!exit) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (process.env.FAULTS_DEBUG) process.stderr.write(`server did not stop in ${graceMs} ms; last logs:\n${logs.slice(-15).join('\n')}\n`);
        child.kill('SIGKILL');
      }, graceMs);
      await exitedPromise;
      clearTimeout(timer);
    }
    temp?.cleanup();
    return exit!;
  };
  return {
    child,
    dataDir,
    base,
    roomUrl: (roomId) => `ws://127.0.0.1:${port}/ws/rooms/${encodeURIComponent(roomId)}`,
    logs,
    exited: () => exit,
    rssMb: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return Math.round(kb / 102.4) / 10;
    },
    stop,
    kill9: async () => {
      if (!exit) {
        child.kill('SIGKILL');
        await exitedPromise;
      }
    },
  };
}

/** Timings of `/healthz` polled every `intervalMs` until `stop()`: how long the event loop kept clients waiting. */
export function pollHealth(base: string, intervalMs = 20): { stop: () => Promise<number[]> } {
  const delays: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(30_000) });
      } catch {
        // A refused or timed-out probe still counts with the time it took.
      }
      delays.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return delays;
    },
  };
}

/** The `q` quantile (0–1) of `values`, 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
