/**
 * The one reader of the environment. Every setting Salon understands is declared in SETTINGS
 * with its default, a parser and a one-line description; `loadConfig` turns an environment into a
 * typed, frozen Config or throws ConfigError naming the first bad variable.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseSourceLines, type SourceSpec } from './content/refresh/source-spec.js';
import { serializedOrigin } from './origins.js';
import { DEFAULT_TOKEN_TTL_DAYS } from './rooms/identity.js';
import { DEFAULT_HNSW_PARAMS } from './search/graph/hnsw-worker-client.js';

/** The most search worker threads SEARCH_WORKERS may ask for. */
const MAX_SEARCH_WORKERS = 64;

/** SEARCH_WORKERS' default: one per core, within its range (a machine of 128 cores gets 64). */
export function defaultSearchWorkers(cores = availableParallelism()): number {
  return Math.min(MAX_SEARCH_WORKERS, Math.max(1, cores));
}

/** Raised when an environment variable holds a value Salon cannot use. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

/** Turns a variable's raw text into its value, or throws; `accepts` says in a few words what it takes (README, --help). */
type Parser<T> = ((raw: string) => T) & { accepts?: string };

function accepting<T>(accepts: string, parse: (raw: string) => T): Parser<T> {
  return Object.assign(parse, { accepts });
}

const text: Parser<string> = (raw) => raw;

function integer(min: number, max: number): Parser<number> {
  return accepting(`${min}–${max}`, (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`expected a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}, got ${n}`);
    return n;
  });
}

const boolean: Parser<boolean> = accepting('true, false (or 1, 0, yes, no, on, off)', (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`expected true or false, got "${raw}"`);
});

