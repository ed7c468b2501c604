/**
 * `<salon-connection-status>`: says plainly what the room's connection is doing (connecting,
 * reconnecting with a countdown, offline), where a pending "Forget them" stands (waiting for the
 * room, or to ask the server again), and shows the latest problem the server reported. The
 * forget's state is a line of its own beside the notice: it neither hides a notice nor is hidden
 * by one. Nothing fails silently.
 *
 * @fires salon-reconnect - the member wants to retry now instead of waiting.
 * @fires salon-dismiss-notice - the member closed the notice.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ConnectionStatus } from '../lib/room-connection.js';
import type { ForgetState } from '../lib/forget-retry.js';
import type { Notice } from '../lib/room-notices.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-connection-status')
export class SalonConnectionStatus extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      .bar {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.5rem;
        padding: 0.45rem 0.75rem;
        border-radius: 10px;
        font-size: 0.9rem;
        margin-bottom: 0.5rem;
      }
      .info {
        background: var(--salon-info-bg);
        color: var(--salon-info-fg);
      }
      .warning {
        background: var(--salon-warning-bg);
        color: var(--salon-warning-fg);
      }
      .error {
        background: var(--salon-danger-bg);
        color: var(--salon-danger);
      }
      .bar button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
        margin-left: auto;
      }
      /* A phone's height must still hold the composer below the messages: one line where it can. */
      .bar .narrow {
        display: none;
      }
      @media (max-width: 720px) {
        .bar {
          font-size: 0.8rem;
          line-height: 1.35;
          padding: 0.25rem 0.5rem;
          gap: 0.4rem;
          margin-bottom: 0.35rem;
        }
        .bar button {
          min-height: 1.6rem;
          font-size: 0.8rem;
          padding: 0 0.55rem;
        }
        /* A notice keeps its text and a small × on the same lines, not a line of its own for "Dismiss". */
        .bar[data-notice] {
          flex-wrap: nowrap;
        }
        .bar[data-notice] > span {
          flex: 1 1 auto;
          min-width: 0;
        }
        .bar[data-notice] button {
          flex: none;
          min-width: 1.9rem;
        }
        .bar .wide {
          display: none;
        }
        .bar .narrow {
          display: inline;
        }
      }
    `,
  ];

  @property({ reflect: true }) status: ConnectionStatus = 'idle';
  /** Epoch ms of the next reconnect attempt. */
  @property({ type: Number }) retryAt: number | null = null;
  @property({ attribute: false }) notice: Notice | null = null;
  /** Where a pending "Forget them" of this room stands; null when none waits. */
  @property({ attribute: false }) forget: ForgetState | null = null;
  @state() private now = Date.now();
  private ticker: ReturnType<typeof setInterval> | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    // Taken out of the page and put back (a re-render moving it), the countdown goes on.
    this.restartCountdown();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('retryAt')) this.restartCountdown();
  }

  /** Ticks once a second while a reconnect is due and the element is in the page. */
  private restartCountdown(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
    this.now = Date.now();
    if (this.retryAt && this.isConnected) this.ticker = setInterval(() => (this.now = Date.now()), 1000);
  }

  protected override render() {
    return html`<div role="status" aria-live="polite">${this.renderConnection()}${this.renderForget()}</div>
      <div role="alert">${this.renderNotice()}</div>`;
  }

  private renderConnection() {
    switch (this.status) {
      case 'connecting':
        return html`<div class="bar info" data-state="connecting">Connecting to the room…</div>`;
      case 'reconnecting': {
        const seconds = this.retryAt ? Math.max(0, Math.ceil((this.retryAt - this.now) / 1000)) : 0;
        // The countdown changes every second inside a live region: screen readers would read each one out.
        return html`<div class="bar warning" data-state="reconnecting">
          <span
            >Connection lost. <span aria-hidden="true">${seconds > 0 ? `Reconnecting in ${seconds} s…` : 'Reconnecting…'}</span
            ><span class="visually-hidden">Reconnecting.</span></span
          >
          <button type="button" @click=${() => this.emit('salon-reconnect')}>Retry now</button>
        </div>`;
      }
      case 'offline':
        return html`<div class="bar warning" data-state="offline">You are offline. Messages you write are kept and sent when the connection is back.</div>`;
      default:
        return nothing;
    }
  }

  private renderForget() {
    switch (this.forget) {
      case 'pending':
        return html`<div class="bar info" data-forget="pending">Not connected: the assistant forgets your private questions as soon as the room is back.</div>`;
      case 'retrying':
        return html`<div class="bar info" data-forget="retrying">
          The server is busy: your private questions are not forgotten yet. The page asks it again in a moment.
        </div>`;
      default:
        return nothing;
    }
  }

  private renderNotice() {
    const n = this.notice;
    if (!n) return nothing;
    return html`<div class="bar ${n.level}" data-notice=${n.code}>
      <span>${n.message}</span>
      <button type="button" @click=${() => this.emit('salon-dismiss-notice')} aria-label="Dismiss this notice">
        <span class="wide">Dismiss</span><span class="narrow" aria-hidden="true">×</span>
      </button>
    </div>`;
  }

  private emit(type: string): void {
    this.dispatchEvent(new CustomEvent(type, { bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-connection-status': SalonConnectionStatus;
  }
}
