/**
 * `<salon-thread-header>`: the open thread above its messages — title, badges, message count, a
 * "Split this thread…" action, what a fused thread is, whether its memory is off, and the merges
 * the server suggests for it (shown as suggestions: nothing merges until the member confirms).
 *
 * @fires salon-open-split - {threadId} the member wants to split the open thread.
 * @fires salon-merge - {survivorId, absorbedId} the member confirmed a suggested merge.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { CommandReply } from '../lib/command-replies.js';
import { countLabel } from '../lib/room-threads.js';
import { badgeStyles, baseStyles } from '../lib/styles.js';
import { memoryOff, threadBadges, type MergeSuggestion, type ThreadView } from '../lib/threads-api.js';

const suggestionKey = (s: MergeSuggestion) => `${s.survivorId}>${s.absorbedId}`;

@customElement('salon-thread-header')
export class SalonThreadHeader extends LitElement {
  static override styles = [
    baseStyles,
    badgeStyles,
    css`
      :host {
        display: block;
        padding: 0.45rem 0.75rem;
        border-bottom: 1px solid var(--salon-border);
        font-size: 0.9rem;
      }
      .bar {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.25rem 0.5rem;
      }
      h2 {
        font-size: 0.95rem;
        margin: 0;
        overflow-wrap: anywhere;
      }
      .count {
        color: var(--salon-muted);
        font-size: 0.8rem;
      }
      button {
        min-height: 1.9rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      .split {
        margin-left: auto;
      }
      .fused,
      .memory-off {
        margin: 0.35rem 0 0;
        color: var(--salon-muted);
      }
      .suggestions {
        overflow-wrap: anywhere;
        margin-top: 0.4rem;
        padding: 0.4rem 0.6rem;
        border: 1px dashed var(--salon-border-strong);
        border-radius: 10px;
      }
      h3 {
        font-size: 0.85rem;
        margin: 0 0 0.25rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
        display: flex;
        flex-direction: column;
        gap: 0.3rem;
      }
      li {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.3rem 0.5rem;
      }
      .status {
        margin: 0.3rem 0 0;
      }
      .status:empty {
        display: none;
      }
      .status.error {
        color: var(--salon-danger);
      }
    `,
  ];

  @property({ attribute: false }) thread: ThreadView | null = null;
  /** All threads of the room, to name the other side of a suggestion. */
  @property({ attribute: false }) threads: readonly ThreadView[] = [];
  @property({ type: Number }) count: number | undefined = undefined;
  /** The count leaves out an import not yet readable (RoomThreads.importing). */
  @property({ type: Boolean }) importing = false;
  @property({ attribute: false }) suggestions: readonly MergeSuggestion[] = [];
  /** A merge is on its way. */
  @property({ type: Boolean }) pending = false;
  /** The answer to the last merge. */
  @property({ attribute: false }) status: CommandReply | null = null;
  /** The suggestion waiting for the member's confirmation. */
  @state() private confirming = '';

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('thread') && (changed.get('thread') as ThreadView | null)?.id !== this.thread?.id) this.confirming = '';
    // The merge went through: nothing is left to confirm.
    if (changed.has('pending') && !this.pending && this.status?.ok) this.confirming = '';
  }

  protected override render() {
    const t = this.thread;
    if (!t) return nothing;
    return html`<div class="bar">
        <h2><span class="visually-hidden">Thread: </span>${t.title}</h2>
        ${threadBadges(t, this.titleOf).map((b) => html`<span class="badge" data-badge=${b.kind}>${b.label}</span>`)}
        ${this.count === undefined ? nothing : html`<span class="count">${countLabel(this.count, this.importing)}</span>`}
        ${
          t.status === 'active' && !t.isMerged
            ? html`<button class="split" type="button" @click=${() => this.emit('salon-open-split', { threadId: t.id })}>Split this thread…</button>`
            : nothing
        }
      </div>
      ${
        t.isMerged
          ? html`<p class="fused" data-fused-note>
              A fused thread: it copies no messages; its memory joins both discussions, and the assistant answers here from what was said in either. Its
              introduction comes first.
            </p>`
          : nothing
      }
      ${
        memoryOff(t)
          ? html`<p class="memory-off" data-memory-off>
              Memory is off in this thread: the assistant does not search or cite what was discussed here before (the recent chat still counts).
              <code>/memory on</code> turns it back on.
            </p>`
          : nothing
      }
      ${this.renderSuggestions()}
      <p class="status ${this.status && !this.status.ok ? 'error' : ''}" role="status">${this.statusText()}</p>`;
  }

  private renderSuggestions() {
    if (!this.suggestions.length) return nothing;
    return html`<section class="suggestions" aria-labelledby="suggestions-heading">
      <h3 id="suggestions-heading">Suggested merges</h3>
      <ul>
        ${repeat(this.suggestions, suggestionKey, (s) => this.renderSuggestion(s))}
      </ul>
    </section>`;
  }

  private renderSuggestion(s: MergeSuggestion) {
    const survivor = this.titleOf(s.survivorId) ?? 'another thread';
    const absorbed = this.titleOf(s.absorbedId) ?? 'another thread';
    const key = suggestionKey(s);
    const alike = `${Math.round(s.weight * 100)} % alike`;
    if (this.confirming === key) {
      return html`<li data-suggestion=${key} @keydown=${this.onConfirmKey}>
        <span>Merge “${absorbed}” into “${survivor}”? “${absorbed}” will be archived and its messages join “${survivor}”.</span>
        <button class="primary confirm" type="button" ?disabled=${this.pending} @click=${() => this.merge(s)}>${this.pending ? 'Merging…' : 'Merge'}</button>
        <button type="button" @click=${this.cancel}>Cancel</button>
      </li>`;
    }
    return html`<li data-suggestion=${key}>
      <span>Suggestion: “${absorbed}” and “${survivor}” discuss the same thing (${alike}).</span>
      <button type="button" @click=${() => this.confirm(key)}>Merge “${absorbed}” into “${survivor}”…</button>
    </li>`;
  }

  private titleOf = (id: string) => this.threads.find((t) => t.id === id)?.title;

  private statusText(): string {
    const s = this.status;
    if (!s) return '';
    return s.ok ? s.text : `Could not merge: ${s.message}`;
  }

  private async confirm(key: string): Promise<void> {
    this.confirming = key;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>('button.confirm')?.focus();
  }

  private cancel = async () => {
    const key = this.confirming;
    this.confirming = '';
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLButtonElement>(`li[data-suggestion="${CSS.escape(key)}"] button`)?.focus();
  };

  private onConfirmKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') void this.cancel();
  };

  private merge(s: MergeSuggestion): void {
    this.emit('salon-merge', { survivorId: s.survivorId, absorbedId: s.absorbedId });
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-thread-header': SalonThreadHeader;
  }
}