function oneOf<T extends string>(...values: T[]): Parser<T> {
  return accepting(values.join(', '), (raw) => {
    const v = raw.trim().toLowerCase() as T;
    if (!values.includes(v)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return v;
  });
}

/**
 * A value as an error may show it: everything before its last `@` after the `scheme://` (a user
 * name and password, even one with an unescaped `/`, `@`, space or quote) made `***`, whether or
 * not it parses.
 * OLLAMA_HOST is no secret but may carry its proxy's password, and `user:pass@host:11434` (no scheme) is no URL.
 */
function maskedUserinfo(raw: string): string {
  return raw.replace(/^(\s*(?:[a-z][a-z0-9+.-]*:)?\/\/|\s*)[^]*@/i, '$1***@');
}

/** Whether `part` of a URL is valid percent-encoding (a `%` begins a `%XX` escape of UTF-8). */
function decodes(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

function url(...protocols: string[]): Parser<string> {
  return accepting(`${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL`, (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw.trim());
    } catch {
      throw new Error(`expected a URL, got "${raw}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new Error(`expected a ${protocols.join(' or ')} URL, got "${raw}"`);
    }
    return raw.trim().replace(/\/+$/, '');
  });
}

/**
 * REDIS_URL: ioredis decodes its user name and password with decodeURIComponent, which threw at
 * start-up on a `%` that begins no escape ("URI malformed", naming nothing). pg and the Ollama
 * client take such a `%` as itself, so the other URLs may hold one.
 */
const redisUrl: Parser<string> = accepting('redis or rediss URL', (raw) => {
  const value = url('redis:', 'rediss:')(raw);
  const { username, password } = new URL(value);
  if (!decodes(username) || !decodes(password)) throw new Error(`the user name or password in "${raw}" has a % that begins no %-escape: write % as %25`);
  return value;
});

/** Fastify's `trustProxy`: false, true (any proxy), a hop count, or the proxies' addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

/** Whether `text` is an IP address, or a CIDR range whose prefix fits it (1-32, 1-128), as proxy-addr takes them. */
function addressOrCidr(text: string): boolean {
  const [address, prefix, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (family === 4 ? 32 : 128);
}

const trustProxy: Parser<TrustProxy> = accepting('false, true, a hop count, or addresses/CIDRs, comma-separated', (raw) => {
  const v = raw.trim().toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  if (['true', 'yes', 'on'].includes(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  const proxies = list(raw);
  for (const p of proxies) {
    if (!addressOrCidr(p)) throw new Error(`expected true, a hop count, or comma-separated proxy addresses/CIDRs (10.0.0.5, 10.0.0.0/8, fd00::/8), got "${p}"`);
  }
  return proxies;
});

/** A host name (RFC 1123 labels) or an IP address to listen on. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
const listenHost: Parser<string> = accepting('an IP address or a host name', (raw) => {
  const v = raw.trim();
  if (isIP(v) || HOST_NAME.test(v)) return v;
  const hint = /^\[.*\]$/.test(v) ? '; write an IPv6 address without brackets' : '';
  throw new Error(`expected an IP address or a host name, got "${raw}"${hint}`);
});

/** A secret of at least `minChars` characters; errors never echo it. */
function secretText(minChars: number): Parser<string> {
  return accepting(`${minChars} characters or more`, (raw) => {
    const v = raw.trim();
    if (v.length < minChars) throw new Error(`expected at least ${minChars} characters (openssl rand -hex 32 makes one), got ${v.length}`);
    return v;
  });
}

/** Shortest ADMIN_TOKEN accepted: guesses are limited per address, not per token (routes/auth.ts). */
export const ADMIN_TOKEN_MIN_CHARS = 16;

/** A character no client sends in a header as it is: anything but the space and printable ASCII. */
const NOT_HEADER_ASCII = /[^\x20-\x7e]/;

/**
 * A bearer token of at least `minChars` characters, taken as it is; errors never echo it. Spaces
 * around it are refused, not trimmed: a client's header cannot carry them, and trimming here would
 * hide a token file or .env line that differs from what its clients send. So is any character past
 * ASCII or a control character: Node reads header bytes as Latin-1, so a token with `ü` sent in
 * UTF-8 (curl, any shell) arrives as `Ã¼` and a token with `€` can match no header at all.
 */
function bearerToken(minChars: number): Parser<string> {
  const secret = secretText(minChars);
  return accepting(`${minChars} characters or more`, (raw) => {
    if (raw !== raw.trim()) throw new Error('has spaces or a line break before or after it, which no Authorization header can carry; remove them');
    const odd = NOT_HEADER_ASCII.exec(raw);
    if (odd) {
      throw new Error(
        `has a character that is not printable ASCII (character ${odd.index + 1}), which an Authorization header does not carry as it is; use letters, digits and punctuation (openssl rand -hex 32)`,
      );
    }
    return secret(raw);
  });
}

const list: Parser<string[]> = accepting('a comma-separated list', (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const origins: Parser<string[]> = accepting('origins or *, comma-separated', (raw) =>
  list(raw).map((o) => {
    if (o === '*') return o;
    const origin = serializedOrigin(o);
    if (origin) return origin;
    const hint = /^[\w.-]+:\d+$/.test(o) ? `; did you mean http://${o}?` : '';
    throw new Error(`expected comma-separated origins, scheme://host[:port] without a path (https://example.com), got "${o}"${hint}`);
  }),
);

interface Setting<T> {
  parse: Parser<T>;
  default: T | (() => T) | undefined;
  description: string;
  secret?: boolean;
  /** How a default computed at start-up is described (README, --help). */
  shownDefault?: string;
}

function setting<T>(parse: Parser<T>, def: Setting<T>['default'], description: string, secret = false): Setting<T> {
  return { parse, default: def, description, secret };
}

/** A setting whose default is worked out at start-up, described as `shown`. */
function computed<T>(parse: Parser<T>, def: () => T, shown: string, description: string): Setting<T> {
  return { parse, default: def, description, shownDefault: shown };
}

/**
 * The soft limit on open files of this process (`ulimit -n`, as Node raised it at start), from
 * /proc/self/limits; undefined where that cannot be read (not Linux) or there is no limit.
 */
export function openFileLimit(limits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(limits())?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** Connections taken past HTTP_MAX_CONNECTIONS that serve only the health routes and admin requests. */
export const HTTP_RESERVE_CONNECTIONS = 32;
/**
 * How long a connection from the reserve may take to send its request, and then to take its answer
 * (it serves one request and closes): a probe or an admin's client sends at once.
 */
export const HTTP_RESERVE_REQUEST_MS = 2_000;
/** Connections of the reserve one client address may hold (a proxy TRUST_PROXY trusts is not counted). */
export const HTTP_RESERVE_PER_ADDRESS = 4;

/** HTTP_MAX_CONNECTIONS when unset with an open-file limit unknown (macOS allows 10,240 files a process by default). */
export const CONNECTIONS_UNKNOWN_LIMIT = 7_500;
/** HTTP_MAX_CONNECTIONS's largest default: the room-socket cap (ROOM_MAX_CONNECTIONS) and 5,000 HTTP connections. */
export const CONNECTIONS_MOST = 25_000;

/**
 * HTTP_MAX_CONNECTIONS's default for an open-file limit: three quarters of it, at most
 * CONNECTIONS_MOST. The quarter left is for the store, the workers, the model server's and Redis's
 * connections and the health reserve, which fail with EMFILE once clients hold every descriptor.
 */
export function defaultConnectionCap(limit: number | undefined): number {
  if (limit === undefined) return CONNECTIONS_UNKNOWN_LIMIT;
  return Math.max(1, Math.min(CONNECTIONS_MOST, Math.floor((limit * 3) / 4)));
}

/** Every environment variable Salon reads, in the order the README's table lists them. */
export const SETTINGS = {
  PORT: setting(integer(0, 65535), 3000, 'HTTP port (0 picks a free one)'),
  HOST: setting(listenHost, '127.0.0.1', 'interface to listen on (an IP address or a host name)'),
  DATA_DIR: setting(text, './data', 'where the SQLite file, the vector index and the identity secret live'),
  LOG_LEVEL: setting(oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'), 'info', 'pino log level'),
  AI_PROVIDER: setting(oneOf('local', 'ollama', 'openai'), 'local', 'embedder and chat model: built-in offline, Ollama, or an OpenAI-compatible server'),
  LOCAL_EMBED_DIM: setting(integer(32, 4096), 2048, 'dimension of the built-in hashing embedder (wider means fewer hash collisions)'),
  OLLAMA_HOST: setting(url('http:', 'https:'), 'http://127.0.0.1:11434', 'Ollama server'),
  OLLAMA_EMBED_MODEL: setting(text, 'nomic-embed-text', 'Ollama embedding model'),
  OLLAMA_CHAT_MODEL: setting(text, 'llama3.2', 'Ollama chat model'),
  OPENAI_BASE_URL: setting(url('http:', 'https:'), 'https://api.openai.com/v1', 'OpenAI-compatible API base (ending in /v1)'),
  OPENAI_API_KEY: setting(text, undefined, 'API key for the OpenAI-compatible server (never logged)', true),
  OPENAI_EMBED_MODEL: setting(text, 'text-embedding-3-small', 'OpenAI-compatible embedding model'),
  OPENAI_CHAT_MODEL: setting(text, 'gpt-4o-mini', 'OpenAI-compatible chat model'),
  AI_TIMEOUT_MS: setting(integer(100, 600_000), 60_000, 'longest wait for a model before giving up'),
  AI_MAX_ANSWER_TOKENS: setting(integer(16, 100_000), 1024, 'most tokens a remote model may write in one reply (Ollama num_predict, OpenAI max_tokens)'),
  ASK_LIMIT_USER: setting(integer(1, 100_000), 6, 'questions to the assistant a minute per member'),
  ASK_LIMIT_ROOM: setting(
    integer(1, 100_000),
    20,
    'questions to the assistant a minute per room, seen by the room (a private ask counts against its asker alone)',
  ),
  MEMORY_MAX_CHUNKS_PER_THREAD: setting(integer(1, 10_000_000), 5_000, 'memory chunks a thread keeps; past it the least recently seen go first'),
  MEMORY_RETENTION_DAYS: setting(integer(1, 36_500), 90, 'days a memory chunk is kept after it was last seen'),
  PROMPT_TOKEN_BUDGET: setting(
    integer(2_000, 1_000_000),
    3_000,
    'tokens (counted as 4 characters) an answer prompt may hold; past it the oldest past conversation goes first, then the lowest-ranked documents, then the oldest recent chat lines (the question is never cut)',
  ),
  ASK_LIMIT_IP: setting(
    integer(1, 100_000),
    12,
    "questions to the assistant a minute per client address (IPv6: per /64); twice a member's, for people sharing one address",
  ),
  ASK_WAITING_PER_ROOM: setting(
    integer(0, 10_000),
    4,
    'questions that may wait for the assistant in one room while it answers another (half of them, rounded up, per member or address); 0: no line, a question is answered at once or refused busy',
  ),
  EMBED_CACHE_MAX_ENTRIES: setting(
    integer(0, 100_000_000),
    50_000,
    'document vectors a remote embedder keeps in the store (questions are never kept); the oldest go first',
  ),
  AI_IDLE_TIMEOUT_MS: setting(integer(100, 600_000), 20_000, 'longest silence inside a streamed answer'),
  DATABASE_URL: setting(
    url('postgres:', 'postgresql:'),
    undefined,
    'PostgreSQL store shared by many nodes (a search_path in the URL, ?options=-c%20search_path%3Dsalon, picks the schema; unset: SQLite in DATA_DIR)',
    true,
  ),
  DATABASE_POOL_SIZE: setting(integer(1, 1000), 10, 'connections each node keeps to PostgreSQL (DATABASE_URL)'),
  SQLITE_SYNCHRONOUS: setting(
    oneOf('normal', 'full'),
    'normal',
    'when a message is on disk before it is acknowledged: normal survives a crash of the process, full also a power loss (slower)',
  ),
  REDIS_URL: setting(
    redisUrl,
    undefined,
    'Redis shared by many nodes: room traffic, typing and presence across nodes; needs IDENTITY_SECRET (unset: one node, in-process bus)',
    true,
  ),
  REDIS_KEY_PREFIX: setting(
    text,
    'salon:',
    'prefix of every Redis key and channel Salon uses: deployments sharing one Redis keep apart by it (pub/sub ignores the database number)',
  ),
  IDENTITY_SECRET: setting(
    secretText(32),
    undefined,
    'signs member identities (at least 32 characters: openssl rand -hex 32); every node must have the same one, so REDIS_URL requires it (unset: generated once in DATA_DIR)',
    true,
  ),
  IDENTITY_TOKEN_TTL_DAYS: setting(
    integer(1, 3650),
    DEFAULT_TOKEN_TTL_DAYS,
    "days a member's identity token is accepted after it was issued; every join renews it, so only an identity unused that long expires (its holder joins as a new member, without the old one's private memory); v1 tokens from before expiry count as issued when the server first ran with it",
  ),
  ADMIN_TOKEN: setting(
    bearerToken(ADMIN_TOKEN_MIN_CHARS),
    undefined,
    'bearer token for admin routes, at least 16 characters of printable ASCII, no spaces around it (unset: a random one, printed on stderr at start whatever LOG_LEVEL is); 10 failed attempts a minute from one address are answered 429 until the minute has passed',
    true,
  ),
  ALLOWED_ORIGINS: setting(
    origins,
    [] as string[],
    'extra origins allowed to open room sockets, each scheme://host[:port] without a path, compared exactly (same origin is always allowed; * allows any)',
  ),
  ROOM_HELLO_TIMEOUT_MS: setting(integer(100, 600_000), 10_000, 'how long a room socket may stay open without sending hello (then 4408)'),
  ROOM_HEARTBEAT_MS: setting(integer(100, 600_000), 30_000, 'ping interval of room sockets; a socket that misses a pong is dropped'),
  ROOM_MAX_CONNECTIONS_PER_IP: setting(integer(1, 10_000_000), 100, 'open room sockets allowed per client address (IPv6: per /64)'),
  ROOM_MAX_CONNECTIONS: setting(integer(1, 10_000_000), 20_000, 'open room sockets allowed on this node; past it new sockets close with 1013'),
  HTTP_MAX_CONNECTIONS_PER_IP: setting(
    integer(1, 10_000_000),
    500,
    'open TCP connections one client address may hold, HTTP and room sockets together (IPv6: per /64); past it a new one is closed at once (a proxy TRUST_PROXY trusts is not counted)',
  ),
  HTTP_MAX_CONNECTIONS: computed(
    integer(1, 10_000_000),
    () => defaultConnectionCap(openFileLimit()),
    `¾ of the open-file limit (ulimit -n), at most ${CONNECTIONS_MOST}; ${CONNECTIONS_UNKNOWN_LIMIT} where it is unknown`,
    `open TCP connections this node serves, HTTP and room sockets together; past it ${HTTP_RESERVE_CONNECTIONS} more (${HTTP_RESERVE_PER_ADDRESS} per address) serve only /healthz, /readyz, /metrics and admin requests (others get 503 ERR_SERVER_FULL), one request each, sent within ${HTTP_RESERVE_REQUEST_MS / 1000} s, and a new one past those is closed at once (counted in salon_connections_refused_total)`,
  ),
  ROOM_ADDRESS_FRAMES_PER_SECOND: setting(
    integer(1, 1_000_000),
    20,
    'frames a second one client address may send over all its room sockets (bursts of twice that); typing frames have a budget of their own of the same size',
  ),
  ROOM_NEW_IDENTITIES_PER_MINUTE: setting(integer(1, 1_000_000), 30, 'new member identities (hello without a token) one client address may take a minute'),
  ROOM_ADDRESS_CONNECTS_PER_MINUTE: setting(
    integer(1, 1_000_000),
    60,
    'room sockets one client address may open a minute (IPv6: per /64; bursts of as many); past it a new socket gets ERR_RATE_LIMITED and closes with 4429 before its hello (counted in salon_room_sockets_refused_total)',
  ),
  ROOM_MESSAGES_PER_SECOND: setting(
    integer(1, 1_000_000),
    30,
    'messages a second one room accepts from all its members together (bursts of twice that); the addresses posting share it, each the rate divided by their number and one more',
  ),
  API_RATE_LIMIT_PER_MINUTE: setting(
    integer(1, 10_000_000),
    300,
    'requests a minute one client address may make to each ask, search, ingest, content, room-listing, metrics and OpenAPI route (a HEAD counts as its GET)',
  ),
  TRUST_PROXY: setting(
    trustProxy,
    false as TrustProxy,
    "trust X-Forwarded-For from: false (no proxy), true (any peer: then any client can name its own address, warned of at start), a hop count, or the proxies' addresses/CIDRs; with false, a private-network peer that forwards requests is warned of once in the log",
  ),
  HTTP_REQUEST_TIMEOUT_MS: setting(
    integer(1000, 600_000),
    30_000,
    'longest a client may take to send a whole HTTP request, and longest it may go without taking any of an answer',
  ),
  STARTUP_TIMEOUT_MS: setting(
    integer(1000, 86_400_000),
    600_000,
    'longest each start-up step may take before the server gives up (loading the search index of a large store, seeding the demo)',
  ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: setting(integer(1000, 600_000), 65_000, "how long an idle HTTP keep-alive connection stays open (longer than a proxy's own)"),
  ROOM_MAX_BUFFERED_BYTES: setting(integer(65_536, 1_073_741_824), 1_048_576, 'unsent bytes a room socket may queue before it is closed with 1013'),
  ROOM_NODE_BUFFERED_BYTES: setting(
    integer(65_536, 68_719_476_736),
    268_435_456,
    'unsent bytes all room sockets of this node may queue together (at least ROOM_MAX_BUFFERED_BYTES); past it, a socket more than 64 KiB behind is closed with 1013',
  ),
  SEED_DEMO: setting(boolean, true, 'fill an empty store with the demo content at start'),
  HNSW_THRESHOLD: setting(integer(0, 100_000_000), 10_000, 'vector count above which search moves from exact scan to HNSW'),
  HNSW_EF_SEARCH: setting(
    integer(1, 4_096),
    DEFAULT_HNSW_PARAMS.efSearch,
    "candidates an HNSW search keeps (hnswlib's ef), for documents and memory alike: more finds more of the exact answer and takes longer (npm run eval:graph measures both on real text)",
  ),
  SEARCH_WORKERS: computed(
    integer(1, MAX_SEARCH_WORKERS),
    () => defaultSearchWorkers(),
    'number of cores',
    'search worker threads (flat scans), and the threads an HNSW graph is built on',
  ),
  MEMORY_HNSW_THRESHOLD: setting(
    integer(0, 100_000_000),
    5_000,
    'conversation-memory chunks above which a thread holding many of them is searched through an HNSW graph (built in the background, never saved)',
  ),
  SEARCH_KERNEL: setting(
    oneOf('auto', 'native', 'wasm'),
    'auto' as 'auto' | 'native' | 'wasm',
    'exact-scan kernel: native (AVX2, salon-hnsw), wasm (128-bit WebAssembly SIMD), or auto (native where the CPU has AVX2 and FMA)',
  ),
  HN_API_BASE: setting(url('http:', 'https:'), 'https://hacker-news.firebaseio.com/v0', 'Hacker News API base'),
  HN_COMMENT_LIMIT: setting(integer(0, 500), 10, 'top comments kept per HN story'),
  HN_REQUEST_INTERVAL_MS: setting(integer(0, 60_000), 50, 'pause between HN API requests'),
  REDDIT_API_BASE: setting(url('http:', 'https:'), 'https://www.reddit.com', "where Reddit threads' JSON is read (<base>/comments/<id>.json)"),
  REDDIT_COMMENT_LIMIT: setting(integer(0, 500), 10, 'top comments kept per Reddit thread'),
  REDDIT_REQUEST_INTERVAL_MS: setting(integer(0, 60_000), 1000, 'pause between Reddit requests'),
  FETCH_TIMEOUT_MS: setting(integer(100, 120_000), 12_000, 'connect, header and body timeout for fetched pages'),
  FETCH_MAX_BYTES: setting(integer(1024, 100_000_000), 5_000_000, 'largest page the fetcher reads (JSON API answers: at most 2 MiB)'),
  FETCH_ALLOW_HOSTS: setting(list, [] as string[], 'hosts or IPs the fetcher may reach even though they are private (tests)'),
  // At most 4 million: the text readers' letter runs under `u` (`[\p{L}\p{N}]+`) keep a backtrack
  // entry per astral letter and throw RangeError past about 8 million code units (docs/architecture.md).
  BODY_MAX_CHARS: setting(integer(1000, 4_000_000), 200_000, 'longest article body kept'),
  EXTRACT_TASK_TIMEOUT_MS: setting(
    integer(100, 600_000),
    20_000,
    'longest one page extraction or feed parse may run in its worker before the worker is replaced',
  ),
  SOURCES: setting(
    accepting('entries separated by ;', (raw): SourceSpec[] => parseSourceLines(raw, 'SOURCES')),
    [] as SourceSpec[],
    'sources polled in the background besides those added over the API and DATA_DIR/sources: "kind target [everyMinutes]" entries separated by ;, e.g. "feed https://example.com/rss 30; hn top 15"',
  ),
  SOURCE_POLLING: setting(boolean, true, 'poll due sources in the background on this node (with many nodes each source is polled by one node at a time)'),
  INGEST_JOB_BUDGET_MS: setting(
    integer(1000, 86_400_000),
    900_000,
    'total time an ingest job may run before it stops as failed, keeping the items it finished',
  ),
  CHUNK_SIZE: setting(integer(100, 20_000), 800, 'characters per indexed chunk'),
  CHUNK_OVERLAP: setting(integer(0, 10_000), 160, 'characters shared by neighbouring chunks (fewer than CHUNK_SIZE)'),
  TOPIC_SUMMARY_INTERVAL_MS: setting(integer(1000, 7 * 86_400_000), 3_600_000, 'how often topic room summaries are regenerated'),
  THREAD_OPS: setting(oneOf('members', 'admin'), 'members', 'who may run thread slash commands in a room'),
  SALON_CORPORA: setting(text, '../shared/corpora', 'the shared corpora that tests, benchmarks and evaluations read in place (not used by the server)'),
} as const;

type Settings = typeof SETTINGS;
type ValueOf<K extends keyof Settings> = Settings[K] extends Setting<infer T> ? T : never;

/** The parsed configuration. Optional settings are undefined when unset. */
export type Config = { readonly [K in keyof Settings]: Settings[K]['default'] extends undefined ? ValueOf<K> | undefined : ValueOf<K> };

/**
 * Parses `env` into a Config. Empty strings count as unset. Throws ConfigError naming the variable
 * on the first value that does not parse, or when two settings contradict each other.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(SETTINGS) as (keyof Settings)[]) out[name] = readSetting(name, env);
  const config = out as Config;
  if (config.CHUNK_OVERLAP >= config.CHUNK_SIZE) {
    throw new ConfigError('CHUNK_OVERLAP', `must be smaller than CHUNK_SIZE (${config.CHUNK_SIZE})`);
  }
  if (config.ROOM_NODE_BUFFERED_BYTES < config.ROOM_MAX_BUFFERED_BYTES) {
    throw new ConfigError('ROOM_NODE_BUFFERED_BYTES', `must not be smaller than ROOM_MAX_BUFFERED_BYTES (${config.ROOM_MAX_BUFFERED_BYTES})`);
  }
  if (config.REDIS_URL && !config.IDENTITY_SECRET) {
    // A secret per node would make every reconnection to another node fail with 4401.
    throw new ConfigError('IDENTITY_SECRET', 'required when REDIS_URL is set: every node must sign member identities with the same secret');
  }
  out.DATA_DIR = resolve(config.DATA_DIR);
  out.SALON_CORPORA = resolve(config.SALON_CORPORA);
  return Object.freeze(out) as Config;
}

/**
 * One setting from `env`: its parsed value, or its default when unset or empty. For tools that need
 * a single setting without the whole server's config (tests, benchmarks). Throws ConfigError.
 */
export function readSetting<K extends keyof Settings>(name: K, env: NodeJS.ProcessEnv = process.env): Config[K] {
  const s = SETTINGS[name] as Setting<unknown>;
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') {
    return (typeof s.default === 'function' ? (s.default as () => unknown)() : s.default) as Config[K];
  }
  try {
    return s.parse(raw) as Config[K];
  } catch (err) {
    // A secret's value (a key, a URL with its password), and a password in any other, never reaches the error, which is printed and logged.
    const shown = (value: string) => (s.secret ? '***' : maskedUserinfo(value));
    const message = (err as Error).message;
    throw new ConfigError(name, message.split(raw).join(shown(raw)).split(raw.trim()).join(shown(raw.trim())));
  }
}

/** Config for tests: defaults plus the given overrides, no environment read. */
export function testConfig(overrides: Partial<Record<keyof Settings, string>> = {}): Config {
  return loadConfig({ SEED_DEMO: 'false', LOG_LEVEL: 'silent', SEARCH_WORKERS: '1', ...overrides });
}

/** Rows for `salon --help` and the README table: name, default, what values it accepts (empty: any text), description. */
export function describeSettings(): { name: string; default: string; accepts: string; description: string }[] {
  return Object.entries(SETTINGS).map(([name, s]) => {
    const d = (s as Setting<unknown>).default;
    const shown = typeof d === 'function' ? ((s as Setting<unknown>).shownDefault ?? '') : d === undefined ? '' : Array.isArray(d) ? d.join(',') : String(d);
    return { name, default: shown, accepts: (s.parse as Parser<unknown>).accepts ?? '', description: s.description };
  });
}

/** The config with secrets masked, safe to log. */
export function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [keyof Settings, Setting<unknown>][]) {
    const v = config[name];
    out[name] = s.secret && v !== undefined ? '***' : v;
  }
  return out;
}
