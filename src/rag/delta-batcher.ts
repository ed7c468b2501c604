/** Coalesces a model's small pieces into `assistant.delta` frames sent every ~40 ms. */
import { numberWithin } from '../options.js';

export const DELTA_INTERVAL_MS = 40;

export class DeltaBatcher {
  private buffer = '';
  private timer: NodeJS.Timeout | null = null;
  /** Text already flushed, i.e. what members have seen. */
  sent = '';

  constructor(
    private readonly flush: (text: string) => void,
    private readonly intervalMs = DELTA_INTERVAL_MS,
  ) {
    numberWithin('DeltaBatcher', 'intervalMs', intervalMs, 0);
  }

  push(piece: string): void {
    if (!piece) return;
    this.buffer += piece;
    this.timer ??= setTimeout(() => this.emit(), this.intervalMs);
  }

  /** Sends what is buffered now. */
  finish(): void {
    this.emit();
  }

  /** Drops what is buffered and stops the timer. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.buffer = '';
  }

  private emit(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = '';
    this.sent += text;
    this.flush(text);
  }
}
