/**
 * `npm run bench:ws -- --clients C --rooms R --rate M --seconds S`
 *
 * Starts the Salon server and load generators as separate processes on loopback (pinned with
 * taskset when present: the server to core 0, the load to the others), joins C clients to R rooms
 * (client i in room i mod R), posts one unmeasured warm-up message per room (`--warmup N` for N, 0 to
 * skip), then sends M messages per second in total for S seconds (the load generators take turns,
 * so they never post at the same instant), and prints
 * the JSON the README's Benchmarks section describes, as the last line: {clients, rooms, rate, seconds, connected, sent, delivered,
 * lost, p50_ms, p99_ms, rss_mb}, plus max_ms (the slowest receipt), all_members_p50/max_ms (per
 * message, when its last member had it: median and worst over the messages), deliveries_per_s,
 * server_cpu_ms and server_us_per_delivery (server CPU during the measured phase), load_cpu_ms,
 * kb_per_connection (server RSS growth per joined idle connection, after a full GC; of the first
 * node, and of each in `per_node` with `--nodes`), heap_kb_per_connection, failed_connections, errors, pinned and load_avg_1m (the machine's load
 * when the run began: on a shared machine, latency follows it).
 *
 * Where latency comes from: server_/load_runqueue_wait_ms (time the process was runnable but
 * waiting for its core, i.e. taken by other processes) and server_/load_loop_delay_p50/p99_ms
 * (event-loop delay: work queued behind work) over the measured phase; server_scavenges,
 * server_scavenge_max_ms and server_scavenge_total_ms the server's young-generation collections in
 * it (a pause each, as long as what survived them takes to copy), server_other_gc_max_ms the longest
 * pause of any other collection. Each child runs in its
 * own session, so Linux's autogroup scheduling gives it the share of a core any other session
 * gets rather than splitting one share between the bench's processes (`--group shared` to
 * compare). `--loaders N` spreads the clients over N load-generator processes. store_append_* time
 * the server's store writes (the synchronous SQLite append each message waits for);
 * server_fanout_* the server's side of each message, from its append to the end of the event-loop
 * turn that wrote its frames to every member's socket (what is left of the latency is the clients').
 * `--synchronous full` runs the server with SQLITE_SYNCHRONOUS=full (every acknowledged message
 * fsynced) to measure what durability against power loss costs; `synchronous` says which ran.
 *
 * `--server bare` runs the same load against a bare `ws` server that only rebroadcasts
 * (ws-bare-server.ts; the output adds `server: "bare"`). `--compare bare --runs N` runs N pairs,
 * Salon and bare alternating which goes first (`--first bare` to start with bare), each once the
 * machine is quiet (cores ≥ 90 % idle for 2 s, or after `--quiet-wait` s, 60 by default:
 * `idle_before`), prints each run's JSON on stderr and, last, one line with every pair's figures,
 * its p50/p99 ratios (Salon over bare) and their medians.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import pg from 'pg';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchUsageError, benchOptions } from './args.js';

/** A process holds at most this many sockets (RLIMIT_NOFILE is often 20k and cannot be raised). */
const CLIENTS_PER_LOADER = 9_000;
/** Connections being opened at once over all load generators (more only queues upgrades the servers answer late). */
const CONNECT_CONCURRENCY = 200;
const SETTLE_MS = 2_500;
const DRAIN_IDLE_MS = 3_000;
const WARMUP_TIMEOUT_MS = 30_000;
/** `--compare`: a run starts once the cores were this idle over one window, or after `--quiet-wait` seconds. */
const QUIET_IDLE = 0.9;
const QUIET_WINDOW_MS = 2_000;

const here = dirname(fileURLToPath(import.meta.url));
const USAGE = `npm run bench:ws -- --clients C --rooms R --rate M --seconds S [--warmup N] [--loaders N]
  [--group own|shared] [--synchronous normal|full] [--nodes N] [--shared] [--server salon|bare]
  [--compare bare [--runs N] [--first salon|bare] [--quiet-wait S]]`;
