/**
 * `<salon-composer>`: writes a message. Enter sends, Shift+Enter starts a new line; the "Ask AI"
 * switch (or starting with `@ai` or `/ask`) makes it a question for the assistant, and "Only me" a private
 * one: not posted, answered to this member alone, remembered only for their own private questions.
 * While "Only me" is on, a line says where private questions are shown (in this tab only) and that the
 * assistant remembers them for the member until they are forgotten.
 *
 * @fires salon-send - {text, ask, private} the member sends a message.
 * @fires salon-typing - {active} the member started or stopped typing (never told while writing a private question).
 * @fires salon-forget-private - the member asks to forget this room's private questions and answers: the tab's and the assistant's memory of them.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { ASK_PREFIX, outgoingText } from '../lib/ask-text.js';
import { plural } from '../lib/format.js';
import { baseStyles } from '../lib/styles.js';

/** Show the remaining characters once fewer than this are left. */
const COUNTER_FROM = 500;
/**
 * What a screen reader is told as the text nears the limit: one sentence a step, from the last
 * one crossed, so a change of step is announced and a key within a step is not.
 */
const LIMIT_STEPS = [20, 100, COUNTER_FROM];
/** "Stopped typing" after this long without a key. */
const TYPING_IDLE_MS = 4_000;
/** Where private questions are kept (lib/private-asks.ts), said while "Only me" is on. */
const PRIVATE_NOTE = 'Private questions show in this tab only; the assistant remembers them for you until you forget them.';
/** The same on a phone, short enough to share one line with "Forget them" at 360 px: the composer must fit below the messages. */
const PRIVATE_NOTE_SHORT = 'Shown in this tab only.';

