/**
 * Ingest jobs: a request (`{url}` | `{feed}` | `{youtubeFeed}` | `{hn}` | `{file}`) becomes an
 * IngestJob saved in the store; `submit` runs it in the background (at most `maxRunning` at once,
 * the rest queued) and `run` in the foreground for the CLI. Progress and per-item failures are
 * saved as the job goes; one failing item never stops the others.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger.js';
import { errors } from '../../errors.js';
import type { IngestJob, JobRunner, Store } from '../../store/types.js';
import type { IngestDeps } from '../sources/article.js';
import type { CommentSource } from '../sources/comment-source.js';
import { HN_DEFAULT_TOP_LIMIT, HnClient, HnComments } from '../sources/hn.js';
import { RedditComments } from '../sources/reddit.js';
import { normalizeUrl } from '../ids.js';
import { withoutUserinfo } from '../../url-userinfo.js';
import { JobTracker, toFailure } from './ingest-job.js';
import { ingestFeedUrl, ingestFiles, ingestHn, ingestUrl, type IngestContext } from './ingest-sources.js';
import type { ItemPipeline } from './pipeline.js';
import { required, wholeNumber } from '../../options.js';

/** What to ingest: exactly one source, with an optional cap on the number of items. */
export type IngestRequest =
  | { url: string; limit?: number }
  | { feed: string; limit?: number }
  | { youtubeFeed: string; limit?: number }
  | { hn: number | 'top'; limit?: number }
  | { file: string[]; limit?: number };

export const INGEST_SOURCES = ['url', 'feed', 'youtubeFeed', 'hn', 'file'] as const;
/** Items taken from one feed when the request sets no limit. */
export const DEFAULT_FEED_LIMIT = 50;
export const MAX_INGEST_LIMIT = 500;
const DEFAULT_MAX_RUNNING = 2;
/**
 * Jobs running and queued (sources' polls among them) past which an admin's submission (`submit`)
 * is refused with ERR_INGEST_BUSY. Each waiting job holds its request and a promise: without a bound, a
 * script resubmitting in a loop grew the queue without end. Sources' polls (`submitTask`) are
 * bounded by the sources themselves and never refused.
 */
export const DEFAULT_MAX_JOBS = 100;
/** INGEST_JOB_BUDGET_MS's default: an HN top-stories job fetches dozens of pages and comments. */
export const DEFAULT_JOB_BUDGET_MS = 900_000;
/** How often a server touches its unfinished jobs in the store, as a sign that it still runs them. */
export const JOB_HEARTBEAT_MS = 30_000;
/**
 * How long a shared store's unfinished job may go without a save or a touch before another node
 * counts its node as gone and fails it: four heartbeats missed.
 */
export const JOB_SILENCE_MS = 4 * JOB_HEARTBEAT_MS;
/**
 * How long a job that ended stays readable (`GET /api/v1/ingest/:jobId`) before a server deletes
 * it: every source's poll is a job, so a source polled each minute left 1,440 rows a day, for good.
 */
export const JOB_RETENTION_MS = 7 * 24 * 60 * 60_000;
/**
 * How many times a server starts an admin's job (a `POST /api/v1/ingest` request) in all: one whose
 * node stopped under it is run again by the node that finds it orphaned, but a job that crashes its
 * node would crash every node that took it on, so past this many starts it is failed instead.
 */
export const MAX_JOB_ATTEMPTS = 3;
/** How often a server deletes the jobs past JOB_RETENTION_MS (at start, then at most this often). */
const JOB_PRUNE_EVERY_MS = 60 * 60_000;
const DEFAULT_REDDIT = { base: 'https://www.reddit.com', commentLimit: 10, intervalMs: 1000 };

