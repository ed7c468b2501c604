/**
 * `salon sources list|add|remove|refresh`: the sources that refresh, on the store in DATA_DIR (not
 * through a running server). `list` prints one line per source (`--json`: one object per line);
 * `add` takes `kind target [--every MINUTES] [--limit N]` like a line of DATA_DIR/sources;
 * `refresh ID` polls it now in the foreground under the same lease a server takes (so it never
 * runs beside a server's poll of it), with a summary line. Exit 0 only on success. The chunks a
 * refresh stores go to the store's change log (OfflineChanges), as `salon ingest`'s do, so running
 * servers index them without a restart.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../config.js';
import { defaultIngestDeps } from '../../content/ingest/ingest-deps.js';
import { IngestService } from '../../content/ingest/ingest.js';
import { createItemPipeline } from '../../content/ingest/pipeline.js';
import { fixedSources } from '../../content/refresh/fixed-sources.js';
import { SourceService, type SourceView } from '../../content/refresh/source-service.js';
import { SalonError, errors } from '../../errors.js';
import { openStore } from '../../parts.js';
import type { Store } from '../../store/types.js';
import { MAX_EVERY_MINUTES, MAX_SOURCE_LIMIT, validateSourceSpec } from '../../content/refresh/source-spec.js';
import { parseArgs, UsageError, wholeNumberOption, type Command } from '../command.js';
import { printable, printableJson } from '../printable.js';
import { OfflineChanges } from '../../sync/offline-changes.js';

const USAGE = 'sources list|add|remove|refresh …';
const EXIT_USAGE = 2;
const EXIT_INTERRUPTED = 130;
const HELP = [
  'usage:',
  '  salon sources list [--json]',
  '  salon sources add feed|youtube URL [--every MINUTES] [--limit N]',
  '  salon sources add hn top|best|new|STORY_URL [--every MINUTES] [--limit N]',
  '  salon sources remove ID',
  '  salon sources refresh ID',
].join('\n');

/** What `add kind target [--every M] [--limit N]` asks for, checked (UsageError, ERR_BAD_REQUEST) without a store. */
function addRequest(positionals: string[], options: Map<string, string | true>): Record<string, unknown> {
  if (positionals.length !== 2) throw new UsageError('add takes a kind and a target');
  const [kind, target] = positionals;
  const isList = kind === 'hn' && !/^https?:/i.test(target);
  const request = {
    kind,
    ...(isList ? { list: target } : { url: target }),
    everyMinutes: wholeNumberOption(options, 'every', 1, MAX_EVERY_MINUTES),
    limit: wholeNumberOption(options, 'limit', 1, MAX_SOURCE_LIMIT),
  };
  validateSourceSpec(request);
  return request;
}

function line(s: SourceView): string {
  const state = s.lastError ? `FAILING ×${s.failures} ${s.lastError.code}` : s.lastPolledAt ? 'ok' : 'new';
  const target = printable(s.url ?? `${s.list} stories`);
  return `${s.id}  ${s.kind.padEnd(7)} ${target}  every ${s.everyMinutes} min  ${s.itemCount} items  ${state}  next ${s.nextDueAt}${s.origin === 'config' ? '  (config)' : ''}`;
}

/** The exit code of a usage error (told with the help) or a SalonError (told with its code); anything else is rethrown. */
function failure(e: unknown, err: NodeJS.WritableStream): number {
  if (e instanceof UsageError) {
    err.write(`salon sources: ${printable(e.message)}\n${HELP}\n`);
    return EXIT_USAGE;
  }
  if (!(e instanceof SalonError)) throw e;
  err.write(`salon sources: ${e.code}: ${printable(e.message)}\n`);
  return 1;
}

