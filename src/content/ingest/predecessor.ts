/**
 * DATA_DIR/node: which server process last started on this DATA_DIR (its node id and pid). A node
 * id is new with each process, so on a shared store a restarted node could not tell its own jobs
 * from before from another live node's, and they waited out JOB_SILENCE_MS. The file names them:
 * the process it names is this node's predecessor, gone for sure, when its pid is no longer
 * alive, or is this process's own (a container's pid 1 again) and the node is none this process
 * started (tests run several apps in one process).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';

export const NODE_FILE = 'node';

/** The nodes this process started: never its own predecessors, however they share its pid. */
const startedHere = new Set<string>();

/** Whether a process with this pid runs (EPERM: it does, as another user). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The node id a file names, when its process is surely gone; null otherwise or for a file this does not understand. */
function goneNode(text: string, pid: number, alive: (pid: number) => boolean, started: Set<string>): string | null {
  let previous: unknown;
  try {
    previous = JSON.parse(text);
  } catch {
    return null;
  }
  const { nodeId, pid: theirs } = (previous ?? {}) as { nodeId?: unknown; pid?: unknown };
  if (typeof nodeId !== 'string' || !nodeId || !Number.isSafeInteger(theirs) || (theirs as number) <= 0) return null;
  return theirs === pid ? (started.has(nodeId) ? null : nodeId) : alive(theirs as number) ? null : nodeId;
}

/** Tests' stand-ins for the process: its pid, which pids run, the nodes it started. */
export interface SucceedOptions {
  log?: Logger;
  pid?: number;
  alive?: (pid: number) => boolean;
  started?: Set<string>;
}

/**
 * Records `nodeId` as DATA_DIR's server and returns the node it succeeds: the one the file named,
 * when that process is gone; null when there was none, it still runs (two servers on one DATA_DIR)
 * or the file cannot be read or written (then only JOB_SILENCE_MS tells its jobs are orphans).
 */
export function succeedNode(dataDir: string, nodeId: string, options: SucceedOptions = {}): string | null {
  const pid = options.pid ?? process.pid;
  const started = options.started ?? startedHere;
  const file = join(dataDir, NODE_FILE);
  let previous: string | null = null;
  try {
    previous = goneNode(readFileSync(file, 'utf8'), pid, options.alive ?? pidAlive, started);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') options.log?.warn({ err, file }, 'cannot read the previous node id; its jobs wait to fall silent');
  }
  try {
    mkdirSync(dataDir, { recursive: true });
    // Whole or not at all: a crash mid-write must not leave a file naming nobody.
    writeFileSync(`${file}.tmp`, JSON.stringify({ nodeId, pid }));
    renameSync(`${file}.tmp`, file);
  } catch (err) {
    options.log?.warn({ err, file }, 'cannot record this node id; after a restart its jobs wait to fall silent');
  }
  started.add(nodeId);
  return previous;
}