export interface IngestServiceOptions {
  store: Store;
  pipeline: ItemPipeline;
  deps: IngestDeps;
  hn: { base: string; commentLimit: number; intervalMs: number };
  /** Reddit threads (REDDIT_API_BASE, REDDIT_COMMENT_LIMIT, REDDIT_REQUEST_INTERVAL_MS); default: www.reddit.com, 10 comments, 1 s apart. */
  reddit?: { base: string; commentLimit: number; intervalMs: number };
  /** BODY_MAX_CHARS. */
  bodyMaxChars: number;
  log?: Logger;
  /** Background jobs running at once; default 2. */
  maxRunning?: number;
  /** Background jobs running and queued at once that `submit` takes; default DEFAULT_MAX_JOBS. */
  maxJobs?: number;
  /** Told of every job's final status (the metrics hook in here). */
  onJobEnded?(status: string): void;
  /** Total time one job may run (INGEST_JOB_BUDGET_MS); past it the job stops as failed. */
  jobBudgetMs?: number;
  /** This node's id (its bus's), recorded in the jobs it runs; default a fresh UUID. */
  nodeId?: string;
  /**
   * How long another node's unfinished job may go untouched before it counts as orphaned
   * (failInterruptedJobs). 0, the default, counts every other node's as orphaned at start and sweeps
   * no more: right for a store one server uses alone (SQLite). A shared store gives JOB_SILENCE_MS.
   */
  jobSilenceMs?: number;
  /** How often the jobs this node runs are touched, and (with jobSilenceMs) others' swept; default JOB_HEARTBEAT_MS. */
  heartbeatMs?: number;
}

function badRequest(problem: string): never {
  throw new errors.ERR_BAD_REQUEST(problem);
}

/**
 * Checks a request from the API or the CLI: exactly one source, http(s) URLs, an HN id or "top",
 * a limit from 1 to MAX_INGEST_LIMIT; a URL's userinfo is dropped. Throws ERR_BAD_REQUEST naming the problem.
 */
export function validateIngestRequest(raw: unknown): IngestRequest {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) badRequest('expected an object');
  const r = raw as Record<string, unknown>;
  const given = INGEST_SOURCES.filter((k) => r[k] !== undefined);
  if (given.length !== 1) badRequest('give exactly one of url, feed, youtubeFeed, hn');
  const limit = r.limit;
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_INGEST_LIMIT)) {
    badRequest(`limit must be a whole number from 1 to ${MAX_INGEST_LIMIT}`);
  }
  const withLimit = limit === undefined ? {} : { limit: limit as number };
  const key = given[0];
  if (key === 'hn') {
    const hn = typeof r.hn === 'string' && /^\d+$/.test(r.hn) ? Number(r.hn) : r.hn;
    if (hn !== 'top' && (!Number.isInteger(hn) || (hn as number) < 1)) badRequest('hn must be a story id or "top"');
    return { hn: hn as number | 'top', ...withLimit };
  }
  if (key === 'file') {
    const files = typeof r.file === 'string' ? [r.file] : r.file;
    if (!Array.isArray(files) || files.length === 0 || !files.every((f) => typeof f === 'string' && f)) badRequest('file must name files');
    return { file: files as string[], ...withLimit };
  }
  const url = r[key];
  if (typeof url !== 'string') badRequest(`${key} must be a URL`);
  normalizeUrl(url);
  // Kept as parsed, its query percent-encoded: a space or a quote typed in the query ended the URL
  // where the job's public view cuts queries off (routes/public-urls.ts), and showed the rest.
  return { [key]: withoutUserinfo(new URL(url.trim()).href), ...withLimit } as IngestRequest;
}

/** A fresh, unguessable ingest job id. */
export function newJobId(): string {
  return `job_${randomUUID()}`;
}

/** Work run as an ingest job (see IngestService.submitTask). */
export interface IngestTask {
  /** What the job record shows as its request, e.g. `{source: id}`. */
  request: Record<string, unknown>;
  /** How a failure of the whole job is named in its failures. */
  ref: string;
  /** The job's id, when the caller needs it before the job exists (a source's lease names it). */
  jobId?: string;
  work(ctx: IngestContext): Promise<void>;
  /** Called once the job ended, however it ended (also when it was cancelled before it started). */
  onEnd?(job: IngestJob): Promise<void> | void;
}

