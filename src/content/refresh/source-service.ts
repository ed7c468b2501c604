/**
 * Sources that refresh: feeds, YouTube channel feeds and Hacker News lists or stories, polled in
 * the background every `everyMinutes` (±10 % jitter, so sources added together drift apart), each
 * poll an ingest job (src/content/refresh/poll.ts). A failing source backs off (its interval
 * doubled per failure in a row, at most a day) and reports its error. At most one poll of a source
 * runs at a time, on one node: a poll starts only after taking the source's lease in the store (a
 * conditional update), and ends by releasing it; a node that dies leaves a lease that expires.
 * A node leases no more due sources than it has free job slots, so due sources spread over the
 * nodes instead of queueing on the first to look.
 * A node renews the leases of its polls at every look for due sources, however long they wait for
 * a job slot or run: a lease taken once at submission ran out while the poll was still queued
 * behind slow ones, and the source was polled again, by this node's next look or another node's.
 * When a source is due is read and set on the store's clock where it has one (Store.clockNow,
 * PostgreSQL's): on each node's own, one whose clock ran ahead polled sources early and set their
 * next times as far ahead, which nodes with right clocks then took for set on a clock turned back.
 */
import type { Logger } from '../../logger.js';
import { errors, SalonError } from '../../errors.js';
import { required, wholeNumber } from '../../options.js';
import type { IngestJob, SourcePollState, SourceRecord, Store } from '../../store/types.js';
import { toFailure } from '../ingest/ingest-job.js';
import { newJobId, type IngestService } from '../ingest/ingest.js';
import { pollSource, type PollOutcome } from './poll.js';
import { sourceIdOf, validateSourceSpec, type SourceSpec } from './source-spec.js';

/** How often due sources are looked for. */
export const DEFAULT_TICK_MS = 30_000;
/** Longest a failing source waits before it is tried again. */
export const MAX_BACKOFF_MS = 86_400_000;
/** How far a poll's next time is moved at random either way, as a fraction of the interval. */
export const JITTER = 0.1;
const MINUTE_MS = 60_000;

export interface SourceServiceOptions {
  store: Store;
  ingest: IngestService;
  /** Who holds the lease while this process polls (the node id). */
  owner: string;
  log?: Logger;
  /** How long a lease holds: a poll's longest run (INGEST_JOB_BUDGET_MS) plus a margin. */
  leaseMs: number;
  tickMs?: number;
  /** This node's clock (tests pass their own); default Date.now. The store's, when it has one, counts for when sources are due. */
  now?: () => number;
  /** A number in [0, 1) for the jitter; default Math.random. */
  random?: () => number;
}

/** A source as the API shows it. */
export interface SourceView extends Omit<SourceRecord, 'leaseOwner' | 'leaseUntil' | 'leaseJob' | 'etag' | 'lastModified'> {
  /** The ingest job of the poll running now, or null. */
  polling: string | null;
}

/** The API's view of a stored source (validators and lease internals left out). */
export function viewOf(s: SourceRecord, nowMs: number): SourceView {
  const { leaseOwner: _o, leaseUntil, leaseJob, leaseHeld, etag: _e, lastModified: _l, ...rest } = s;
  const held = leaseHeld ?? (leaseUntil !== null && Date.parse(leaseUntil) >= nowMs);
  return { ...rest, polling: held ? leaseJob : null };
}

/** Adds, lists, changes, removes and polls sources (see the module comment). */
export class SourceService {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly tickMs: number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;
  /** The polls this node submitted that have not ended: source id → the poll's job id (the lease names it). */
  private readonly mine = new Map<string, string>();