type ServerKind = 'salon' | 'bare';
const SERVER_KINDS: readonly ServerKind[] = ['salon', 'bare'];
const FLAGS = {
  ...Object.fromEntries(
    ['clients', 'rooms', 'rate', 'seconds', 'loaders', 'group', 'warmup', 'synchronous', 'nodes', 'server', 'compare', 'runs', 'first', 'quiet-wait'].map(
      (name) => [name, 'string' as const],
    ),
  ),
  shared: 'boolean',
} as const;
const values = benchOptions(USAGE, FLAGS, (a) => {
  const whole = (name: string, fallback: number, min: number, max?: number) => a.number(name, fallback, { integer: true, min, max });
  const nodes = whole('nodes', 1, 1);
  const v = {
    clients: whole('clients', 200, 1),
    rooms: whole('rooms', 2, 1),
    rate: a.number('rate', 100, { min: 0 }),
    seconds: a.number('seconds', 5, { min: 0.1 }),
    // 0: one load generator per CLIENTS_PER_LOADER clients.
    loaders: whole('loaders', 0, 0),
    ownGroups: a.choice('group', ['own', 'shared'], 'own') === 'own',
    // One message per room warms the broadcast path; 8 (WINDOW_MAX_MESSAGES) also closes one memory
    // window per room, so the first windows' code, cold in V8, does not run inside the measured phase.
    warmup: whole('warmup', 1, 0, 50),
    synchronous: a.choice('synchronous', ['normal', 'full'], 'normal'),
    nodes,
    server: a.choice('server', SERVER_KINDS, 'salon'),
    compare: a.text('compare') === undefined ? false : a.choice('compare', ['bare'], 'bare') === 'bare',
    runs: whole('runs', 5, 1),
    first: a.choice('first', SERVER_KINDS, 'salon'),
    quietWaitMs: a.number('quiet-wait', 60, { min: 0 }) * 1000,
    /** Several nodes share PostgreSQL and Redis; `--shared` runs one node on them too (to compare like with like). */
    sharedEngines: nodes > 1 || a.flag('shared'),
  };
  if (v.sharedEngines && (v.server === 'bare' || v.compare)) throw new BenchUsageError('--server bare and --compare: one node on its own engines only');
  return v;
});
const opts = { clients: values.clients, rooms: values.rooms, rate: values.rate, seconds: values.seconds, warmup: values.warmup };
const { quietWaitMs, sharedEngines, ownGroups, nodes: nodeCount, loaders: loaderOption, runs: compareRuns } = values;

type Msg = { evt: string } & Record<string, any>;
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const cores = availableParallelism();

function start(script: string, cpus: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): ChildProcess {
  const args = [...nodeArgs, join(here, script)];
  const [cmd, argv] = hasTaskset && cores > 1 ? ['taskset', ['-c', cpus, process.execPath, ...args]] : [process.execPath, args];
  return spawn(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env }, detached: ownGroups });
}

function next(child: ChildProcess, evt: string): Promise<Msg> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: Msg) => {
      if (m.evt !== evt) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m);
    };
    const onExit = (code: number) => reject(new Error(`child exited (${code}) while waiting for ${evt}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function ask(child: ChildProcess, cmd: object, evt: string): Promise<Msg> {
  const reply = next(child, evt);
  child.send(cmd);
  return reply;
}

/**
 * A fresh PostgreSQL schema and Redis key prefix for the nodes to share (the local servers, or
 * BENCH_DATABASE_URL / BENCH_REDIS_URL), dropped afterwards.
 */
async function sharedEnginesEnv(): Promise<{ env: NodeJS.ProcessEnv; drop(): Promise<void> }> {
  const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `salon_bench_ws_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return {
    env: {
      DATABASE_URL: `${base}${base.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`,
      REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `${schema}:`,
      IDENTITY_SECRET: randomBytes(32).toString('hex'),
    },
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}

function mergeCounts(all: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts)) out[k] = (out[k] ?? 0) + n;
  return out;
}

