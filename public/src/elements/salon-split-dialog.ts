/**
 * `<salon-split-dialog>`: splits a thread. It lists the thread's messages (paged from
 * `GET /api/v1/threads/:id/messages`), lets the member put each one into a part (or leave it in
 * the thread), name each part and choose the lock the new threads get, then asks the room to send
 * the `/split … confirm …` command and shows its answer. A modal `<dialog>`: focus stays inside,
 * Escape closes it, and focus goes back where it was.
 *
 * @fires salon-split - {threadId, parts: [{title, messageIds}], lock} the member confirmed the split.
 * @fires salon-close-split - the dialog closed.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { Message } from '../../../src/protocol/messages.js';
import type { CommandReply } from '../lib/command-replies.js';
import { baseStyles } from '../lib/styles.js';
import { SPLIT_LOCKS, SPLIT_MAX_PARTS, splitCommand, threadMessages, TITLE_MAX_CHARS, type SplitLock, type SplitPart } from '../lib/threads-api.js';
import { STAYS } from './salon-split-picker.js';

/** Messages fetched per page. */
const PAGE = 100;

const LOCK_LABEL: Record<SplitLock, string> = {
  compaction: 'Until the thread’s memory is next compacted',
  agent_release: 'Until an agent releases it (/unlock)',
  force: 'Forced: only an explicit /unlock releases it',
};

/** The element that has focus, looking inside shadow roots. */
function deepActiveElement(): HTMLElement | null {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el as HTMLElement | null;
}

@customElement('salon-split-dialog')
export class SalonSplitDialog extends LitElement {
  static override styles = [
    baseStyles,
    css`
      dialog {
        width: min(44rem, calc(100vw - 1.5rem));
        max-height: calc(100vh - 2rem);
        padding: 1rem 1.1rem;
        border: 1px solid var(--salon-border-strong);
        border-radius: 14px;
        background: var(--salon-panel);
        color: var(--salon-fg);
      }
      dialog::backdrop {
        background: rgb(0 0 0 / 0.4);
      }
      h2 {
        font-size: 1.1rem;
        margin: 0 0 0.5rem;
        overflow-wrap: anywhere;
      }
      fieldset {
        border: 1px solid var(--salon-border);
        border-radius: 10px;
        margin: 0 0 0.75rem;
        padding: 0.5rem 0.75rem;
        min-width: 0;
      }
      legend {
        font-weight: 650;
        padding: 0 0.25rem;
      }
      .part {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.3rem 0.5rem;
        margin-bottom: 0.4rem;
      }
      .part label {
        flex: 1 1 100%;
        font-size: 0.85rem;
      }
      .part input {
        font: inherit;
        flex: 1 1 12rem;
        min-width: 0;
        padding: 0.3rem 0.5rem;
        border-radius: 8px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-surface);
        color: var(--salon-fg);
      }
      .picked {
        font-size: 0.8rem;
        color: var(--salon-muted);
      }
      button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      .lock label {
        display: flex;
        gap: 0.4rem;
        align-items: baseline;
        margin: 0.15rem 0;
      }
      .hint {
        font-size: 0.82rem;
        color: var(--salon-muted);
        margin: 0.3rem 0 0;
      }
      .error {
        color: var(--salon-danger);
      }
      .done {
        white-space: pre-line;
        overflow-wrap: anywhere;
      }
      .actions {
        display: flex;
        justify-content: flex-end;
        gap: 0.5rem;
        margin-top: 0.75rem;
      }
      .actions button {
        min-height: 2.25rem;
        font-size: 0.95rem;
      }
    `,
  ];

