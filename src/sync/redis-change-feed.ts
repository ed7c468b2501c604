/**
 * The ChangeFeed of many nodes: one Redis channel (`<prefix>index`) on the room bus's own
 * connections, so the feed is up exactly when the bus is. Like the bus it drops what is published
 * while Redis is away; each time the channel is heard again it says so, and the nodes catch up
 * from the store's change log (index-sync.ts). Until then `/readyz` fails its `index-feed` check.
 */
import type { ProviderHealth } from '../ai/types.js';
import { silentLogger, type Logger } from '../logger.js';
import { required } from '../options.js';
import { RepeatedFailureLog } from '../repeated-failure-log.js';
import { refusedByAcl, type RedisLink } from '../rooms/redis-link.js';
import type { ChangeFeed } from './change-feed.js';

/** Wait before subscribing again after a SUBSCRIBE failed on a link that stayed up; it doubles with each failure. */
export const RESUBSCRIBE_MS = 1_000;
/** Longest wait between two SUBSCRIBEs that fail: a refusal for good (an ACL forbidding the channel) is not sent every second. */
export const RESUBSCRIBE_MAX_MS = 60_000;

export interface RedisChangeFeedOptions {
  /** The room bus's connections (RedisRoomBus.link). */
  link: RedisLink;
  /** REDIS_KEY_PREFIX. */
  prefix: string;
  log?: Logger;
}

export class RedisChangeFeed implements ChangeFeed {
  readonly shared = true;
  private readonly link: RedisLink;
  private readonly channel: string;
  private readonly log: Logger;
  private readonly handlers: ((notice: string) => void)[] = [];
  private readonly changeHandlers: ((connected: boolean) => void)[] = [];
  /** Failed SUBSCRIBEs on a link that stayed up: the first is logged, then a summary a minute. */
  private readonly failures: RepeatedFailureLog;
  private retryMs = RESUBSCRIBE_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  /** When the retry waiting is due, and why the last SUBSCRIBE failed, for `/readyz`. */
  private retry: { at: number; reason: string; refused: boolean } | null = null;
  /** The channel is subscribed on the link as it is now: notices of other nodes arrive. */
  private heard = false;
  /** A SUBSCRIBE of the channel went through: `close` unsubscribes it (the link is the bus's and may outlive the feed). */
  private subscribed = false;
  private closed = false;
  private readonly hear = (channel: string, notice: string): void => {
    if (channel !== this.channel) return;
    for (const handler of this.handlers) {
      // The link's client throws a listener's error out of its socket's handler, which ends the process.
      try {
        handler(notice);
      } catch (err) {
        this.log.warn({ err }, 'an index change notice was not handled');
      }
    }
  };
  private readonly stopFollowingLink: () => void;

  constructor(options: RedisChangeFeedOptions) {
    this.link = required('RedisChangeFeed', 'link', options.link);
    this.channel = `${required('RedisChangeFeed', 'prefix', options.prefix)}index`;
    this.log = options.log ?? silentLogger;
    this.failures = new RepeatedFailureLog({ log: this.log, what: 'subscribing the index change feed' });
    this.link.sub.on('message', this.hear);
    this.stopFollowingLink = this.link.onChange((up) => (up ? void this.listen() : this.cutOff()));
    if (this.link.isUp) void this.listen();
  }

  async publish(notice: string): Promise<void> {
    if (!this.closed && this.link.isUp) await this.link.cmd.publish(this.channel, notice);
  }

  subscribe(handler: (notice: string) => void): void {
    this.handlers.push(handler);
  }

  onConnectionChange(handler: (connected: boolean) => void): void {
    this.changeHandlers.push(handler);
  }

  /**
   * Whether the feed hears the other nodes' notices (`/readyz`'s `index-feed`): not while the link
   * is down, nor until the channel is subscribed on it (a SUBSCRIBE on its way, or failed and retried).
   */
  async health(): Promise<ProviderHealth> {
    const problem = this.closed ? 'closed' : this.link.problem();
    const missing = "other nodes' index changes reach this node's indexes only from the store's change log meanwhile";
    if (problem) return { ok: false, provider: 'redis', detail: `${problem}; ${missing}` };
    if (this.heard) return { ok: true, provider: 'redis', detail: `channel ${this.channel} subscribed` };
    const why = this.retry
      ? `its SUBSCRIBE failed (${this.retry.reason}; tried again in ${Math.max(0, Math.round((this.retry.at - Date.now()) / 1000))} s)`
      : 'its SUBSCRIBE is on its way';
    // A refusal (NOPERM) leaves the node ready: the ACL refuses the channel on every node alike, and
    // the change log's periodic read brings the other nodes' changes meanwhile.
    return { ok: Boolean(this.retry?.refused), provider: 'redis', detail: `channel ${this.channel} not subscribed: ${why}; ${missing}` };
  }

  /**
   * Stops the feed for good: the retry waiting is cancelled and so is the failures' summary, the
   * link's changes no longer subscribe, the channel is unsubscribed (a SUBSCRIBE still on its way
   * is undone when it answers) and no handler is told anything more. Publishes are dropped from
   * here on: the store's change log has what they said. The link is the bus's, which closes it.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.heard = false;
    this.failures.close();
    this.stopFollowingLink();
    this.link.sub.off('message', this.hear);
    this.unsubscribe();
  }

  /**
   * Subscribes (the link's connections do not resubscribe by themselves), then says the feed is
   * heard. A failure on a link going down is retried by its return; one on a link that stays up (a
   * timeout, a refusal) is retried here, or no notice would be heard until the next outage: a
   * second later, then twice as long after each failure, up to RESUBSCRIBE_MAX_MS.
   */
  private async listen(): Promise<void> {
    if (this.closed) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    try {
      await this.link.sub.subscribe(this.channel);
    } catch (err) {
      if (this.closed) return;
      if (!this.link.isUp) return void this.log.debug({ err }, 'index change feed not subscribed');
      const wait = this.retryMs;
      this.retryMs = Math.min(wait * 2, RESUBSCRIBE_MAX_MS);
      this.retry = { at: Date.now() + wait, reason: err instanceof Error ? err.message : String(err), refused: refusedByAcl(err) };
      this.failures.failed(err, {}, `index change feed not subscribed; trying again in ${wait / 1000} s, then less often while it fails`);
      this.retryTimer = setTimeout(() => this.link.isUp && void this.listen(), wait);
      this.retryTimer.unref();
      return;
    }
    this.subscribed = true;
    if (this.closed) return this.unsubscribe();
    this.retryMs = RESUBSCRIBE_MS;
    this.retry = null;
    // Heard only while the link that answered is still up: one that dropped meanwhile subscribes again when back.
    this.heard = this.link.isUp;
    this.failures.succeeded();
    this.announce(true);
  }

  /** The link went down: its subscription went with it. */
  private cutOff(): void {
    this.heard = false;
    this.retry = null;
    this.announce(false);
  }

  private unsubscribe(): void {
    if (this.subscribed && this.link.sub.status === 'ready') this.link.sub.unsubscribe(this.channel).catch(() => {});
    this.subscribed = false;
  }

  private announce(connected: boolean): void {
    if (this.closed) return;
    for (const handler of this.changeHandlers) {
      try {
        handler(connected);
      } catch (err) {
        this.log.error({ err }, 'index change feed handler failed');
      }
    }
  }
}
