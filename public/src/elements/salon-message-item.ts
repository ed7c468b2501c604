/**
 * `<salon-message-item>`: one message in a room — a person's, the assistant's (with its sources,
 * or streaming with its current stage) or a system note. Shows whether the member's own message
 * is still sending or failed, with Retry and Discard.
 *
 * @fires salon-retry - {clientId} the member asks to send a failed message again.
 * @fires salon-discard - {clientId} the member gives up on a failed message.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { AssistantStage, Author, Source } from '../../../src/protocol/messages.js';
import { formatTime } from '../lib/format.js';
import { baseStyles } from '../lib/styles.js';
import './salon-markdown.js';
import './salon-source-list.js';

export type MessageState = 'sent' | 'sending' | 'failed' | 'streaming';

const STAGE_LABEL: Record<AssistantStage, string> = {
  searching: 'Searching the sources…',
  reranking: 'Picking the best passages…',
  writing: 'Writing…',
};
const ASK_PREFIX = /^(@ai|\/ask)\s+/i;

@customElement('salon-message-item')
export class SalonMessageItem extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      article {
        padding: 0.55rem 0.75rem;
        border-radius: 12px;
        background: var(--salon-surface);
        border: 1px solid var(--salon-border);
        max-width: 100%;
      }
      :host([kind='assistant']) article {
        background: var(--salon-assistant-bg);
        border-color: var(--salon-assistant-border);
      }
      :host([kind='system']) article {
        background: transparent;
        border-style: dashed;
        font-size: 0.9rem;
      }
      :host([intro]) article {
        border-width: 2px;
      }
      :host([mine]) article {
        background: var(--salon-mine-bg);
        border-color: var(--salon-mine-border);
      }
      header {
        display: flex;
        flex-wrap: wrap;
        align-items: baseline;
        gap: 0.2rem 0.5rem;
        margin-bottom: 0.2rem;
        font-size: 0.85rem;
      }
      /* Isolated, as <bdi> would be: a right-to-left name cannot pull the time or badges beside it into its run. */
      .author,
      time {
        unicode-bidi: isolate;
      }
      .author {
        font-weight: 650;
        min-width: 0;
        overflow-wrap: anywhere;
      }
      .badge {
        font-size: 0.72rem;
        border-radius: 999px;
        padding: 0.05rem 0.5rem;
        background: var(--salon-accent-soft);
        color: var(--salon-accent-strong);
      }
      time {
        color: var(--salon-muted);
      }
      .stage {
        display: inline-flex;
        align-items: center;
        gap: 0.4rem;
        color: var(--salon-accent-strong);
        font-size: 0.85rem;
        margin-bottom: 0.25rem;
      }
      .dot {
        width: 0.5rem;
        height: 0.5rem;
        border-radius: 50%;
        background: currentColor;
        animation: pulse 1s ease-in-out infinite alternate;
      }
      @keyframes pulse {
        from {
          opacity: 0.3;
        }
        to {
          opacity: 1;
        }
      }
      @media (prefers-reduced-motion: reduce) {
        .dot {
          animation: none;
        }
      }
      .status {
        margin-top: 0.35rem;
        font-size: 0.82rem;
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem;
        align-items: center;
        overflow-wrap: anywhere;
      }
      .failed {
        color: var(--salon-danger);
      }
      .status button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.82rem;
      }
    `,
  ];

  @property({ attribute: false }) author: Author = { id: '', name: '', kind: 'user' };
  @property() text = '';
  @property() ts = '';
  @property({ reflect: true }) kind: Author['kind'] = 'user';
  @property({ reflect: true }) state: MessageState = 'sent';
  @property() error = '';
  @property() clientId = '';
  @property({ attribute: false }) sources: Source[] = [];
  @property() stage: AssistantStage | '' = '';
  /** The member's own message. */
  @property({ type: Boolean, reflect: true }) mine = false;
  /** A private question or its answer: only this member sees it. */
  @property({ type: Boolean, reflect: true, attribute: 'only-you' }) onlyYou = false;
  /** A failed message worth sending again; false for a command refused as written. */
  @property({ type: Boolean }) retryable = true;
  /** A private question whose answer was never written: the page was reloaded while it was. */
  @property({ type: Boolean, reflect: true }) unanswered = false;
  /** The introduction of a fused thread (its first message). */
  @property({ type: Boolean, reflect: true }) intro = false;

  protected override render() {
    const asked = this.kind === 'user' && (ASK_PREFIX.test(this.text) || this.onlyYou);
    const body = asked ? this.text.replace(ASK_PREFIX, '') : this.text;
    return html`<article aria-busy=${this.state === 'streaming' ? 'true' : 'false'}>
      <header>
        <span class="author">${this.author.name}${this.mine ? html`<span class="visually-hidden"> (you)</span>` : nothing}</span>
        ${this.kind === 'assistant' ? html`<span class="badge">AI assistant</span>` : nothing}
        ${this.intro ? html`<span class="badge" data-intro>introduces this fused thread</span>` : nothing}
        ${asked ? html`<span class="badge">${this.onlyYou ? 'asked the AI privately' : 'asked the AI'}</span>` : nothing}
        ${this.onlyYou && this.kind === 'assistant' ? html`<span class="badge private">only you see this</span>` : nothing}
        ${this.ts && this.state !== 'streaming' ? html`<time datetime=${this.ts}>${formatTime(this.ts)}</time>` : nothing}
      </header>
      ${
        this.state === 'streaming' && this.stage
          ? html`<div class="stage" data-stage=${this.stage}><span class="dot" aria-hidden="true"></span>${STAGE_LABEL[this.stage]}</div>`
          : nothing
      }
      ${body ? html`<salon-markdown .text=${body}></salon-markdown>` : nothing}
      ${this.sources.length ? html`<salon-source-list .sources=${this.sources}></salon-source-list>` : nothing} ${this.renderStatus()}
    </article>`;
  }

  private renderStatus() {
    if (this.state === 'sending') return html`<div class="status muted">Sending…</div>`;
    if (this.unanswered && this.state === 'sent') {
      return html`<div class="status muted" data-unanswered>The page was reloaded while this was being answered: if no answer follows, ask again.</div>`;
    }
    if (this.state !== 'failed') return nothing;
    return html`<div class="status failed" role="alert">
      <span>Not sent: ${this.error || 'the server did not accept it.'}</span>
      ${this.retryable ? html`<button type="button" @click=${() => this.emit('salon-retry')}>Retry</button>` : nothing}
      <button type="button" @click=${() => this.emit('salon-discard')}>Discard</button>
    </div>`;
  }

  private emit(type: 'salon-retry' | 'salon-discard'): void {
    this.dispatchEvent(new CustomEvent(type, { detail: { clientId: this.clientId }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-message-item': SalonMessageItem;
  }
}
