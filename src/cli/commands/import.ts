/**
 * `salon import FILE --room ID [--thread THREAD]`: brings an exported discussion into a room of
 * the store in DATA_DIR (not through a running server), like `POST /api/v1/rooms/:id/import`:
 * FILE holds `[{author: {name}, text, ts}, …]` or `{messages: […]}`. Every message is checked
 * before anything is written; then they are stored, all or none, and the thread's memory is
 * built, with a progress bar on stderr. Prints `{threadId, messageIds, stored}` to stdout.
 *
 * Running servers on the same store index the imported chunks, and their live rooms deliver the
 * imported messages to their members, within 30 s, from the store's change log (OfflineChanges),
 * as README says.
 */
import { OfflineChanges } from '../../sync/offline-changes.js';
import { loadConfig } from '../../config.js';
import { SalonError, errors } from '../../errors.js';
import { checkImportInTurns, IMPORT_MAX_BYTES, IMPORT_MAX_MESSAGES, importMessages, importTarget } from '../../memory/import.js';
import { MemoryService } from '../../memory/memory-service.js';
import { stderrLogger } from '../../logger.js';
import type { Message } from '../../protocol/messages.js';
import type { UnsettledSeqs } from '../../store/types.js';
import { createAi, createMemoryIndex, openStore } from '../../parts.js';
import { storeResolver } from '../../rooms/resolver.js';
import { DEFAULT_MAX_TEXT_CHARS } from '../../rooms/options.js';
import { readLocalFile } from '../../local-files.js';
import { parseArgs, type Command } from '../command.js';
import { ProgressBar } from '../progress.js';
import { printable } from '../printable.js';

const USAGE = 'import FILE --room ID [--thread THREAD]';
const EXIT_USAGE = 2;
/**
 * Memory chunk ids logged for the running servers in one entry while the run goes on: logged only
 * at its end, a run killed while building the memory logged none, and the servers never indexed
 * the chunks it had stored. One entry per chunk was hundreds for a large import, each applied apart.
 */
const MEMORY_NOTICE_IDS = 256;
/** Exit codes of a run stopped by a signal, as a shell reports them (128 + the signal's number). */
const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM', number> = { SIGINT: 130, SIGTERM: 143 };
/**
 * FILE's text, refused past IMPORT_MAX_BYTES (what POST …/import takes) before it is read, without
 * a leading byte order mark: tools on Windows write UTF-8 with one, and JSON.parse refused such a
 * file as an unexpected token, a character nobody sees.
 */
