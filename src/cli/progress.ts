/**
 * Progress for long CLI work: a redrawn bar on a terminal, one summary line otherwise
 * (README, CLI), always on stderr so stdout stays machine-readable.
 */
const BAR_WIDTH = 28;
const REDRAW_INTERVAL_MS = 100;

export class ProgressBar {
  private done = 0;
  private failed = 0;
  private lastDraw = 0;
  private readonly startedAt = Date.now();
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  setTotal(total: number): void {
    this.total = total;
    this.draw();
  }

  tick(ok = true): void {
    if (ok) this.done++;
    else this.failed++;
    this.draw();
  }

  /** Clears the bar and prints the summary line. */
  finish(extra = ''): void {
    if (this.tty) this.stream.write('\r\x1b[2K');
    const secs = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    this.stream.write(`${this.label}: ${this.done} done, ${this.failed} failed of ${this.total} in ${secs}s${extra ? ' ' + extra : ''}\n`);
  }

  private draw(): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.lastDraw < REDRAW_INTERVAL_MS && this.done + this.failed < this.total) return;
    this.lastDraw = now;
    const n = this.done + this.failed;
    const frac = this.total > 0 ? Math.min(1, n / this.total) : 0;
    const filled = Math.round(frac * BAR_WIDTH);
    this.stream.write(
      `\r\x1b[2K${this.label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${n}/${this.total}${this.failed ? ` (${this.failed} failed)` : ''}`,
    );
  }
}