/** Runs ingest jobs through the item pipeline; one per app (services.ingest) or per CLI run. */
export class IngestService {
  private readonly hn: HnClient;
  /** The sites whose thread URLs are read through their API: HN first, then Reddit. */
  readonly commentSources: readonly CommentSource[];
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  /** Jobs an admin cancelled: they end `cancelled`, not `failed`. */
  private readonly cancelled = new Set<string>();
  private readonly jobBudgetMs: number;
  private readonly maxRunning: number;
  private readonly maxJobs: number;
  /** Jobs waiting for a slot, first come first served: each is handed one (true), or told it was cancelled first (false). */
  private readonly queue: ((slot: boolean) => void)[] = [];
  private active = 0;
  /** Admins' submissions between their check against maxJobs and their job's entry in `running`. */
  private submitting = 0;
  private closed = false;
  private readonly nodeId: string;
  private readonly jobSilenceMs: number;
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | null = null;
  /** The heartbeat's store calls under way, which close() waits for. */
  private beating: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  /** The node this one succeeds on its DATA_DIR, gone: its jobs are orphans however recently touched. */
  private predecessor: string | null = null;

  constructor(private readonly options: IngestServiceOptions) {
    required('IngestService', 'store', options.store);
    required('IngestService', 'pipeline', options.pipeline);
    required('IngestService', 'deps', options.deps);
    this.maxRunning = wholeNumber('IngestService', 'maxRunning', options.maxRunning ?? DEFAULT_MAX_RUNNING, 1);
    this.maxJobs = wholeNumber('IngestService', 'maxJobs', options.maxJobs ?? DEFAULT_MAX_JOBS, 1);
    this.jobBudgetMs = options.jobBudgetMs ?? DEFAULT_JOB_BUDGET_MS;
    wholeNumber('IngestService', 'jobBudgetMs', this.jobBudgetMs, 1);
    this.nodeId = options.nodeId ?? randomUUID();
    required('IngestService', 'nodeId', this.nodeId);
    this.jobSilenceMs = wholeNumber('IngestService', 'jobSilenceMs', options.jobSilenceMs ?? 0, 0);
    this.heartbeatMs = wholeNumber('IngestService', 'heartbeatMs', options.heartbeatMs ?? JOB_HEARTBEAT_MS, 1);
    const fetchJson = (url: string, signal?: AbortSignal) => options.deps.fetchJson(url, signal);
    this.hn = new HnClient({ ...options.hn, fetchJson });
    this.commentSources = [new HnComments(this.hn), new RedditComments({ ...(options.reddit ?? DEFAULT_REDDIT), fetchJson })];
  }

  /** The node id recorded in this service's jobs. */
  get node(): string {
    return this.nodeId;
  }

  /** The paced HN API client every job shares (HN_REQUEST_INTERVAL_MS holds across jobs). */
  get hnClient(): HnClient {
    return this.hn;
  }