async function readImportFile(file: string): Promise<string> {
  const tooLarge = `it is larger than ${IMPORT_MAX_BYTES / (1024 * 1024)} MiB, the most one import takes (${IMPORT_MAX_MESSAGES} messages); split it`;
  const text = (await readLocalFile(file, IMPORT_MAX_BYTES, tooLarge)).toString('utf8');
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/**
 * The import's MemoryService, counting the messages it is handed to remember: every imported
 * message is one (checkImport: a person's, with text), and a chunk stored ticks the bar for its
 * own, so the difference is what a chunk that failed to store left out of the memory.
 */
class ImportMemory extends MemoryService {
  handed = 0;

  override rememberMessages(messages: Message[]): Promise<void> {
    this.handed += messages.length;
    return super.rememberMessages(messages);
  }
}

/** `from–to (begun at)` for each range. */
function ranges(list: readonly UnsettledSeqs[]): string {
  return list.map((r) => `${r.fromSeq}–${r.toSeq} (begun ${r.startedAt})`).join(', ');
}

/**
 * Says on stderr which unfinished imports of the room (store.unsettledSeqs) this run made readable,
 * and which it left: their messages are in no one's reach until the import that wrote them runs
 * again. An import running elsewhere at the same moment is listed too, as unfinished.
 */
function tellUnsettled(room: string, before: readonly UnsettledSeqs[], after: readonly UnsettledSeqs[]): void {
  const left = new Set(after.map((r) => `${r.fromSeq}-${r.toSeq}`));
  const settled = before.filter((r) => !left.has(`${r.fromSeq}-${r.toSeq}`));
  if (settled.length) console.error(`salon import: made readable the messages an unfinished import had left in ${room}: seqs ${ranges(settled)}`);
  if (after.length)
    console.error(
      `salon import: ${room} holds messages of an unfinished import that nobody can read: seqs ${ranges(after)}; run that import again (the same file, room and thread) to make them readable`,
    );
}

const importCommand: Command = {
  summary: 'bring an exported discussion ([{author: {name}, text, ts}]) into a room and build its memory',
  usage: USAGE,
  flags: ['room', 'thread'],
  async run(args) {
    const { positionals, options } = parseArgs(args);
    const room = options.get('room');
    const threadOption = options.get('thread');
    const unknown = [...options.keys()].filter((k) => k !== 'room' && k !== 'thread');
    if (positionals.length !== 1 || typeof room !== 'string' || unknown.length || (threadOption !== undefined && typeof threadOption !== 'string')) {
      console.error(`usage: salon ${USAGE}`);
      return EXIT_USAGE;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(await readImportFile(positionals[0]));
    } catch (err) {
      console.error(`salon import: cannot read ${printable(positionals[0])}: ${printable((err as Error).message)}`);
      return 1;
    }
    const config = loadConfig();
    const store = openStore(config, { mustExist: true });
    const ai = createAi(config, store);
    const index = createMemoryIndex(config, ai.embedder, { hnswMode: 'off' });
    // Servers sharing the store follow the memory this command changes through the change log: the
    // ids of every chunk the run stored or pruned, logged once it ends (MAX_CHANGE_IDS an entry).
    // Logged per chunk, a run of 5,000 messages wrote hundreds of entries that every server read and
    // applied one by one.
    const changes = new OfflineChanges(store);
    const changed = new Set<number>();
    const logChanged = () => {
      changes.record('memory', [...changed]);
      changed.clear();
    };
    // Stopped (Ctrl-C, a service manager), the run logs what it stored for the servers before it
    // exits: what it stored stays (all its messages, or none), and the same import again goes on.
    const stop = (signal: 'SIGINT' | 'SIGTERM') => {
      console.error(`salon import: stopped by ${signal}; run the same import again to finish it`);
      // Chunks the memory stores while the log is written are logged too.
      const drain = async () => {
        do {
          logChanged();
          await changes.flush();
        } while (changed.size);
      };
      void drain()
        .catch(() => {})
        .finally(() => process.exit(SIGNAL_EXIT[signal]));
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    let bar: ProgressBar | null = null;
    let remembered = 0;
    const memory = new ImportMemory({
      store,
      // A chunk that failed to store was only logged, to no one: the import ended 0 with its memory unbuilt.
      log: stderrLogger(),
      embedder: ai.embedder,
      index,
      maxChunksPerThread: config.MEMORY_MAX_CHUNKS_PER_THREAD,
      retentionDays: config.MEMORY_RETENTION_DAYS,
      onChanged: (ids) => {
        ids.forEach((id) => changed.add(id));
        if (changed.size >= MEMORY_NOTICE_IDS) logChanged();
      },
      onStored: (chunk) =>
        chunk.messageIds.forEach(() => {
          remembered++;
          bar?.tick();
        }),
    });
    try {
      const messages = await checkImportInTurns(Array.isArray(raw) ? raw : (raw as { messages?: unknown })?.messages, DEFAULT_MAX_TEXT_CHARS);
      if (!(await storeResolver(store)(room))) throw new errors.ERR_ROOM_NOT_FOUND(room);
      const thread = await importTarget(store, room, typeof threadOption === 'string' ? threadOption : undefined);
      const unsettledBefore = await store.unsettledSeqs(room);
      bar = new ProgressBar('import', messages.length);
      // No memory.load(): repeats are found in the store, and the index only has to hold what this
      // import adds; loading it read (and re-embedded, after an embedder change) every thread's memory.
      // Running servers' live rooms deliver the messages once they read the entry (room-changes.ts).
      const result = await importMessages(store, memory, room, thread.id, messages, (after, runs) => changes.storedUnpublished(room, after, runs));
      await memory.idle();
      const unbuilt = memory.handed - remembered;
      for (let i = 0; i < unbuilt; i++) bar.tick(false);
      bar.finish(`(${await store.countMemoryChunks(thread.id)} memory chunks in the thread)`);
      process.stdout.write(`${JSON.stringify(result)}\n`);
      tellUnsettled(room, unsettledBefore, await store.unsettledSeqs(room));
      if (unbuilt <= 0) return 0;
      // The messages are stored (all of them); a run of the same import builds the memory they lack.
      console.error(
        `salon import: the messages are stored, but the memory of ${unbuilt} of them was not (see the warnings above); run the same import again to build it`,
      );
      return 1;
    } catch (err) {
      if (!(err instanceof SalonError)) throw err;
      console.error(`salon import: ${err.code}: ${printable(err.message)}`);
      return 1;
    } finally {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      await memory.close();
      await index.close();
      // What a run that failed midway stored is logged too.
      logChanged();
      await changes.flush();
      await store.close();
    }
  },
};
export default importCommand;
