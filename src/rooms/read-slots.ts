/**
 * At most `size` reads at once, the others waiting in the order they came. A node back from a
 * Redis outage reads the store for every room at once (each room's missed messages and history),
 * as does every other node for the `sync` each room's return sends: without a bound, a restart of
 * Redis made every node of the deployment query the shared store for all its rooms in one instant.
 */
import { wholeNumber } from '../options.js';

export class ReadSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    wholeNumber('ReadSlots', 'size', size, 1);
  }

  /** Runs `read` once a slot is free; the slot passes to the next waiting read when it settles. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.running < this.size) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
