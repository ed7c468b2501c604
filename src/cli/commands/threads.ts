/**
 * `salon threads list|show|merge|split|unlock|fuse|compact|history`: thread operations on the
 * store in DATA_DIR (not through a running server), the same ThreadService the HTTP API and the
 * slash commands use, as the actor `admin`. Results print as JSON on stdout, threads as the HTTP API
 * shows them (`list` and `history`
 * print lines unless `--json`); a refused operation exits 1 with its catalogue code and changes
 * nothing. Running servers on the same store follow the memory changes from the store's change
 * log within 30 s (OfflineChanges); their live rooms are told of a change on the Redis bus when
 * REDIS_URL is set (room-notices.ts), and the command says so on stderr when they cannot be.
 */
import { OfflineChanges } from '../../sync/offline-changes.js';
import { loadConfig, type Config } from '../../config.js';
import { SalonError, errors } from '../../errors.js';
import { MemoryService } from '../../memory/memory-service.js';
import { ThreadBridges } from '../../memory/threads/bridges.js';
import { ThreadService, type SplitPart } from '../../memory/threads/thread-service.js';
import { threadView } from '../../memory/threads/thread-view.js';
import { SPLIT_LOCKS } from '../../protocol/threads.js';
import { createAi, createMemoryIndex, openStore } from '../../parts.js';
import { storeResolver } from '../../rooms/resolver.js';
import type { SplitLock, Store, Thread } from '../../store/types.js';
import { LocalFileError, readLocalFile } from '../../local-files.js';
import { parseArgs, UsageError, type Command } from '../command.js';
import { printable, printableJson } from '../printable.js';
import { NOT_TOLD_WITHOUT_REDIS, RoomNotices, UNTOLD_ROOMS_SEE } from '../room-notices.js';

const USAGE = 'threads list|show|merge|split|unlock|fuse|compact|history …';
const EXIT_USAGE = 2;
const ACTOR = 'admin';
const HISTORY_MAX = 1_000;

const HELP = [
  'usage:',
  '  salon threads list --room ROOM [--json]',
  '  salon threads show THREAD',
  '  salon threads merge SURVIVOR ABSORBED',
  '  salon threads split THREAD                      (lists its messages)',
  `  salon threads split THREAD --parts JSON|@FILE [--lock ${SPLIT_LOCKS.join('|')}]`,
  '      JSON: [{"title": "…", "messageIds": ["…"]}, …]',
  '  salon threads unlock THREAD',
  '  salon threads fuse THREAD_A THREAD_B [--threshold 0.82]',
  '  salon threads compact THREAD [--threshold 0.82]',
  '  salon threads history THREAD [--json]',
  '',
  'merge, split, unlock, fuse and compact tell the live rooms of running servers over Redis',
  '(REDIS_URL), as the HTTP API does; without REDIS_URL no running server can be reached, and',
  'the command says so on stderr: a room open on a server shows the change once it is opened again.',
].join('\n');

/** One line per thread for `list`. */
function line(t: Thread, messages: number): string {
  const badges = [
    t.main && 'main',
    t.status,
    t.isMerged && 'fused',
    t.splitLockedUntil && `locked:${t.splitLockedUntil}`,
    t.mergedInto && `merged_into:${t.mergedInto}`,
  ].filter(Boolean);
  return `${t.id}  ${t.title}  [${badges.join(', ')}]  ${messages} messages`;
}

/** `--threshold`: a decimal fraction in (0, 1] written out (0.82, not 8.2e-1 or 0x1), or undefined. */
function threshold(value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === true) throw new UsageError('--threshold needs a value, a decimal number in (0, 1] such as 0.82');
  const n = /^(\d{1,16}(\.\d{1,16})?|\.\d{1,16})$/.test(value) ? Number(value) : NaN;
  if (!(n > 0 && n <= 1)) throw new UsageError(`--threshold must be a decimal number in (0, 1] such as 0.82, got "${value}"`);
  return n;
}