  /** The thread to split. */
  @property() threadId = '';
  @property() threadTitle = '';
  @property({ type: Boolean }) open = false;
  /** The split command is on its way. */
  @property({ type: Boolean }) pending = false;
  /** The server's answer to the split. */
  @property({ attribute: false }) result: CommandReply | null = null;
  @state() private messages: Message[] = [];
  @state() private hasMore = false;
  @state() private loading = false;
  @state() private parts: { title: string }[] = [{ title: '' }];
  /** Message id → part index (absent: stays in the thread). */
  @state() private assigned = new Map<string, number>();
  @state() private lock: SplitLock = 'compaction';
  @state() private problem = '';
  @query('dialog') private dialog!: HTMLDialogElement;
  private returnFocus: HTMLElement | null = null;
  /** Counts the dialog's openings: a load started for an earlier one drops its answer. */
  private opening = 0;

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('open') || changed.has('threadId')) this.sync();
    if (changed.has('result') && this.result) this.announceResult();
  }

  protected override render() {
    const done = this.result?.ok === true;
    return html`<dialog aria-labelledby="split-heading" @cancel=${this.onCancel} @close=${this.onClose}>
      <form method="dialog" @submit=${this.onSubmit}>
        <h2 id="split-heading">Split “${this.threadTitle}”</h2>
        ${done ? this.renderDone() : this.renderForm()}
      </form>
    </dialog>`;
  }

  private renderDone() {
    return html`<p class="done" role="status" data-result="ok">${(this.result as { text: string }).text}</p>
      <div class="actions"><button class="primary close" type="button" @click=${this.close}>Close</button></div>`;
  }

  private renderForm() {
    const error = this.problem || (this.result && !this.result.ok ? `The server refused the split: ${this.result.message}` : '');
    return html`<p class="hint">
        Put messages into parts: each part becomes a new thread, split off this one and locked so it is not merged back. Messages left out stay here.
      </p>
      ${this.renderParts()} ${this.renderLock()}
      <fieldset>
        <legend>Messages</legend>
        <salon-split-picker
          .messages=${this.messages}
          .parts=${this.parts.length}
          .assigned=${this.assigned}
          .hasMore=${this.hasMore}
          .loading=${this.loading}
          @salon-assign=${(e: CustomEvent<{ id: string; part: number }>) => this.assign(e.detail.id, e.detail.part)}
          @salon-load-older=${this.onLoadOlder}
        ></salon-split-picker>
      </fieldset>
      <p class="error" role="alert" data-result=${error ? 'error' : ''}>${error}</p>
      <div class="actions">
        <button type="button" @click=${this.close}>Cancel</button>
        <button class="primary" type="submit" ?disabled=${this.pending}>${this.pending ? 'Splitting…' : 'Split'}</button>
      </div>`;
  }

  private renderParts() {
    return html`<fieldset class="parts">
      <legend>New threads</legend>
      ${this.parts.map((p, i) => {
        const picked = [...this.assigned.values()].filter((v) => v === i).length;
        return html`<div class="part">
          <label for="part-title-${i}">Title of part ${i + 1}</label>
          <input
            id="part-title-${i}"
            .value=${p.title}
            maxlength=${TITLE_MAX_CHARS}
            autocomplete="off"
            ?autofocus=${i === 0}
            @input=${(e: Event) => this.setTitle(i, (e.target as HTMLInputElement).value)}
          />
          <span class="picked">${picked} ${picked === 1 ? 'message' : 'messages'}</span>
          ${this.parts.length > 1 ? html`<button type="button" aria-label="Remove part ${i + 1}" @click=${() => this.removePart(i)}>Remove</button>` : nothing}
        </div>`;
      })}
      <button type="button" ?disabled=${this.parts.length >= SPLIT_MAX_PARTS} @click=${this.addPart}>Add a part</button>
      <p class="hint">Titles cannot contain commas or underscores.</p>
    </fieldset>`;
  }

  private renderLock() {
    return html`<fieldset class="lock">
      <legend>Lock the new threads</legend>
      ${SPLIT_LOCKS.map(
        (lock) =>
          html`<label
            ><input type="radio" name="lock" value=${lock} .checked=${this.lock === lock} @change=${() => (this.lock = lock)} />${LOCK_LABEL[lock]}</label
          >`,
      )}
      <p class="hint">A locked thread is never merged nor suggested for a merge.</p>
    </fieldset>`;
  }

  /** Opens or closes the modal to follow `open`, starting afresh each time it opens. */
  private sync(): void {
    if (this.open && !this.dialog.open) {
      this.returnFocus = deepActiveElement();
      this.reset();
      this.dialog.showModal();
      void this.loadOlder();
    } else if (!this.open && this.dialog.open) {
      this.dialog.close();
    }
  }

  private reset(): void {
    this.messages = [];
    this.hasMore = false;
    this.parts = [{ title: '' }];
    this.assigned = new Map();
    this.lock = 'compaction';
    this.problem = '';
    this.loading = false;
    this.opening++;
  }

  private onLoadOlder = (e: Event) => {
    // The picker asks the dialog; the event goes no further.
    e.stopPropagation();
    void this.loadOlder();
  };

  private loadOlder = async () => {
    const threadId = this.threadId;
    if (this.loading || !threadId) return;
    const opening = this.opening;
    this.loading = true;
    try {
      const page = await threadMessages(threadId, this.messages[0]?.seq ?? 0, PAGE);
      if (opening !== this.opening || threadId !== this.threadId) return;
      const known = new Set(this.messages.map((m) => m.id));
      this.messages = [...page.messages.filter((m) => !known.has(m.id)), ...this.messages];
      this.hasMore = page.hasMore;
    } catch (err) {
      if (opening === this.opening) this.problem = `The messages could not be loaded: ${(err as Error).message}`;
    } finally {
      // A load of an earlier opening must not end the one this opening started.
      if (opening === this.opening) this.loading = false;
    }
  };

  private async announceResult(): Promise<void> {
    await this.updateComplete;
    if (this.result?.ok) this.renderRoot.querySelector<HTMLButtonElement>('button.close')?.focus();
  }

  private setTitle(i: number, title: string): void {
    this.problem = '';
    this.parts = this.parts.map((p, j) => (j === i ? { title } : p));
  }

  private addPart = () => {
    this.problem = '';
    if (this.parts.length < SPLIT_MAX_PARTS) this.parts = [...this.parts, { title: '' }];
  };

  private removePart(i: number): void {
    this.problem = '';
    this.parts = this.parts.filter((_, j) => j !== i);
    const next = new Map<string, number>();
    for (const [id, part] of this.assigned) if (part !== i) next.set(id, part > i ? part - 1 : part);
    this.assigned = next;
  }

  private assign(id: string, part: number): void {
    this.problem = '';
    const next = new Map(this.assigned);
    if (part === STAYS) next.delete(id);
    else next.set(id, part);
    this.assigned = next;
  }

  /** The parts as the command takes them, messages in the thread's order. */
  private chosenParts(): SplitPart[] {
    return this.parts.map((p, i) => ({
      title: p.title.trim(),
      messageIds: this.messages.filter((m) => this.assigned.get(m.id) === i).map((m) => m.id),
    }));
  }

  private onSubmit(e: Event): void {
    e.preventDefault();
    if (this.pending) return;
    const parts = this.chosenParts();
    try {
      splitCommand(this.threadId, parts, this.lock);
    } catch (err) {
      this.problem = (err as Error).message;
      return;
    }
    this.problem = '';
    this.dispatchEvent(new CustomEvent('salon-split', { detail: { threadId: this.threadId, parts, lock: this.lock }, bubbles: true, composed: true }));
  }

  private close = () => {
    this.dialog.close();
    this.tellClosed();
  };

  // Escape (or any close request) fires `cancel` at once but `close` a task later, and the
  // browser runs input first: a click that opens the dialog again can come in between. So the
  // room is told here, and a late `close` of a dialog open again changes nothing.
  private onCancel = () => this.tellClosed();

  private onClose = () => {
    if (this.dialog.open) return;
    this.returnFocus?.focus();
    this.returnFocus = null;
    this.tellClosed();
  };

  private tellClosed(): void {
    if (!this.open) return;
    this.dispatchEvent(new CustomEvent('salon-close-split', { bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-split-dialog': SalonSplitDialog;
  }
}