  private newJob(request: Record<string, unknown>, runner: JobRunner, id = newJobId()): IngestJob {
    const now = new Date().toISOString();
    return {
      id,
      runner,
      ...(runner === 'server' ? { node: this.nodeId } : {}),
      request: { ...request },
      status: 'queued',
      total: 0,
      done: 0,
      failed: 0,
      itemIds: [],
      failures: [],
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * Takes over the background jobs a server process that is gone left queued or running: an
   * admin's job is queued again here, its progress reset, `attempts` kept and a note of the
   * interruption in its failures, until MAX_JOB_ATTEMPTS starts; the rest (sources' polls, whose
   * sources are polled again anyway, and jobs out of attempts) are marked failed
   * (ERR_JOB_CANCELLED). Returns the ids of those marked failed. Call once at start, before `submit`; from
   * then on this node touches its own unfinished jobs every `heartbeatMs`, and with `jobSilenceMs`
   * (a shared store) fails those of other nodes that stopped touching theirs, at start and at each
   * beat. Jobs of a `salon ingest` still running beside the server are left alone. Jobs that
   * ended over JOB_RETENTION_MS ago are deleted, at start and then hourly. The jobs of
   * `predecessor`, a node known to be gone (src/content/ingest/predecessor.ts), are failed at once.
   */
  async failInterruptedJobs(predecessor: string | null = null): Promise<string[]> {
    this.predecessor = predecessor;
    const ids = await this.sweep();
    await this.pruneEndedJobs();
    this.heartbeat ??= setInterval(() => {
      this.beating = this.beating.then(() => this.beat());
    }, this.heartbeatMs).unref();
    return ids;
  }

  /** Runs again or fails the unfinished server jobs of nodes that are gone (failInterruptedJobs). */
  private async sweep(): Promise<string[]> {
    const now = new Date().toISOString();
    const except = { node: this.nodeId, silentForMs: this.jobSilenceMs, gone: this.predecessor ?? undefined };
    const settled = await this.options.store.settleUnfinishedJobs('server', except, (job) => this.takeOver(job, now));
    const ids = settled.filter((job) => job.status === 'failed').map((job) => job.id);
    if (ids.length) this.options.log?.warn({ jobIds: ids }, `marked ${ids.length} interrupted ingest job(s) as failed`);
    const again = settled.filter((job) => job.status === 'queued');
    if (again.length) this.options.log?.warn({ jobIds: again.map((job) => job.id) }, `queued ${again.length} interrupted ingest job(s) again`);
    for (const job of again) {
      const request = rerunnable(job.request) as IngestRequest;
      this.start(structuredClone(job), { request, ref: describeRequest(request), work: (ctx) => this.work(ctx, request) });
    }
    return ids;
  }

  /** What an orphaned job becomes: queued again on this node while it has attempts left and can be, else failed. */
  private takeOver(job: IngestJob, now: string): IngestJob {
    const stopped = 'the server stopped before the job finished';
    // A record from before attempts were counted: a running one was started once.
    const attempts = job.attempts ?? (job.status === 'running' ? 1 : 0);
    const request = this.closed ? null : rerunnable(job.request);
    if (!request || attempts >= MAX_JOB_ATTEMPTS) {
      const why = request ? `${stopped}, ${attempts} times; it is not run again` : stopped;
      return { ...job, status: 'failed', failures: [...job.failures, toFailure('restart', new errors.ERR_JOB_CANCELLED(why))], updatedAt: now };
    }
    const note = toFailure('restart', new errors.ERR_JOB_CANCELLED(`${stopped}; queued again (start ${attempts + 1} of ${MAX_JOB_ATTEMPTS})`));
    return {
      ...job,
      node: this.nodeId,
      status: 'queued',
      attempts,
      // The run starts over: what the interrupted one counted is counted again (items unchanged cost no rewrite).
      total: 0,
      done: 0,
      failed: 0,
      itemIds: [],
      failures: [...job.failures.filter((f) => f.ref === 'restart'), note],
      updatedAt: now,
    };
  }

  /** Deletes the jobs that ended more than JOB_RETENTION_MS ago. */
  private async pruneEndedJobs(): Promise<void> {
    this.lastPrune = Date.now();
    const pruned = await this.options.store.pruneJobs(new Date(this.lastPrune - JOB_RETENTION_MS).toISOString());
    if (pruned) this.options.log?.info({ pruned }, `deleted ${pruned} ingest job(s) that ended over ${JOB_RETENTION_MS / 86_400_000} days ago`);
  }

  /** One heartbeat: this node's jobs touched, then (on a shared store) gone nodes' swept, and now and then old jobs pruned. */
  private async beat(): Promise<void> {
    try {
      if (this.running.size) await this.options.store.touchJobs(this.nodeId);
      if (this.jobSilenceMs > 0 && !this.closed) await this.sweep();
      if (Date.now() - this.lastPrune >= JOB_PRUNE_EVERY_MS && !this.closed) await this.pruneEndedJobs();
    } catch (err) {
      this.options.log?.warn({ err }, 'ingest jobs heartbeat failed; trying again at the next');
    }
  }

  /** The item pipeline every job writes through (also used by POST /content and seeding). */
  get pipeline(): ItemPipeline {
    return this.options.pipeline;
  }

  /**
   * Saves a queued job and starts it in the background; resolves with the queued job. Local
   * files are refused here (the HTTP API must not read the server's disk); `run` takes them.
   */
  async submit(raw: unknown): Promise<IngestJob> {
    if (this.closed) throw new errors.ERR_NOT_READY('the server is shutting down');
    const request = validateIngestRequest(raw);
    if ('file' in request) throw new errors.ERR_BAD_REQUEST('file ingestion is only available from the CLI');
    // Counted before the job is saved: submissions arriving together must not all pass while the store writes.
    if (this.running.size + this.submitting >= this.maxJobs) throw new errors.ERR_INGEST_BUSY(this.maxJobs);
    this.submitting++;
    try {
      return await this.submitTask({ request, ref: describeRequest(request), work: (ctx) => this.work(ctx, request) });
    } finally {
      this.submitting--;
    }
  }

  /**
   * Saves a queued job for `task` and starts it in the background, like `submit` (the same slots,
   * budget, cancellation and records); resolves with the queued job. Other parts' own work runs
   * through it: a source's poll (src/content/refresh) is an ingest job like any other.
   */
  async submitTask(task: IngestTask): Promise<IngestJob> {
    if (this.closed) throw new errors.ERR_NOT_READY('the server is shutting down');
    const job = this.newJob(task.request, 'server', task.jobId);
    await this.options.store.saveJob(job);
    this.start(job, task);
    return structuredClone(job);
  }

  /** Runs a saved, queued job in the background when a slot is free. */
  private start(job: IngestJob, task: IngestTask): void {
    const controller = new AbortController();
    const done = this.whenSlotFree(controller.signal)
      .then((slot) => this.execute(job, task, controller.signal).finally(() => slot && this.releaseSlot()))
      .catch((err) => this.options.log?.error({ err, jobId: job.id }, 'ingest job crashed'))
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, { controller, done });
  }

  /** Runs a request in the foreground (the CLI); `onProgress` sees every change. */
  async run(raw: unknown, onProgress?: (job: IngestJob) => void, signal = new AbortController().signal): Promise<IngestJob> {
    const request = validateIngestRequest(raw);
    return this.runTask({ request, ref: describeRequest(request), work: (ctx) => this.work(ctx, request) }, onProgress, signal);
  }

  /** Runs a task in the foreground (the CLI), as `run` does a request. */
  async runTask(task: IngestTask, onProgress?: (job: IngestJob) => void, signal = new AbortController().signal): Promise<IngestJob> {
    const job = this.newJob(task.request, 'cli', task.jobId);
    await this.options.store.saveJob(job);
    return this.execute(job, task, signal, onProgress);
  }

  /** The job with this id; ERR_JOB_NOT_FOUND when there is none. */
  async getJob(id: string): Promise<IngestJob> {
    const job = await this.options.store.getJob(id);
    if (!job) throw new errors.ERR_JOB_NOT_FOUND(id);
    return job;
  }

  /**
   * Cancels a queued or running background job: it stops at its next step, keeps the items it
   * finished (each item is written whole or not at all) and ends `cancelled`. A job that already
   * ended, or a CLI job (another process runs it), is returned as it is. ERR_JOB_NOT_FOUND when
   * there is no such job.
   */
  async cancel(id: string): Promise<IngestJob> {
    const job = await this.getJob(id);
    const running = this.running.get(id);
    if (!running) return job;
    this.cancelled.add(id);
    running.controller.abort(new errors.ERR_JOB_CANCELLED('cancelled by an admin'));
    await running.done;
    this.cancelled.delete(id);
    return this.getJob(id);
  }

  /** Background jobs running or queued now. */
  get activeJobs(): number {
    return this.running.size;
  }

  /** Jobs this service could start now without one waiting for a slot (maxRunning less those running or queued). */
  get freeSlots(): number {
    return Math.max(0, this.maxRunning - this.running.size);
  }

  /** Resolves when no background job is running or queued. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** Stops background jobs (they end as failed with ERR_JOB_CANCELLED) and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.beating;
    for (const r of this.running.values()) r.controller.abort(new errors.ERR_JOB_CANCELLED('the server is shutting down'));
    await this.idle();
    await this.options.deps.close?.();
  }

  /**
   * Resolves true with a slot for the job, or false when it was cancelled while it waited (it then
   * ends without one: a cancelled job that took a slot to fail in had the next job woken into a
   * second one).
   */
  private whenSlotFree(signal: AbortSignal): Promise<boolean> {
    if (this.active < this.maxRunning) {
      this.active++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const take = (slot: boolean) => {
        signal.removeEventListener('abort', cancelled);
        resolve(slot);
      };
      const cancelled = () => {
        const i = this.queue.indexOf(take);
        if (i >= 0) this.queue.splice(i, 1);
        resolve(false);
      };
      this.queue.push(take);
      signal.addEventListener('abort', cancelled, { once: true });
    });
  }

