/**
 * `salon ingest URL | --feed URL | --youtube-feed URL | --hn ID|top | --file F... [--limit N]`:
 * runs one ingest job in the foreground against the store in DATA_DIR (not through a running
 * server), with a progress bar on a terminal and a summary line otherwise (stderr). Stored item
 * ids go to stdout, one per line. Exit code 0 only when every item was stored.
 *
 * A running server's vector index picks up CLI-ingested chunks when it next rebuilds from the store.
 */
import { OfflineChanges } from '../../sync/offline-changes.js';
import { loadConfig, type Config } from '../../config.js';
import { defaultIngestDeps } from '../../content/ingest/ingest-deps.js';
import { IngestService, MAX_INGEST_LIMIT, type IngestRequest } from '../../content/ingest/ingest.js';
import { createItemPipeline } from '../../content/ingest/pipeline.js';
import { SalonError, errors } from '../../errors.js';
import { openStore } from '../../parts.js';
import type { IngestJob } from '../../store/types.js';
import { parseArgs, UsageError, wholeNumberOption, type Command } from '../command.js';
import { ProgressBar } from '../progress.js';
import { printable } from '../printable.js';

const USAGE = 'ingest URL|--feed URL|--hn ID|--file F...';
const FULL_USAGE = 'ingest URL | --feed URL | --youtube-feed URL | --hn ID|top | --file F... [--limit N]';
const EXIT_USAGE = 2;
const EXIT_INTERRUPTED = 130;

function requestFrom(args: string[]): IngestRequest {
  const { positionals, options } = parseArgs(args);
  const value = (name: string): string => {
    const v = options.get(name);
    if (typeof v !== 'string') throw new UsageError(`--${name} needs a value`);
    return v;
  };
  const limitN = wholeNumberOption(options, 'limit', 1, MAX_INGEST_LIMIT);
  const limit = limitN === undefined ? {} : { limit: limitN };
  const known = new Set(['feed', 'youtube-feed', 'hn', 'file', 'limit']);
  for (const k of options.keys()) if (!known.has(k)) throw new UsageError(`unknown option --${k}`);
  const sources = ['feed', 'youtube-feed', 'hn', 'file'].filter((k) => options.has(k));
  if (sources.length > 1 || (sources.length === 1 && sources[0] !== 'file' && positionals.length > 0)) {
    throw new UsageError('give one source: a URL, --feed, --youtube-feed, --hn or --file');
  }
  switch (sources[0]) {
    case 'feed':
      return { feed: value('feed'), ...limit };
    case 'youtube-feed':
      return { youtubeFeed: value('youtube-feed'), ...limit };
    case 'hn': {
      const hn = value('hn');
      if (hn !== 'top' && !/^\d+$/.test(hn)) throw new UsageError('--hn takes a story id or "top"');
      return { hn: hn === 'top' ? 'top' : Number(hn), ...limit };
    }
    case 'file':
      return { file: [value('file'), ...positionals], ...limit };
    default:
      if (positionals.length !== 1) throw new UsageError('give one URL (or --feed, --hn, --file)');
      return { url: positionals[0], ...limit };
  }
}

/** Follows a job's counters with a progress bar. */
function tracker(bar: ProgressBar): (job: IngestJob) => void {
  let shown = { total: 0, done: 0, failed: 0 };
  return (job) => {
    if (job.total !== shown.total) bar.setTotal(job.total);
    for (; shown.done < job.done; shown.done++) bar.tick(true);
    for (; shown.failed < job.failed; shown.failed++) bar.tick(false);
    shown.total = job.total;
  };
}

/** The command with its config and streams passed in (tests); `run` reads the environment. */
export async function ingestCommand(
  args: string[],
  config: Config,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  let request: IngestRequest;
  try {
    request = requestFrom(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err.write(`salon ingest: ${printable(e.message)}\nusage: salon ${FULL_USAGE}\n`);
    return EXIT_USAGE;
  }
  const store = openStore(config);
  // Servers sharing the store index the new chunks when they read the change log.
  const changes = new OfflineChanges(store);
  const service = new IngestService({
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
  });
  const controller = new AbortController();
  const interrupt = () => controller.abort(new errors.ERR_JOB_CANCELLED('interrupted'));
  process.once('SIGINT', interrupt);
  try {
    const bar = new ProgressBar('ingest', 0, err);
    const job = await service.run(request, tracker(bar), controller.signal);
    bar.finish(job.status === 'failed' ? '(job failed)' : '');
    for (const id of job.itemIds) out.write(`${id}\n`);
    for (const f of job.failures) err.write(`  ${printable(f.ref)}: ${f.code} ${printable(f.message)}\n`);
    if (controller.signal.aborted) return EXIT_INTERRUPTED;
    return job.status === 'done' && job.failed === 0 ? 0 : 1;
  } catch (e) {
    if (!(e instanceof SalonError)) throw e;
    err.write(`salon ingest: ${e.code}: ${printable(e.message)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', interrupt);
    await service.close();
    await changes.flush();
    await store.close();
  }
}

const ingest: Command = {
  summary: 'ingest into DATA_DIR (also --youtube-feed URL, --hn top, --limit N)',
  usage: USAGE,
  help: `usage: salon ${FULL_USAGE}`,
  flags: ['feed', 'youtube-feed', 'hn', 'file', 'limit'],
  run: (args) => ingestCommand(args, loadConfig()),
};
export default ingest;
