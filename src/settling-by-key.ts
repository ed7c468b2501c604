/**
 * Tasks still running, by key: for a step that must come after every task of its key started
 * before it (a forget mark's read after its move), while tasks of other keys go on. A key is a
 * list of strings (an owner and a room, say).
 */
export class SettlingByKey {
  private readonly running = new Map<string, Promise<void>>();

  /** Tracks `task` under `key` until it settles, fulfilled or rejected (its outcome stays its caller's). */
  track(key: readonly string[], task: Promise<unknown>): void {
    const id = JSON.stringify(key);
    const settled = Promise.all([this.running.get(id), task.catch(() => {})]).then(() => {});
    this.running.set(id, settled);
    void settled.then(() => {
      if (this.running.get(id) === settled) this.running.delete(id);
    });
  }

  /** Settles once every task tracked under `key` so far has; undefined when none is running. */
  settled(key: readonly string[]): Promise<void> | undefined {
    return this.running.get(JSON.stringify(key));
  }
}