/** The command with its config and streams passed in (tests); `run` reads the environment. */
export async function sourcesCommand(
  args: string[],
  config: Config,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [action, ...rest] = args;
  const { positionals, options } = parseArgs(rest, ['json']);
  if (!['list', 'add', 'remove', 'refresh'].includes(action ?? '')) {
    err.write(`${HELP}\n`);
    return EXIT_USAGE;
  }
  // Checked before the store opens: a mistyped `add` created a store in a DATA_DIR that had none.
  let request: Record<string, unknown> | undefined;
  try {
    if (action === 'add') request = addRequest(positionals, options);
    else if (action !== 'list' && positionals.length !== 1) throw new UsageError(`${action} takes a source id`);
  } catch (e) {
    return failure(e, err);
  }
  // Only `add` may start a store: the others read or change sources that must already be there,
  // and a mistyped DATA_DIR would otherwise get a store of its own and an empty list.
  let store: Store;
  try {
    store = openStore(config, { mustExist: action !== 'add' });
  } catch (e) {
    err.write(`salon sources: ${(e as Error).message}\n`);
    return 1;
  }
  // Servers sharing the store index what a refresh stored when they read the change log.
  const changes = new OfflineChanges(store);
  const ingest = new IngestService({
    store,
    pipeline: createItemPipeline({
      store,
      bodyMaxChars: config.BODY_MAX_CHARS,
      chunk: { size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP },
      sink: () => changes.chunkSink,
    }),
    deps: defaultIngestDeps(config),
    hn: { base: config.HN_API_BASE, commentLimit: config.HN_COMMENT_LIMIT, intervalMs: config.HN_REQUEST_INTERVAL_MS },
    reddit: { base: config.REDDIT_API_BASE, commentLimit: config.REDDIT_COMMENT_LIMIT, intervalMs: config.REDDIT_REQUEST_INTERVAL_MS },
    bodyMaxChars: config.BODY_MAX_CHARS,
    jobBudgetMs: config.INGEST_JOB_BUDGET_MS,
  });
  const sources = new SourceService({ store, ingest, owner: `cli-${process.pid}-${randomUUID().slice(0, 8)}`, leaseMs: config.INGEST_JOB_BUDGET_MS + 60_000 });
  try {
    await sources.syncFixed(await fixedSources(config));
    switch (action) {
      case 'list': {
        for (const s of await sources.list()) out.write(`${options.has('json') ? printableJson(s) : line(s)}\n`);
        return 0;
      }
      case 'add': {
        out.write(`${line(await sources.add(request))}\n`);
        return 0;
      }
      case 'remove': {
        await sources.remove(positionals[0]);
        out.write(`removed ${positionals[0]}\n`);
        return 0;
      }
      default: {
        // Ctrl-C cancels the poll, which releases the source's lease: a killed command left it
        // held for the job budget and a minute, and no server polled the source meanwhile.
        const controller = new AbortController();
        const interrupt = () => controller.abort(new errors.ERR_JOB_CANCELLED('interrupted'));
        process.once('SIGINT', interrupt);
        let polled: Awaited<ReturnType<SourceService['refreshHere']>>;
        try {
          polled = await sources.refreshHere(positionals[0], undefined, controller.signal);
        } finally {
          process.off('SIGINT', interrupt);
        }
        const { job, source } = polled;
        err.write(
          `${source.id}: ${job.status}, ${job.done} stored, ${job.failed} failed${source.lastError ? ` (${source.lastError.code} ${printable(source.lastError.message)})` : ''}\n`,
        );
        for (const id of job.itemIds) out.write(`${id}\n`);
        if (controller.signal.aborted) return EXIT_INTERRUPTED;
        return job.status === 'done' && !source.lastError ? 0 : 1;
      }
    }
  } catch (e) {
    return failure(e, err);
  } finally {
    await ingest.close();
    await changes.flush();
    await store.close();
  }
}

const sourcesCmd: Command = {
  summary: 'list, add, remove or poll now the sources that refresh (in DATA_DIR)',
  usage: USAGE,
  help: HELP,
  flags: ['json', 'every', 'limit'],
  run: (args) => sourcesCommand(args, loadConfig()),
};
export default sourcesCmd;
