/**
 * How many people are in each room now, for the Discuss links: one poll of `GET /api/v1/rooms`
 * per page (not per link), refreshed while the page is visible.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { listRooms } from './api.js';

/** How often the counts refresh while the page is visible. */
export const ROOM_COUNTS_INTERVAL_MS = 10_000;

export class RoomCountsController implements ReactiveController {
  /** Members per room id; rooms nobody is in are absent. */
  counts: ReadonlyMap<string, number> = new Map();
  /** False until the first answer, and after a failed refresh. */
  known = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private abort: AbortController | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly intervalMs = ROOM_COUNTS_INTERVAL_MS,
  ) {
    host.addController(this);
  }

  /** Members in `roomId`, or undefined while unknown. */
  countOf(roomId: string): number | undefined {
    return this.known ? (this.counts.get(roomId) ?? 0) : undefined;
  }

  hostConnected(): void {
    void this.refresh();
    this.timer = setInterval(() => {
      if (document.visibilityState === 'visible') void this.refresh();
    }, this.intervalMs);
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  hostDisconnected(): void {
    clearInterval(this.timer);
    this.abort?.abort();
    document.removeEventListener('visibilitychange', this.onVisibility);
  }

  async refresh(): Promise<void> {
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    try {
      const rooms = await listRooms(abort.signal);
      this.counts = new Map(rooms.map((r) => [r.id, r.members]));
      this.known = true;
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      this.known = false;
    }
    this.host.requestUpdate();
  }

  private readonly onVisibility = () => {
    if (document.visibilityState === 'visible') void this.refresh();
  };
}
