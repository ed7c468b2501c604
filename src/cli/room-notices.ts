/**
 * What a thread operation of the `salon threads` command tells the rooms of running servers: what
 * a server's ThreadService tells its RoomHub (a merge's and a split's moves, which the rooms'
 * in-memory history follows, and the notice members read), published on the Redis bus (REDIS_URL)
 * in the envelopes a node publishes, under a node id of the command's own. The in-process bus of a
 * lone server lives inside that server's process: nothing outside it can reach its rooms.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { ThreadOutlet } from '../memory/threads/thread-service.js';
import type { ServerMessage } from '../protocol/messages.js';
import { encodeEnvelope, type Delivery, type ThreadMove } from '../rooms/envelope.js';
import { RedisRoomBus } from '../rooms/redis-bus.js';

/** How long the command waits for Redis before it gives up telling the rooms (the change is stored either way). */
export const REDIS_WAIT_MS = 5_000;

/** What members of a room that was not told see, and until when. */
export const UNTOLD_ROOMS_SEE =
  'The thread lists show the change at once; a room open on a server shows the messages it holds as before ' +
  '(in its welcomes too, on a reload) until everyone has left it or the server restarts.';

/** Why the rooms of a lone server are not told, for the command's stderr. */
export const NOT_TOLD_WITHOUT_REDIS = `rooms open on a running server were not told: without REDIS_URL a server's rooms cannot be reached from outside its process. ${UNTOLD_ROOMS_SEE}`;

/** The rooms a `publish` did not tell (each once, in the order of their notices), and why. */
export interface Untold {
  rooms: string[];
  why: string;
}

interface Notice {
  roomId: string;
  delivery: Delivery;
  frame: string;
}

/** A ThreadOutlet that keeps what the rooms are to be told, for `publish` to send once the operation is stored. */
export class RoomNotices implements ThreadOutlet {
  private readonly notices: Notice[] = [];

  /** Whether the operation had anything to tell. */
  get pending(): boolean {
    return this.notices.length > 0;
  }

  broadcast(roomId: string, frame: ServerMessage): void {
    // As RoomHub.broadcast: a message joins the rooms' history (a notice's seq 0 keeps it out of welcomes).
    this.notices.push({ roomId, delivery: frame.type === 'message' || frame.type === 'assistant.done' ? 'history' : 'all', frame: JSON.stringify(frame) });
  }

  messagesMoved(roomId: string, moves: { ids: string[]; threadId: string }[]): void {
    this.move(roomId, { moves });
  }

  threadMerged(roomId: string, absorbedId: string, survivorId: string): void {
    this.move(roomId, { merged: { absorbedId, survivorId } });
  }

  /**
   * Publishes what was kept, in order, on the Redis bus `config` names; null when every notice went
   * out. Otherwise the rooms of the first notice not published and of every one after it: when Redis
   * did not answer within `waitMs`, a publish failed, or the link dropped between two publishes (the
   * bus drops a publish while cut off, as a server's must, so that is checked before each one).
   */
  async publish(config: Config, waitMs = REDIS_WAIT_MS): Promise<Untold | null> {
    if (!this.notices.length) return null;
    const bus = new RedisRoomBus({ url: config.REDIS_URL!, prefix: config.REDIS_KEY_PREFIX, nodeId: `salon-cli-${randomUUID()}` });
    const untold = (from: number, why: string): Untold => ({ rooms: [...new Set(this.notices.slice(from).map((n) => n.roomId))], why });
    let timer: NodeJS.Timeout | undefined;
    try {
      const up = await Promise.race([bus.ready().then(() => true), new Promise<false>((resolve) => (timer = setTimeout(resolve, waitMs, false)))]);
      if (!up) return untold(0, `Redis did not answer within ${waitMs / 1000} s`);
      for (const [i, { roomId, delivery, frame }] of this.notices.entries()) {
        if (!bus.link.isUp) return untold(i, 'the connection to Redis dropped while the rooms were being told');
        try {
          await bus.publish(roomId, encodeEnvelope({ node: bus.nodeId, delivery, frame }));
        } catch (err) {
          return untold(i, `publishing on Redis failed (${err instanceof Error ? err.message : String(err)})`);
        }
      }
      return null;
    } finally {
      clearTimeout(timer);
      await bus.close();
    }
  }

  private move(roomId: string, move: ThreadMove): void {
    this.notices.push({ roomId, delivery: 'threads', frame: JSON.stringify(move) });
  }
}