  /** Hands the slot straight to the next job in line: counted free in between, a new job could take it too. */
  private releaseSlot(): void {
    const next = this.queue.shift();
    if (next) next(true);
    else this.active--;
  }

  private async execute(job: IngestJob, task: IngestTask, signal: AbortSignal, onProgress?: (job: IngestJob) => void): Promise<IngestJob> {
    // The budget runs from the job's start, not from when it was queued.
    const budget = new AbortController();
    const tracker = new JobTracker(job, this.options.store, this.options.log, onProgress, () => {
      this.options.log?.warn({ jobId: job.id }, 'another node took this ingest job over after this node fell silent; stopping it here');
      budget.abort(new errors.ERR_JOB_CANCELLED('another node took the job over'));
    });
    const timer = setTimeout(() => budget.abort(new errors.ERR_JOB_BUDGET(this.jobBudgetMs)), this.jobBudgetMs);
    const jobSignal = AbortSignal.any([signal, budget.signal]);
    const ctx: IngestContext = {
      deps: this.options.deps,
      pipeline: this.options.pipeline,
      hn: this.hn,
      comments: this.commentSources,
      tracker,
      signal: jobSignal,
      bodyMaxChars: this.options.bodyMaxChars,
      log: this.options.log,
    };
    try {
      if (jobSignal.aborted) throw jobSignal.reason;
      job.attempts = (job.attempts ?? 0) + 1;
      tracker.setStatus('running');
      await task.work(ctx);
      if (jobSignal.aborted) throw jobSignal.reason;
      tracker.setStatus(job.failed > 0 && job.done === 0 ? 'failed' : 'done');
    } catch (err) {
      tracker.note(task.ref, jobSignal.aborted ? jobSignal.reason : err);
      tracker.setStatus(this.cancelled.has(job.id) ? 'cancelled' : 'failed');
    } finally {
      clearTimeout(timer);
      await tracker.flush();
      this.options.onJobEnded?.(job.status);
      await task.onEnd?.(structuredClone(job));
    }
    return structuredClone(job);
  }

