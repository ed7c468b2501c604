/**
 * Long loops of thread operations share the event loop with every room: they give it a turn every
 * TURN_MS of work, however fast the machine is at the moment (a count of items per turn that suits
 * an idle machine holds the loop several times longer while other work shares the cores).
 */

/** Work between two turns of the event loop, in milliseconds. */
export const TURN_MS = 10;

export class Turns {
  private last = performance.now();

  /** Whether TURN_MS have passed since the last turn (then `await next()`). */
  due(): boolean {
    return performance.now() - this.last >= TURN_MS;
  }

  /** Lets the event loop run once. */
  async next(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}
