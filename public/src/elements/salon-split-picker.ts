/**
 * `<salon-split-picker>`: the messages of a thread being split, oldest first, each with a choice
 * between staying in the thread and going to part 1…n (one radio group per message, named by the
 * message), and "Load earlier messages" while the thread has older ones.
 *
 * @fires salon-assign - {id, part} a message was put into a part (`STAYS`: it stays in the thread).
 * @fires salon-load-older - the member asked for the page before the oldest message listed.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { Message } from '../../../src/protocol/messages.js';
import { formatTime } from '../lib/format.js';
import { baseStyles } from '../lib/styles.js';

/** The part of a message that stays in the thread. */
export const STAYS = -1;
/** Characters of a message shown. */
const EXCERPT_CHARS = 200;

@customElement('salon-split-picker')
export class SalonSplitPicker extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      ol {
        list-style: none;
        margin: 0;
        padding: 0;
        max-height: 40vh;
        overflow-y: auto;
        display: flex;
        flex-direction: column;
        gap: 0.35rem;
      }
      fieldset {
        border: 1px solid var(--salon-border);
        border-radius: 10px;
        margin: 0;
        padding: 0.35rem 0.6rem;
        min-width: 0;
      }
      legend {
        font-size: 0.9rem;
        padding: 0 0.25rem;
        overflow-wrap: anywhere;
      }
      .author {
        font-weight: 650;
      }
      /* The name, the time and the message's text are each a bidi isolate (the text a <bdi>): none reorders the others. */
      time {
        color: var(--salon-muted);
        font-size: 0.8rem;
        unicode-bidi: isolate;
      }
      .choices {
        display: flex;
        flex-wrap: wrap;
        gap: 0.2rem 0.8rem;
        font-size: 0.85rem;
      }
      .choices label {
        display: inline-flex;
        gap: 0.3rem;
        align-items: center;
      }
      .older {
        align-self: center;
      }
      button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      .hint {
        font-size: 0.82rem;
        color: var(--salon-muted);
        margin: 0;
      }
    `,
  ];

  /** The messages listed, oldest first. */
  @property({ attribute: false }) messages: readonly Message[] = [];
  /** How many parts there are. */
  @property({ type: Number }) parts = 1;
  /** Message id → part index; absent: stays. */
  @property({ attribute: false }) assigned: ReadonlyMap<string, number> = new Map();
  @property({ type: Boolean }) hasMore = false;
  @property({ type: Boolean }) loading = false;

  protected override render() {
    if (!this.messages.length) {
      return html`<p class="hint" role="status">${this.loading ? 'Loading the messages…' : 'This thread has no messages to split off.'}</p>`;
    }
    return html`<ol aria-label="Messages of the thread">
      ${
        this.hasMore
          ? html`<li class="older">
              <button type="button" ?disabled=${this.loading} @click=${() => this.emit('salon-load-older', null)}>
                ${this.loading ? 'Loading…' : 'Load earlier messages'}
              </button>
            </li>`
          : nothing
      }
      ${repeat(
        this.messages,
        (m) => m.id,
        (m) => this.renderMessage(m),
      )}
    </ol>`;
  }

  private renderMessage(m: Message) {
    const part = this.assigned.get(m.id) ?? STAYS;
    const text = m.text.length > EXCERPT_CHARS ? `${m.text.slice(0, EXCERPT_CHARS - 1)}…` : m.text;
    const choice = (value: number, label: string) =>
      html`<label
        ><input
          type="radio"
          name="part-${m.id}"
          .checked=${part === value}
          @change=${() => this.emit('salon-assign', { id: m.id, part: value })}
        />${label}</label
      >`;
    return html`<li class="message" data-message=${m.id}>
      <fieldset>
        <legend><bdi class="author">${m.author.name}</bdi> <time datetime=${m.ts}>${formatTime(m.ts)}</time>: <bdi class="excerpt">${text}</bdi></legend>
        <div class="choices">${choice(STAYS, 'Stays')} ${Array.from({ length: this.parts }, (_, i) => choice(i, `Part ${i + 1}`))}</div>
      </fieldset>
    </li>`;
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-split-picker': SalonSplitPicker;
  }
}