  private work(ctx: IngestContext, request: IngestRequest): Promise<void> {
    if ('url' in request) return ingestUrl(ctx, request.url, request.limit ?? DEFAULT_FEED_LIMIT);
    if ('feed' in request) return ingestFeedUrl(ctx, request.feed, request.limit ?? DEFAULT_FEED_LIMIT);
    if ('youtubeFeed' in request) return ingestFeedUrl(ctx, request.youtubeFeed, request.limit ?? DEFAULT_FEED_LIMIT, true);
    if ('hn' in request) return ingestHn(ctx, request.hn, request.limit ?? HN_DEFAULT_TOP_LIMIT);
    return ingestFiles(ctx, request.file, request.limit ?? MAX_INGEST_LIMIT);
  }
}

/** An admin's request a job records, when it can be run again by a server (not a source's poll, not files). */
function rerunnable(request: Record<string, unknown>): IngestRequest | null {
  try {
    const valid = validateIngestRequest(request);
    return 'file' in valid ? null : valid;
  } catch {
    return null;
  }
}

/** The request's source as a job failure's `ref`. */
export function describeRequest(request: IngestRequest): string {
  if ('url' in request) return request.url;
  if ('feed' in request) return request.feed;
  if ('youtubeFeed' in request) return request.youtubeFeed;
  if ('hn' in request) return `hn:${request.hn}`;
  return request.file.join(', ');
}