  constructor(private readonly options: SourceServiceOptions) {
    required('SourceService', 'store', options.store);
    required('SourceService', 'ingest', options.ingest);
    required('SourceService', 'owner', options.owner);
    wholeNumber('SourceService', 'leaseMs', options.leaseMs, 1);
    this.tickMs = wholeNumber('SourceService', 'tickMs', options.tickMs ?? DEFAULT_TICK_MS, 1);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  private iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  /** Now on the clock sources' times are on: the store's where it has one (Store.clockNow), else this node's. */
  private async clock(): Promise<number> {
    return (await this.options.store.clockNow?.()) ?? this.now();
  }

  /** Adds a source from the API or the CLI; it is first polled at once. ERR_BAD_REQUEST, ERR_SOURCE_EXISTS. */
  async add(raw: unknown, origin: 'api' | 'config' = 'api'): Promise<SourceView> {
    const spec = validateSourceSpec(raw);
    const now = this.iso(await this.clock());
    const created = await this.options.store.addSource({ id: sourceIdOf(spec), ...spec, origin, createdAt: now, nextDueAt: now });
    this.options.log?.info({ sourceId: created.id, kind: created.kind, url: created.url, list: created.list }, 'source added');
    return viewOf(created, this.now());
  }

  async list(): Promise<SourceView[]> {
    const now = this.now();
    return (await this.options.store.listSources()).map((s) => viewOf(s, now));
  }

  async get(id: string): Promise<SourceView> {
    return viewOf(await this.record(id), this.now());
  }

  private async record(id: string): Promise<SourceRecord> {
    const s = await this.options.store.getSource(id);
    if (!s) throw new errors.ERR_SOURCE_NOT_FOUND(id);
    return s;
  }

  /**
   * Changes a source's interval (its next poll moves to last poll + the new interval) or limit. A
   * source never polled stays due: its next poll moved to now + the interval, a week at most.
   */
  async update(id: string, patch: { everyMinutes?: number; limit?: number }): Promise<SourceView> {
    const s = await this.record(id);
    if (s.origin === 'config') throw new errors.ERR_SOURCE_FIXED(id);
    const spec = validateSourceSpec({
      kind: s.kind,
      url: s.url ?? undefined,
      list: s.list ?? undefined,
      limit: patch.limit ?? s.limit,
      everyMinutes: patch.everyMinutes ?? s.everyMinutes,
    });
    const moved = patch.everyMinutes !== undefined && s.failures === 0 && s.lastPolledAt !== null;
    const nextDueAt = moved ? this.iso(Date.parse(s.lastPolledAt!) + spec.everyMinutes * MINUTE_MS) : undefined;
    const updated = await this.options.store.updateSource(id, { everyMinutes: spec.everyMinutes, limit: spec.limit, nextDueAt });
    if (!updated) throw new errors.ERR_SOURCE_NOT_FOUND(id);
    return viewOf(updated, this.now());
  }

  /** Removes a source and what it remembers of its entries; the items stay. */
  async remove(id: string): Promise<void> {
    const s = await this.record(id);
    if (s.origin === 'config') throw new errors.ERR_SOURCE_FIXED(id);
    await this.options.store.deleteSource(id);
  }

  /**
   * Makes the configured sources (SOURCES and DATA_DIR/sources) the `config` ones in the store:
   * new ones added, changed intervals taken, dropped ones removed. Sources added over the API stay.
   */
  async syncFixed(specs: SourceSpec[]): Promise<void> {
    const wanted = new Map(specs.map((s) => [sourceIdOf(s), s]));
    const stored = await this.options.store.listSources();
    for (const s of stored) {
      if (s.origin !== 'config') continue;
      const spec = wanted.get(s.id);
      if (!spec) await this.options.store.deleteSource(s.id);
      else if (spec.everyMinutes !== s.everyMinutes || spec.limit !== s.limit) await this.options.store.updateSource(s.id, spec);
    }
    const known = new Set(stored.map((s) => s.id));
    for (const [id, spec] of wanted) {
      if (known.has(id)) continue;
      try {
        const now = this.iso(await this.clock());
        await this.options.store.addSource({ id, ...spec, origin: 'config', createdAt: now, nextDueAt: now });
      } catch (err) {
        // Another node starting with the same configuration added it first.
        if (!(err instanceof SalonError && err.code === 'ERR_SOURCE_EXISTS')) throw err;
      }
    }
  }

  /**
   * Polls a source now, whenever it is due: resolves with the poll's job id. A poll of it already
   * running (here or on another node) is not doubled: its job id is returned.
   */
  async refresh(id: string): Promise<{ jobId: string }> {
    const s = await this.record(id);
    const jobId = await this.startPoll(s);
    if (jobId) return { jobId };
    const running = await this.record(id);
    if (running.leaseJob) return { jobId: running.leaseJob };
    throw new errors.ERR_NOT_READY(`source ${id} is being polled; try again shortly`);
  }

  /**
   * Polls a source in the foreground (`salon sources refresh`), under the same lease; `signal`
   * cancels the poll, which then releases the lease with the source's state as it was.
   */
  async refreshHere(id: string, onProgress?: (job: IngestJob) => void, signal?: AbortSignal): Promise<{ job: IngestJob; source: SourceView }> {
    const s = await this.record(id);
    const jobId = newJobId();
    if (!(await this.lease(s, jobId)))
      throw new errors.ERR_NOT_READY(`source ${id} is being polled by ${s.leaseOwner ?? 'another process'}; try again shortly`);
    const job = await this.options.ingest.runTask(this.pollTask(s, jobId), onProgress, signal);
    return { job, source: await this.get(id) };
  }

  /** Starts the background polling: a look for due sources every tickMs (the first one soon, at a random point). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule(this.random() * Math.min(this.tickMs, 5_000));
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .then(() => undefined)
        .catch((err) => this.options.log?.error({ err }, 'looking for due sources failed'))
        .finally(() => {
          this.ticking = null;
          if (!this.stopped) this.schedule(this.tickMs * (1 - JITTER + 2 * JITTER * this.random()));
        });
    }, delay);
    this.timer.unref();
  }

  /** Stops the background polling (polls already running are ingest jobs: IngestService.close stops them). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /**
   * Starts a poll of due sources whose lease is free, the longest due first, as many as this node
   * has free job slots; resolves with the jobs started. The others stay for other nodes, or this
   * one's next look. Taken in the order the store lists them (oldest added first), a source added
   * later waited as long as older ones were due whenever a slot came free: with more due than the
   * slots could poll, for good.
   */
  async tick(): Promise<string[]> {
    const now = await this.clock();
    await this.renewLeases(now);
    const started: string[] = [];
    // A lease held elsewhere is left to the store's conditional update: on PostgreSQL its time is
    // the database's, and a node whose clock ran behind skipped a dead holder's lease that had run out.
    const due = (await this.options.store.listSources()).filter((s) => !this.mine.has(s.id) && isDue(s, now)).sort((a, b) => dueAt(a, now) - dueAt(b, now));
    for (const s of due) {
      if (this.stopped || this.options.ingest.freeSlots === 0) break;
      const jobId = await this.startPoll(s);
      if (jobId) started.push(jobId);
    }
    return started;
  }

  /** Extends the leases of this node's polls by leaseMs from `now`; one it no longer holds is reported (its outcome will not be recorded). */
  private async renewLeases(now: number): Promise<void> {
    for (const [id, jobId] of this.mine) {
      const held = await this.options.store
        .renewSourceLease(id, this.options.owner, jobId, this.iso(now), this.iso(now + this.options.leaseMs))
        .catch((err) => {
          this.options.log?.warn({ err, sourceId: id }, 'renewing a source poll lease failed; trying again at the next look');
          return true;
        });
      if (!held && this.mine.get(id) === jobId) this.options.log?.warn({ sourceId: id, jobId }, 'a source poll lost its lease before it ended');
    }
  }

  private lease(s: SourceRecord, jobId: string): Promise<boolean> {
    const now = this.now();
    return this.options.store.leaseSource(s.id, this.options.owner, jobId, this.iso(now), this.iso(now + this.options.leaseMs));
  }

  /** Takes the lease and submits the poll's job; null when another poll holds the source. */
  private async startPoll(s: SourceRecord): Promise<string | null> {
    const jobId = newJobId();
    if (!(await this.lease(s, jobId))) return null;
    this.mine.set(s.id, jobId);
    try {
      await this.options.ingest.submitTask(this.pollTask(s, jobId));
    } catch (err) {
      this.forget(s.id, jobId);
      await this.options.store.endSourcePoll(s.id, this.options.owner, jobId, pollState(s), s.nextDueAt);
      throw err;
    }
    return jobId;
  }

  private pollTask(s: SourceRecord, jobId: string) {
    let outcome: PollOutcome | null = null;
    let failure: unknown = null;
    return {
      jobId,
      request: { source: s.id },
      ref: s.url ?? `hn:${s.list}`,
      work: async (ctx: Parameters<typeof pollSource>[0]) => {
        try {
          // Entries are marked seen on the store's clock too: another node's poll forgets them by it.
          const skew = (await this.clock()) - this.now();
          outcome = await pollSource(ctx, this.options.store, s, () => this.iso(this.now() + skew));
        } catch (err) {
          failure = err;
          throw err;
        }
      },
      onEnd: (job: IngestJob) => this.endPoll(s, job, outcome, failure).finally(() => this.forget(s.id, jobId)),
    };
  }

  private forget(sourceId: string, jobId: string): void {
    if (this.mine.get(sourceId) === jobId) this.mine.delete(sourceId);
  }

  /** Records a poll's outcome and next time, and releases the lease. */
  private async endPoll(s: SourceRecord, job: IngestJob, outcome: PollOutcome | null, failure: unknown): Promise<void> {
    if (outcome?.gone) {
      this.options.log?.info({ sourceId: s.id, jobId: job.id, ...outcome }, 'source deleted while it was polled; the poll stopped');
      return;
    }
    let now: number;
    try {
      now = await this.clock();
    } catch (err) {
      this.options.log?.error({ err, sourceId: s.id }, 'recording a source poll failed; its lease will expire');
      return;
    }
    const every = s.everyMinutes * MINUTE_MS;
    const jitter = 1 - JITTER + 2 * JITTER * this.random();
    let state: SourcePollState;
    let nextDue: string;
    if (outcome) {
      state = { etag: outcome.etag, lastModified: outcome.lastModified, lastPolledAt: this.iso(now), lastError: null, failures: 0 };
      nextDue = this.iso(now + every * jitter);
      this.options.log?.info(
        { sourceId: s.id, jobId: job.id, ...outcome },
        outcome.notModified ? 'source not modified' : `source polled: ${outcome.added} new, ${outcome.changed} changed`,
      );
    } else if (wasCancelled(job, failure)) {
      // Shut down or cancelled: not the source's fault; it stays due as it was.
      state = pollState(s);
      nextDue = s.nextDueAt;
    } else {
      // As a job records a failure (toFailure): anyone may read a source's last error, and an error
      // of no code of ours (the store's connection refused, naming its address) is an internal one.
      const { code, message } = failure !== null ? toFailure(s.id, failure) : (job.failures.at(-1) ?? toFailure(s.id, new errors.ERR_INTERNAL()));
      const failures = s.failures + 1;
      state = { ...pollState(s), lastPolledAt: this.iso(now), lastError: { code, message }, failures };
      nextDue = this.iso(now + backoff(every, failures, jitter));
      this.options.log?.warn({ sourceId: s.id, jobId: job.id, failures, code }, `source poll failed; next try ${nextDue}`);
    }
    const released = await this.options.store.endSourcePoll(s.id, this.options.owner, job.id, state, nextDue).catch((err) => {
      this.options.log?.error({ err, sourceId: s.id }, 'recording a source poll failed; its lease will expire');
      return true;
    });
    if (released) return;
    if (await this.options.store.getSource(s.id).catch(() => s)) {
      this.options.log?.warn({ sourceId: s.id }, 'a source poll outlived its lease; its outcome was not recorded');
    } else this.options.log?.info({ sourceId: s.id, jobId: job.id }, 'source deleted while it was polled');
  }
}

/**
 * The wait after `failures` failed polls in a row: the interval doubled per failure, moved by
 * `jitter` (a factor around 1), and never past MAX_BACKOFF_MS: at the cap the jitter only
 * shortens the wait, so "at most a day" holds and sources failing together still drift apart.
 */
export function backoff(every: number, failures: number, jitter: number): number {
  const doubled = every * 2 ** failures;
  return doubled >= MAX_BACKOFF_MS ? MAX_BACKOFF_MS * (1 - Math.abs(jitter - 1)) : Math.min(doubled * jitter, MAX_BACKOFF_MS);
}

/** The longest wait a poll's end can give `s` (its interval, or its backoff after failures in a row), jitter included. */
function longestWait(s: SourceRecord): number {
  const every = s.everyMinutes * MINUTE_MS;
  return s.failures > 0 ? Math.min(every * 2 ** s.failures * (1 + JITTER), MAX_BACKOFF_MS) : every * (1 + JITTER);
}

/**
 * Due at its next time, or at once when that time is further ahead than any wait it can have been
 * given: it was set on a clock since turned back (a machine that started with its clock ahead, set
 * right later), and the source would have gone unpolled for as long as the clock had been ahead.
 */
function isDue(s: SourceRecord, now: number): boolean {
  const due = Date.parse(s.nextDueAt);
  return due <= now || due - now > longestWait(s);
}

/** When a due source became due: its next time, or now for one set on a clock since turned back (isDue). */
function dueAt(s: SourceRecord, now: number): number {
  return Math.min(Date.parse(s.nextDueAt), now);
}

/**
 * Whether a poll that recorded no outcome was cancelled (shut down, or by an admin): by its own
 * error, or, when it never ran (cancelled while it waited for a job slot), by the reason its job
 * noted. A queued poll cancelled by a shutdown was counted as the source failing, and backed off.
 */
function wasCancelled(job: IngestJob, failure: unknown): boolean {
  if (failure !== null) return failure instanceof SalonError && failure.code === 'ERR_JOB_CANCELLED';
  return job.failures.at(-1)?.code === 'ERR_JOB_CANCELLED';
}

function pollState(s: SourceRecord): SourcePollState {
  return { etag: s.etag, lastModified: s.lastModified, lastPolledAt: s.lastPolledAt, lastError: s.lastError, failures: s.failures };
}