function percentile(histogram: Map<number, number>, total: number, p: number, bucketMs: number): number {
  const keys = [...histogram.keys()].sort((a, b) => a - b);
  let seen = 0;
  for (const k of keys) {
    seen += histogram.get(k)!;
    if (seen >= total * p) return Number((k * bucketMs).toFixed(3));
  }
  return NaN;
}

const round2 = (v: number | null) => (v === null ? null : Number(v.toFixed(2)));

/**
 * Posts `count` unmeasured messages in every room and waits until every member has them: the
 * first broadcast runs through V8's interpreter, and the first memory windows closing run cold code,
 * which would make a run of a few seconds measure them.
 */
async function warmUp(loaders: ChildProcess[], perRoom: number[][], members: number[], count: number): Promise<void> {
  const owner = members.map((_, room) => perRoom.findIndex((rooms) => rooms[room] > 0));
  await Promise.all(loaders.map((l, i) => ask(l, { cmd: 'warmup', rooms: owner.flatMap((o, room) => (o === i ? [room] : [])), count }, 'warming')));
  const expected = count * members.reduce((s, n, room) => s + (owner[room] >= 0 ? n : 0), 0);
  const deadline = Date.now() + WARMUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const warmed = (await Promise.all(loaders.map((l) => ask(l, { cmd: 'progress' }, 'progress')))).reduce((s, p) => s + p.warmed, 0);
    if (warmed >= expected) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`warm-up: not every member got its room's warm-up message within ${WARMUP_TIMEOUT_MS} ms`);
}