/** The text of `--parts @FILE`; a file that cannot be read is named with the reason, as `salon import` names its FILE. */
async function partsFile(file: string): Promise<string> {
  try {
    return (await readLocalFile(file)).toString('utf8');
  } catch (err) {
    if (!(err instanceof LocalFileError)) throw err;
    throw new errors.ERR_BAD_THREAD_OP(`--parts @${file}: cannot read the file (${err.message})`);
  }
}

/** Whether `value` is a part as a split takes it: a title, and message ids as an array of strings. */
function isSplitPart(value: unknown): value is SplitPart {
  const part = value as { title?: unknown; messageIds?: unknown } | null;
  return (
    typeof part === 'object' &&
    part !== null &&
    typeof part.title === 'string' &&
    Array.isArray(part.messageIds) &&
    part.messageIds.every((id) => typeof id === 'string')
  );
}

/**
 * The parts `--parts` gives, each checked for its shape: `[null]` ended the command with a
 * TypeError, and a `messageIds` string was split into one-letter ids.
 */
async function partsOf(value: string | true | undefined): Promise<SplitPart[]> {
  if (typeof value !== 'string') throw new errors.ERR_BAD_THREAD_OP('--parts needs JSON or @FILE');
  const text = value.startsWith('@') ? await partsFile(value.slice(1)) : value;
  let parts: unknown;
  try {
    parts = JSON.parse(text);
  } catch (err) {
    throw new errors.ERR_BAD_THREAD_OP(`--parts is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parts) || !parts.every(isSplitPart)) {
    throw new errors.ERR_BAD_THREAD_OP('--parts must be a JSON array: [{"title": "…", "messageIds": ["…"]}, …]');
  }
  return parts;
}

/**
 * The threads of `room`, as GET /api/v1/rooms/:id/threads lists them (its main thread made when
 * missing) for a room that exists; for one that does not, those the store still has (its item was
 * deleted), or ERR_ROOM_NOT_FOUND. Listing created a main thread for any room id given, mistyped or not.
 */
async function roomThreads(store: Store, threads: ThreadService, room: string): Promise<Thread[]> {
  if (await storeResolver(store)(room)) return (await threads.list(room)).threads;
  const kept = await store.listThreads(room);
  if (!kept.length) throw new errors.ERR_ROOM_NOT_FOUND(room);
  return kept;
}

/**
 * Tells running servers' live rooms what the operation changed, or says on stderr which were not
 * told and why. The change is stored either way: a failure here is told, not thrown, and the
 * command still succeeds (running it again would not tell the rooms; it would repeat a done change).
 */
async function tellRooms(config: Config, notices: RoomNotices): Promise<void> {
  if (!notices.pending) return;
  if (!config.REDIS_URL) return console.error(`salon threads: ${NOT_TOLD_WITHOUT_REDIS}`);
  const untold = await notices
    .publish(config)
    .catch((err: unknown) => ({ rooms: [], why: `publishing on Redis failed (${(err as Error)?.message ?? String(err)})` }));
  if (!untold) return;
  const rooms = untold.rooms.length ? ` (${untold.rooms.join(', ')})` : '';
  console.error(printable(`salon threads: the change is saved, but rooms open on running servers were not told${rooms}: ${untold.why}. ${UNTOLD_ROOMS_SEE}`));
}

const threadsCommand: Command = {
  summary: 'list, show, merge, split, unlock, fuse and compact threads; their history',
  usage: USAGE,
  help: HELP,
  flags: ['room', 'json', 'parts', 'lock', 'threshold'],
  async run(args) {
    const { positionals, options } = parseArgs(args, ['json']);
    const [verb, ...ids] = positionals;
    const json = options.get('json') === true;
    const out = (value: unknown) => process.stdout.write(`${printableJson(value)}\n`);
    // Threads print as the HTTP API shows them (docs/api.md), not as the store keeps them.
    const withView = <T extends { thread: Thread }>(r: T) => ({ ...r, thread: threadView(r.thread) });
    const config = loadConfig();
    const store = openStore(config, { mustExist: true });
    const ai = createAi(config, store);
    const index = createMemoryIndex(config, ai.embedder, { hnswMode: 'off' });
    // Servers sharing the store follow the memory this command changes through the change log.
    const changes = new OfflineChanges(store);
    const memory = new MemoryService({
      store,
      embedder: ai.embedder,
      index,
      maxChunksPerThread: config.MEMORY_MAX_CHUNKS_PER_THREAD,
      retentionDays: config.MEMORY_RETENTION_DAYS,
      onChanged: (ids) => changes.record('memory', ids),
    });
    const bridges = new ThreadBridges(store, memory);
    // What the operation tells the rooms, sent once it is stored (tellRooms).
    const notices = new RoomNotices();
    const threads = new ThreadService({ store, memory, chat: ai.chat, bridges, outlet: notices });
    const need = (n: number) => {
      if (ids.length !== n) throw new UsageError();
      return ids;
    };
    try {
      switch (verb) {
        case 'list': {
          const room = options.get('room');
          if (typeof room !== 'string') throw new UsageError();
          const list = await roomThreads(store, threads, room);
          const counts = await Promise.all(list.map((t) => store.countThreadMessages(t.id)));
          if (json) out(list.map((t, i) => ({ ...threadView(t), messages: counts[i] })));
          else for (const [i, t] of list.entries()) console.log(printable(line(t, counts[i])));
          return 0;
        }
        case 'show':
          out(withView(await threads.detail(need(1)[0])));
          return 0;
        case 'history': {
          const [id] = need(1);
          await threads.get(id);
          const events = await store.threadHistory(id, HISTORY_MAX);
          if (json) out(events);
          else for (const e of events) console.log(printable(`${e.at}  ${e.actor}  ${e.action}  ${printableJson(e.details)}`));
          return 0;
        }
        case 'split': {
          const [id] = need(1);
          if (!options.has('parts')) {
            out(withView(await threads.splitListing(id)));
            return 0;
          }
          const lock = (options.get('lock') ?? 'compaction') as SplitLock;
          await memory.load();
          const { parent, threads: parts } = await threads.split(id, await partsOf(options.get('parts')), lock, ACTOR);
          out({ parent: threadView(parent), threads: parts.map(threadView) });
          break;
        }
        case 'merge': {
          const [survivor, absorbed] = need(2);
          await memory.load();
          out({ thread: threadView(await threads.merge(survivor, absorbed, ACTOR)) });
          break;
        }
        case 'unlock':
          out({ thread: threadView(await threads.unlock(need(1)[0], ACTOR)) });
          break;
        case 'fuse': {
          const [a, b] = need(2);
          await memory.load();
          out(withView(await threads.fuse([a, b], ACTOR, threshold(options.get('threshold')))));
          break;
        }
        case 'compact':
          await memory.load();
          out(withView(await threads.compact(need(1)[0], ACTOR, threshold(options.get('threshold')))));
          break;
        default:
          throw new UsageError();
      }
      // Chunks rebuilt from messages (a split) are stored before the command ends.
      await memory.idle();
      await tellRooms(config, notices);
      return 0;
    } catch (err) {
      if (err instanceof UsageError) {
        console.error(err.message ? `salon threads: ${printable(err.message)}\n${HELP}` : HELP);
        return EXIT_USAGE;
      }
      if (!(err instanceof SalonError)) throw err;
      console.error(`salon threads: ${err.code}: ${printable(err.message)}`);
      return 1;
    } finally {
      bridges.close();
      await memory.close();
      await index.close();
      await changes.flush();
      await store.close();
    }
  },
};

export default threadsCommand;
