/**
 * `<salon-thread-list>`: the room's threads beside the conversation — each with its title, badges
 * (main, fused, locked with its mode, archived or merged) and message count — the open one marked,
 * and a "New thread" action that asks for a title. Archived threads are listed apart.
 *
 * @fires salon-select-thread - {threadId} the member opens a thread.
 * @fires salon-new-thread - {title} the member starts a thread (the room answers through `pending` and `status`).
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { CommandReply } from '../lib/command-replies.js';
import { countLabel } from '../lib/room-threads.js';
import { badgeStyles, baseStyles } from '../lib/styles.js';
import { threadBadges, titleProblem, TITLE_MAX_CHARS, type ThreadView } from '../lib/threads-api.js';

@customElement('salon-thread-list')
export class SalonThreadList extends LitElement {
  static override styles = [
    baseStyles,
    badgeStyles,
    css`
      :host {
        display: block;
      }
      .top {
        display: flex;
        align-items: center;
        justify-content: space-between;
        gap: 0.5rem;
        margin-bottom: 0.5rem;
      }
      h2 {
        font-size: 0.95rem;
        margin: 0;
      }
      .top button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
        display: flex;
        flex-direction: column;
        gap: 0.3rem;
      }
      .thread {
        width: 100%;
        display: flex;
        flex-wrap: wrap;
        align-items: baseline;
        gap: 0.15rem 0.4rem;
        text-align: left;
        border-radius: 10px;
        padding: 0.35rem 0.6rem;
        min-height: 0;
      }
      .thread[aria-current='true'] {
        border-color: var(--salon-accent);
        background: var(--salon-accent-soft);
        font-weight: 600;
      }
      .title {
        flex: 1 1 100%;
        min-width: 0;
        overflow-wrap: anywhere;
      }
      .count {
        font-size: 0.78rem;
        color: var(--salon-muted);
        font-weight: 400;
      }
      form {
        display: flex;
        flex-wrap: wrap;
        gap: 0.35rem;
        margin-bottom: 0.5rem;
      }
      form label {
        flex: 1 1 100%;
        font-size: 0.85rem;
      }
      input {
        font: inherit;
        flex: 1 1 100%;
        min-width: 0;
        padding: 0.3rem 0.5rem;
        border-radius: 8px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-surface);
        color: var(--salon-fg);
      }
      form button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      details {
        margin-top: 0.5rem;
        font-size: 0.9rem;
      }
      summary {
        cursor: pointer;
        color: var(--salon-muted);
        margin-bottom: 0.3rem;
      }
      .status {
        font-size: 0.85rem;
        margin: 0.4rem 0 0;
      }
      .older {
        font-size: 0.85rem;
        color: var(--salon-muted);
        margin: 0.3rem 0 0;
      }
      .status:empty {
        display: none;
      }
      .status.error {
        color: var(--salon-danger);
      }
      @media (max-width: 720px) {
        ul {
          flex-direction: row;
          overflow-x: auto;
          padding-bottom: 0.15rem;
        }
        li {
          flex: none;
          max-width: 70vw;
        }
        /* One line per thread in the row: a long title wrapping made its button, and so the whole
           row, several lines tall, an empty band under the shorter buttons. */
        .thread {
          flex-wrap: nowrap;
          white-space: nowrap;
        }
        /* The title keeps its width up to 60 % of the button; the badges and the count give way
           first (cut with an ellipsis), or "Main" with two badges showed no title at all. */
        .title {
          flex: 0 0 auto;
          max-width: 60%;
          overflow: hidden;
          text-overflow: ellipsis;
          overflow-wrap: normal;
        }
        .thread .badge,
        .count {
          flex: 0 1 auto;
          min-width: 0;
          overflow: hidden;
          text-overflow: ellipsis;
        }
        /* Folded behind the room's Details toggle: only the row of threads to switch to. */
        :host([folded]) .top,
        :host([folded]) form,
        :host([folded]) details {
          display: none;
        }
      }
    `,
  ];

  @property({ attribute: false }) threads: readonly ThreadView[] = [];
  /** Archived threads in all: the list holds the newest of them only. */
  @property({ type: Number }) archivedTotal = 0;
  /** Messages per thread id, where known. */
  @property({ attribute: false }) counts: Readonly<Record<string, number>> = {};
  /** Threads whose count leaves out an import not yet readable (RoomThreads.importing). */
  @property({ attribute: false }) importing: Readonly<Record<string, boolean>> = {};
  /** The open thread. */
  @property() current = '';
  /** A new thread is being started. */
  @property({ type: Boolean }) pending = false;
  /** The answer to the last "new thread". */
  @property({ attribute: false }) status: CommandReply | null = null;
  /** On a phone, only the row of active threads shows: the room folds the rest away. */
  @property({ type: Boolean, reflect: true }) folded = false;
  @state() private adding = false;
  @state() private problem = '';
  /** Counts the times the form was opened: a creation's success closes only the form it was started from. */
  private formOpenings = 0;
  /** The opening of the form the last "Start" was pressed in. */
  private submittedIn = -1;
  @query('#new-title') private titleInput?: HTMLInputElement;
  @query('button.new') private newButton?: HTMLButtonElement;

  protected override updated(changed: PropertyValues<this>): void {
    // A thread was started: the form's work is done (a form closed and opened again meanwhile is a new one, not yet used).
    const started = changed.has('pending') && !this.pending && changed.get('pending') && this.status?.ok;
    if (started && this.adding && this.submittedIn === this.formOpenings) this.closeForm();
    // On a phone the threads are one scrolling row: the open one (just started, say) must be in sight.
    if (changed.has('current') || changed.has('threads')) {
      this.renderRoot.querySelector<HTMLElement>(`button.thread[aria-current='true']`)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
  }

  protected override render() {
    const active = this.threads.filter((t) => t.status === 'active');
    const archived = this.threads.filter((t) => t.status !== 'active');
    return html`<section aria-labelledby="threads-heading">
      <div class="top">
        <h2 id="threads-heading">Threads</h2>
        <button class="new" type="button" aria-expanded=${this.adding ? 'true' : 'false'} @click=${this.openForm}>New thread</button>
      </div>
      ${this.adding ? this.renderForm() : nothing}
      <ul aria-label="Threads of this room">
        ${repeat(
          active,
          (t) => t.id,
          (t) => this.renderThread(t),
        )}
      </ul>
      ${
        archived.length
          ? html`<details>
              <summary>Archived (${Math.max(this.archivedTotal, archived.length)})</summary>
              <ul aria-label="Archived threads">
                ${repeat(
                  archived,
                  (t) => t.id,
                  (t) => this.renderThread(t),
                )}
              </ul>
              ${this.archivedTotal > archived.length ? html`<p class="older">${olderText(this.archivedTotal - archived.length)}</p>` : nothing}
            </details>`
          : nothing
      }
      <p class="status ${this.status && !this.status.ok ? 'error' : ''}" role="status">${this.statusText()}</p>
    </section>`;
  }

  private renderThread(t: ThreadView) {
    const n = this.counts[t.id];
    const titleOf = (id: string) => this.threads.find((x) => x.id === id)?.title;
    return html`<li>
      <button
        class="thread"
        type="button"
        data-thread=${t.id}
        aria-current=${t.id === this.current ? 'true' : 'false'}
        @click=${() => this.emit('salon-select-thread', { threadId: t.id })}
      >
        <span class="title">${t.title}</span>
        ${threadBadges(t, titleOf).map((b) => html`<span class="badge" data-badge=${b.kind}>${b.label}</span>`)}
        ${n === undefined ? nothing : html`<span class="count" data-count=${n}>${countLabel(n, this.importing[t.id])}</span>`}
      </button>
    </li>`;
  }

  private renderForm() {
    return html`<form @submit=${this.onSubmit} @keydown=${this.onFormKey}>
      <label for="new-title">Title of the new thread</label>
      <input
        id="new-title"
        name="title"
        maxlength=${TITLE_MAX_CHARS}
        autocomplete="off"
        aria-invalid=${this.problem ? 'true' : 'false'}
        aria-describedby="new-problem"
        ?disabled=${this.pending}
      />
      <button class="primary" type="submit" ?disabled=${this.pending}>${this.pending ? 'Starting…' : 'Start'}</button>
      <button type="button" @click=${this.closeForm}>Cancel</button>
      <span id="new-problem" class="status error" role="alert">${this.problem}</span>
    </form>`;
  }

  private statusText(): string {
    const s = this.status;
    if (!s) return '';
    return s.ok ? s.text : `Could not start the thread: ${s.message}`;
  }

  private openForm = async () => {
    if (this.adding) {
      this.titleInput?.focus();
      return;
    }
    this.adding = true;
    this.formOpenings++;
    this.problem = '';
    await this.updateComplete;
    this.titleInput?.focus();
  };

  private closeForm = async () => {
    this.adding = false;
    this.problem = '';
    await this.updateComplete;
    this.newButton?.focus();
  };

  private onFormKey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    void this.closeForm();
  };

  private onSubmit(e: Event): void {
    e.preventDefault();
    const title = this.titleInput?.value ?? '';
    this.problem = titleProblem(title) ?? '';
    if (this.problem) return;
    this.submittedIn = this.formOpenings;
    this.emit('salon-new-thread', { title: title.trim() });
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

/** The line under the archived threads listed, for those left out. */
function olderText(n: number): string {
  return `… and ${n} older archived thread${n === 1 ? '' : 's'}, not listed`;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-thread-list': SalonThreadList;
  }
}