/** One run against `kind`'s server: the JSON object bench:ws prints. */
async function runOnce(kind: ServerKind): Promise<Record<string, unknown>> {
  const startLoad = loadavg()[0];
  const dataDir = mkdtempSync(join(tmpdir(), 'salon-bench-ws-'));
  const loadCpus = cores > 1 ? `1-${cores - 1}` : '0';
  // Every load client comes from 127.0.0.1: the per-address limits would stop the benchmark itself.
  const unlimited = {
    ROOM_MAX_CONNECTIONS_PER_IP: '10000000',
    HTTP_MAX_CONNECTIONS_PER_IP: '10000000',
    ROOM_MAX_CONNECTIONS: '10000000',
    HTTP_MAX_CONNECTIONS: '10000000',
    ROOM_ADDRESS_FRAMES_PER_SECOND: '1000000',
    ROOM_NEW_IDENTITIES_PER_MINUTE: '1000000',
    ROOM_ADDRESS_CONNECTS_PER_MINUTE: '1000000',
    ROOM_MESSAGES_PER_SECOND: '1000000',
  };
  const engines = sharedEngines ? await sharedEnginesEnv() : null;
  const startNode = (i: number) => {
    mkdirSync(join(dataDir, `node${i}`), { recursive: true });
    return start(
      kind === 'bare' ? 'ws-bare-server.js' : 'ws-server.js',
      '0',
      {
        DATA_DIR: join(dataDir, `node${i}`),
        BENCH_ROOMS: String(opts.rooms),
        SQLITE_SYNCHRONOUS: values.synchronous,
        ...unlimited,
        ...(engines?.env ?? {}),
      },
      [
        '--expose-gc',
        // e.g. BENCH_SERVER_NODE_ARGS=--cpu-prof to profile the server
        ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ],
    );
  };
  const server = startNode(0);
  const others: ChildProcess[] = [];
  const loaders: ChildProcess[] = [];
  try {
    const { port } = await next(server, 'listening');
    // Further nodes start once the first has migrated the shared schema and seeded the rooms.
    for (let i = 1; i < nodeCount; i++) others.push(startNode(i));
    const ports = [port, ...(await Promise.all(others.map(async (o) => (await next(o, 'listening')).port as number)))];
    const baselines = await Promise.all([server, ...others].map((n) => ask(n, { cmd: 'stats' }, 'stats')));
    const baseline = baselines[0];

    const loaderCount = Math.max(loaderOption, Math.ceil(opts.clients / CLIENTS_PER_LOADER));
    const perLoader = Math.ceil(opts.clients / loaderCount);
    for (let i = 0; i < loaderCount; i++) loaders.push(start('ws-load.js', loadCpus, {}));
    await Promise.all(loaders.map((l) => next(l, 'ready')));
    const share = (i: number) => Math.max(0, Math.min(perLoader, opts.clients - i * perLoader));
    const joined = await Promise.all(
      loaders.map((l, i) =>
        ask(
          l,
          { cmd: 'connect', ports, first: i * perLoader, count: share(i), rooms: opts.rooms, concurrency: Math.ceil(CONNECT_CONCURRENCY / loaderCount) },
          'connected',
        ),
      ),
    );
    const connected = joined.reduce((s, j) => s + j.connected, 0);
    const members = new Array<number>(opts.rooms).fill(0);
    for (const j of joined) j.perRoom.forEach((n: number, r: number) => (members[r] += n));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idles = await Promise.all([server, ...others].map((n) => ask(n, { cmd: 'stats' }, 'stats')));
    const idle = idles[0];
    /** Each node's idle connections and RSS growth per connection (after a full GC). */
    const perNode = idles.map((s, i) => ({
      connections: s.connections as number,
      rss_mb: s.rss === null ? null : Number((s.rss / 1_048_576).toFixed(1)),
      kb_per_connection:
        s.connections && s.rss !== null && baselines[i].rss !== null ? Number(((s.rss - baselines[i].rss) / 1024 / s.connections).toFixed(2)) : null,
    }));
    if (opts.warmup)
      await warmUp(
        loaders,
        joined.map((j) => j.perRoom),
        members,
        opts.warmup,
      );

    server.send({ cmd: 'profile' });
    for (const node of [server, ...others]) node.send({ cmd: 'meter' });
    // Staggered: N generators sending in step would post N messages at once (two simultaneous
    // broadcasts to a 10,000-member room are not one message delivered).
    const ran = await Promise.all(
      loaders.map((l, i) =>
        ask(l, { cmd: 'run', rate: (opts.rate * joined[i].connected) / Math.max(1, connected), seconds: opts.seconds, phase: i / loaders.length }, 'ran'),
      ),
    );
    const sent = ran.reduce((s, r) => s + r.sent, 0);
    let expected = 0;
    for (const r of ran) r.sentPerRoom.forEach((n: number, room: number) => (expected += n * members[room]));

    let delivered = 0;
    let lastChange = Date.now();
    while (delivered < expected && Date.now() - lastChange < DRAIN_IDLE_MS) {
      await new Promise((r) => setTimeout(r, 100));
      const now = (await Promise.all(loaders.map((l) => ask(l, { cmd: 'progress' }, 'progress')))).reduce((s, p) => s + p.delivered, 0);
      if (now !== delivered) lastChange = Date.now();
      delivered = now;
    }
    server.send({ cmd: 'profiled' });
    const phase = await ask(server, { cmd: 'metered' }, 'metered');
    const otherPhases = await Promise.all(others.map((o) => ask(o, { cmd: 'metered' }, 'metered')));
    const after = await ask(server, { cmd: 'stats' }, 'stats');
    const reports = await Promise.all(loaders.map((l) => ask(l, { cmd: 'report' }, 'report')));
    const histogram = new Map<number, number>();
    let total = 0;
    for (const r of reports) {
      for (const [k, n] of r.histogram as [number, number][]) histogram.set(k, (histogram.get(k) ?? 0) + n);
      total += r.delivered - r.overflow;
    }
    const bucketMs = reports[0]?.bucketMs ?? 0.01;
    // Per message: when its last member had it (the slowest receipt over every generator).
    const lastReceipt = new Map<number, number>();
    for (const r of reports) for (const [sentAt, ms] of r.slowest as [number, number][]) lastReceipt.set(sentAt, Math.max(ms, lastReceipt.get(sentAt) ?? 0));
    const full = [...lastReceipt.values()].sort((a, b) => a - b);
    const fullAt = (p: number) => (full.length ? Number(full[Math.min(full.length - 1, Math.floor(full.length * p))].toFixed(2)) : null);
    let maxBucket = 0;
    for (const k of histogram.keys()) if (k > maxBucket) maxBucket = k;
    return {
      ...(kind === 'bare' && { server: kind }),
      clients: opts.clients,
      rooms: opts.rooms,
      rate: opts.rate,
      seconds: opts.seconds,
      nodes: nodeCount,
      engines: kind === 'bare' ? 'none' : sharedEngines ? 'postgres+redis' : 'sqlite+in-process',
      connected,
      sent,
      delivered,
      lost: Math.max(0, expected - delivered),
      p50_ms: percentile(histogram, total, 0.5, bucketMs),
      p99_ms: percentile(histogram, total, 0.99, bucketMs),
      rss_mb: after.rss === null ? null : Number((after.rss / 1_048_576).toFixed(1)),
      max_ms: Number((maxBucket * bucketMs).toFixed(3)),
      all_members_p50_ms: fullAt(0.5),
      all_members_max_ms: fullAt(1),
      deliveries_per_s: Math.round(delivered / opts.seconds),
      server_cpu_ms: Math.round(phase.cpuMs),
      ...(others.length && { all_nodes_cpu_ms: Math.round(phase.cpuMs + otherPhases.reduce((s, p) => s + p.cpuMs, 0)) }),
      server_sys_ms: Math.round(phase.sysMs),
      server_minor_faults: phase.minorFaults,
      server_us_per_delivery: delivered ? Number(((phase.cpuMs * 1000) / delivered).toFixed(2)) : null,
      load_cpu_ms: Math.round(reports.reduce((s, r) => s + r.cpuMs, 0)),
      loaders: loaders.length,
      server_runqueue_wait_ms: phase.runqueueWaitMs === null ? null : Math.round(phase.runqueueWaitMs),
      load_runqueue_wait_ms: reports.some((r) => r.runqueueWaitMs === null) ? null : Math.round(reports.reduce((s, r) => s + r.runqueueWaitMs, 0)),
      server_loop_delay_p50_ms: round2(phase.loopDelayP50Ms),
      server_loop_delay_p99_ms: round2(phase.loopDelayP99Ms),
      server_scavenges: phase.scavenges,
      server_scavenge_max_ms: phase.scavengeMaxMs,
      server_scavenge_total_ms: phase.scavengeTotalMs,
      server_other_gc_max_ms: phase.otherGcMaxMs,
      load_loop_delay_p99_ms: round2(Math.max(...reports.map((r) => r.loopDelayP99Ms ?? 0))),
      store_append_p50_ms: phase.appendP50Ms,
      store_append_p99_ms: phase.appendP99Ms,
      store_append_max_ms: phase.appendMaxMs,
      store_appends_over_5ms: phase.appendsOver5Ms,
      server_fanout_p50_ms: phase.fanoutP50Ms,
      server_fanout_p99_ms: phase.fanoutP99Ms,
      server_fanout_max_ms: phase.fanoutMaxMs,
      kb_per_connection: perNode[0].kb_per_connection,
      ...(others.length && { per_node: perNode }),
      failed_connections: opts.clients - connected,
      ...(connected < opts.clients && { failure_reasons: mergeCounts(joined.map((j) => j.failures ?? {})) }),
      heap_kb_per_connection: idle.connections
        ? Number(((idle.heapUsed + idle.external - baseline.heapUsed - baseline.external) / 1024 / idle.connections).toFixed(2))
        : null,
      errors: reports.reduce((s, r) => s + r.errors, 0),
      pinned: hasTaskset && cores > 1,
      own_groups: ownGroups,
      synchronous: values.synchronous,
      load_avg_1m: Number(startLoad.toFixed(2)),
    };
  } finally {
    for (const l of loaders) l.kill('SIGKILL');
    for (const node of [server, ...others]) {
      await ask(node, { cmd: 'exit' }, 'never').catch(() => {});
      node.kill('SIGKILL');
    }
    await engines?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Whole-machine CPU idle share over `ms` (/proc/stat); null where it cannot be read. */
async function idleShare(ms: number): Promise<number | null> {
  const read = () => {
    try {
      const f = readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
      return { idle: f[3] + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) };
    } catch {
      return null;
    }
  };
  const a = read();
  await new Promise((r) => setTimeout(r, ms));
  const b = read();
  return a && b && b.total > a.total ? (b.idle - a.idle) / (b.total - a.total) : null;
}

/**
 * Waits until the machine's cores were at least QUIET_IDLE idle for a whole QUIET_WINDOW_MS (other
 * sessions share it), for at most `--quiet-wait` seconds; returns the last window's idle share.
 */
async function waitForQuiet(): Promise<number | null> {
  const deadline = Date.now() + quietWaitMs;
  let idle = await idleShare(QUIET_WINDOW_MS);
  while (idle !== null && idle < QUIET_IDLE && Date.now() < deadline) idle = await idleShare(QUIET_WINDOW_MS);
  return idle === null ? null : Number(idle.toFixed(2));
}

/** What `--compare` lists of each run, side by side. */
const COMPARED = [
  'p50_ms',
  'p99_ms',
  'max_ms',
  'lost',
  'errors',
  'server_cpu_ms',
  'server_us_per_delivery',
  'server_runqueue_wait_ms',
  'server_minor_faults',
  'server_fanout_p50_ms',
  'server_fanout_p99_ms',
  'server_scavenges',
  'server_scavenge_max_ms',
  'load_runqueue_wait_ms',
  'load_avg_1m',
] as const;

const median = (values: number[]) => {
  const s = values.slice().sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * `--compare bare --runs N`: N pairs of runs, Salon and the bare `ws` peer, alternating which goes
 * first (salon-bare, bare-salon, …), each run started once the machine is quiet. Every run's full
 * JSON goes to stderr as it ends; the last line on stdout has the pairs and their ratios.
 */
async function compare(runs: number): Promise<void> {
  const pairs: Record<string, unknown>[] = [];
  const p99Ratios: number[] = [];
  const p50Ratios: number[] = [];
  let lost = 0;
  for (let i = 0; i < runs; i++) {
    const order: ServerKind[] = (i % 2 === 0) === (values.first === 'salon') ? ['salon', 'bare'] : ['bare', 'salon'];
    const got = {} as Record<ServerKind, Record<string, unknown>>;
    for (const kind of order) {
      const idle = await waitForQuiet();
      const result = await runOnce(kind);
      console.error(JSON.stringify({ run: i + 1, server: kind, idle_before: idle, ...result }));
      got[kind] = { idle_before: idle, ...Object.fromEntries(COMPARED.map((k) => [k, result[k]])) };
      lost += Number(result.lost) + (Number(result.failed_connections) || 0);
    }
    const ratio = (k: string) => Number((Number(got.salon[k]) / Number(got.bare[k])).toFixed(2));
    p99Ratios.push(ratio('p99_ms'));
    p50Ratios.push(ratio('p50_ms'));
    pairs.push({ run: i + 1, first: order[0], salon: got.salon, bare: got.bare, p50_ratio: ratio('p50_ms'), p99_ratio: ratio('p99_ms') });
  }
  console.log(
    JSON.stringify({
      clients: opts.clients,
      rooms: opts.rooms,
      rate: opts.rate,
      seconds: opts.seconds,
      compare: 'bare',
      runs,
      p99_ratio_median: median(p99Ratios),
      p99_ratio_max: Math.max(...p99Ratios),
      p50_ratio_median: median(p50Ratios),
      lost,
      pairs,
    }),
  );
}

async function main(): Promise<void> {
  if (values.compare) return compare(compareRuns);
  console.log(JSON.stringify(await runOnce(values.server)));
}

main().catch((err) => {
  console.error(`bench:ws: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