@customElement('salon-composer')
export class SalonComposer extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      form {
        display: grid;
        grid-template-columns: 1fr auto;
        gap: 0.5rem;
        align-items: end;
      }
      textarea {
        font: inherit;
        width: 100%;
        min-height: 2.75rem;
        max-height: 10rem;
        resize: vertical;
        padding: 0.6rem 0.75rem;
        border-radius: 12px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-surface);
        color: var(--salon-fg);
      }
      .row {
        grid-column: 1 / -1;
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem 1rem;
        align-items: center;
        font-size: 0.85rem;
      }
      .switch {
        display: inline-flex;
        align-items: center;
        gap: 0.4rem;
        cursor: pointer;
        font-weight: 600;
      }
      .switch input {
        width: 1.1rem;
        height: 1.1rem;
        accent-color: var(--salon-accent);
      }
      .hint {
        color: var(--salon-muted);
      }
      @media (max-width: 720px) {
        /* The connection bar above the room says the same while the composer queues; a phone has no line to spare. */
        .hint {
          display: none;
        }
      }
      .private-note {
        grid-column: 1 / -1;
        margin: 0;
        font-size: 0.85rem;
        color: var(--salon-muted);
      }
      .private-note button {
        border: none;
        background: none;
        padding: 0;
        min-height: 0;
        margin-left: 0.4rem;
        color: var(--salon-link);
        text-decoration: underline;
        font-size: inherit;
      }
      .private-note .short {
        display: none;
      }
      @media (max-width: 720px) {
        .private-note {
          font-size: 0.78rem;
        }
        .private-note .long {
          display: none;
        }
        .private-note .short {
          display: inline;
        }
      }
      .count {
        margin-left: auto;
        color: var(--salon-muted);
        font-variant-numeric: tabular-nums;
      }
      .count.over {
        color: var(--salon-danger);
        font-weight: 600;
      }
    `,
  ];

  /** Longest message the server accepts. */
  @property({ type: Number }) maxLength = 4000;
  /** Shown when messages will wait for the connection. */
  @property({ type: Boolean }) queued = false;
  /** Private questions and answers of this room kept in the tab (offers to forget them when any). */
  @property({ type: Number }) privateCount = 0;
  /** The server refused this room's last "Forget them": offered again though the tab keeps none. */
  @property({ type: Boolean }) forgetRefused = false;
  @state() private text = '';
  @state() private ask = false;
  @state() private onlyMe = false;
  @query('textarea') private textarea!: HTMLTextAreaElement;
  private typingTimer: ReturnType<typeof setTimeout> | undefined;

  /** Puts the cursor in the message box. */
  override focus(): void {
    this.textarea?.focus();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.typingTimer);
  }

  protected override render() {
    // Counted as sent: trimmed, and marked or unmarked as a question goes (ask-text.ts).
    const left = this.maxLength - outgoingText(this.text.trim(), this.ask, this.onlyMe).length;
    const asking = this.ask || ASK_PREFIX.test(this.text);
    const privately = asking && this.onlyMe;
    return html`<form @submit=${this.onSubmit}>
      <label class="visually-hidden" for="message">Message</label>
      <textarea
        id="message"
        name="message"
        rows="2"
        dir="auto"
        placeholder=${asking ? 'Ask the AI about this item…' : 'Write a message… (@ai to ask the AI)'}
        .value=${this.text}
        aria-describedby=${privately ? 'hint private-note' : 'hint'}
        @input=${this.onInput}
        @keydown=${this.onKeyDown}
        @blur=${() => this.stopTyping()}
      ></textarea>
      <button class="primary" type="submit" ?disabled=${!this.text.trim() || left < 0}>${asking ? 'Ask' : 'Send'}</button>
      <div class="row">
        <label class="switch">
          <input type="checkbox" role="switch" name="ask" .checked=${this.ask} @change=${this.onAskToggle} />
          Ask AI
        </label>
        ${
          asking
            ? html`<label class="switch" title="Not posted in the room: only you see the question and the answer">
                <input type="checkbox" role="switch" name="private" .checked=${this.onlyMe} @change=${this.onPrivateToggle} />
                Only me
              </label>`
            : nothing
        }
        <span class="hint" id="hint"
          ><span class="keys">Enter sends, Shift+Enter adds a line.</span>${
            this.queued ? html` <strong>Offline: messages are sent once you reconnect.</strong>` : nothing
          }</span
        >
        ${
          left < COUNTER_FROM
            ? html`<span class="count ${left < 0 ? 'over' : ''}" data-left=${left}
                >${left < 0 ? `${plural(-left, 'character', 'characters')} too many: shorten it to send` : `${plural(left, 'character', 'characters')} left`}</span
              >`
            : nothing
        }
        <span class="visually-hidden" role="status" data-limit-status>${limitStatus(left)}</span>
      </div>
      ${privately ? this.renderPrivateNote() : nothing}
    </form>`;
  }

  private renderPrivateNote() {
    return html`<p class="private-note" id="private-note">
      <span class="long">${PRIVATE_NOTE}</span><span class="short">${PRIVATE_NOTE_SHORT}</span>${
        this.privateCount || this.forgetRefused
          ? html`<button type="button" class="forget" aria-label="Forget this room's private questions" @click=${() => this.emit('salon-forget-private', {})}>
              Forget them
            </button>`
          : nothing
      }
    </p>`;
  }

  /** Whether what is typed would go as a private question: the room is then not told the member is typing. */
  private get privately(): boolean {
    return this.onlyMe && (this.ask || ASK_PREFIX.test(this.text));
  }

  private onInput(e: Event): void {
    this.text = (e.target as HTMLTextAreaElement).value;
    if (this.text && !this.privately) {
      this.emit('salon-typing', { active: true });
      clearTimeout(this.typingTimer);
      this.typingTimer = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
    } else {
      this.stopTyping();
    }
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit();
    }
  }

  private onAskToggle(e: Event): void {
    this.ask = (e.target as HTMLInputElement).checked;
    if (this.privately) this.stopTyping();
  }

  private onPrivateToggle(e: Event): void {
    this.onlyMe = (e.target as HTMLInputElement).checked;
    if (this.privately) this.stopTyping();
  }

  private onSubmit(e: Event): void {
    e.preventDefault();
    this.submit();
  }

  private submit(): void {
    const text = this.text.trim();
    if (!text || outgoingText(text, this.ask, this.onlyMe).length > this.maxLength) return;
    const asking = this.ask || ASK_PREFIX.test(text);
    this.emit('salon-send', { text, ask: this.ask, private: asking && this.onlyMe });
    this.text = '';
    this.textarea.value = '';
    clearTimeout(this.typingTimer);
    this.textarea.focus();
  }

  private stopTyping(): void {
    clearTimeout(this.typingTimer);
    this.emit('salon-typing', { active: false });
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

/** The composer's step toward the limit, in words ('' while far from it); see LIMIT_STEPS. */
function limitStatus(left: number): string {
  if (left < 0) return 'Too long to send: shorten the message.';
  const step = LIMIT_STEPS.find((n) => left < n);
  return step === undefined ? '' : `Fewer than ${step} characters left.`;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-composer': SalonComposer;
  }
}
