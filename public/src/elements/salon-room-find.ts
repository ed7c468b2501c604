/**
 * `<salon-room-find>`: "Find in this room", a find bar over every message the page holds for the
 * open thread (the list renders only a window of them, so the browser's find-in-page misses the
 * rest) and, on demand, older pages of its history.
 *
 * Typing finds at once and shows the newest match; Enter (or ↑) goes to the next older match,
 * Shift+Enter (or ↓) to the next newer one, wrapping; "Next" past the oldest match held, and
 * "Search earlier messages", fetch older pages (up to FIND_MAX_PAGES) until one holds a match.
 * Escape or × closes it. The count shows "n of m" (messages, newest first); a status region tells
 * screen readers the count, and the match's author, time and words around it.
 *
 * @fires salon-find-show - {key, query}: show this entry as the current match ('' clears it).
 * @fires salon-find-close - the member closed the bar.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { MAX_SCROLLBACK_ENTRIES, type LogEntry } from '../lib/message-log.js';
import { formatTime, plural } from '../lib/format.js';
import { MAX_FIND_CHARS, RoomFind, type FindSource } from '../lib/room-find.js';
import { baseStyles } from '../lib/styles.js';

/** The status waits this long after the last key before it is read out (each key would interrupt it). */
const ANNOUNCE_DELAY_MS = 600;
/** Characters of the match's message read out around the words found. */
const EXCERPT_CHARS = 90;
const SEARCHING = 'Searching earlier messages…';
const NO_SOURCE: FindSource = { messages: [], hasOlder: false, loadOlder: async () => {} };

@customElement('salon-room-find')
export class SalonRoomFind extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        padding: 0.4rem 0.6rem;
        border-bottom: 1px solid var(--salon-border);
      }
      :host(:not([open])) {
        display: none;
      }
      .bar {
        display: flex;
        align-items: center;
        gap: 0.3rem;
        min-width: 0;
      }
      input {
        flex: 1;
        min-width: 0;
        font: inherit;
        padding: 0.3rem 0.6rem;
        min-height: 2.25rem;
        border: 1px solid var(--salon-border-strong);
        border-radius: 8px;
        background: var(--salon-surface);
        color: var(--salon-fg);
      }
      .count {
        flex: none;
        font-size: 0.85rem;
        color: var(--salon-muted);
        white-space: nowrap;
        font-variant-numeric: tabular-nums;
      }
      .bar button {
        flex: none;
        padding: 0;
        width: 2.25rem;
        justify-content: center;
      }
      .more {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.2rem 0.6rem;
        margin-top: 0.3rem;
        font-size: 0.85rem;
      }
      .more button {
        min-height: 2rem;
        padding: 0.1rem 0.7rem;
        font-size: 0.85rem;
      }
      @media (max-width: 720px) {
        :host {
          padding: 0.3rem 0.4rem;
        }
      }
    `,
  ];

  /** The open thread's messages (the list's entries). */
  @property({ attribute: false }) entries: readonly LogEntry[] = [];
  /** Where older pages come from (the room's ThreadNavigator). */
  @property({ attribute: false }) source: FindSource = NO_SOURCE;
  /** The room has more than one thread: the bar says it looks through the open one. */
  @property({ type: Boolean }) threaded = false;
  /** Shown; closed, it keeps its words for the next opening (as the browser's find does) and looks for nothing. */
  @property({ type: Boolean, reflect: true }) open = false;

  @state() private value = '';
  @state() private searching = false;
  /** What the status region says (read out by screen readers). */
  @state() private announcement = '';
  /** Said under the bar after a search of earlier pages, until the query or the match changes. */
  @state() private earlierNote = '';
  /** The thread the note on earlier messages is about: another thread opened, it says nothing true. */
  private noteThread: string | undefined;
  @query('input') private input!: HTMLInputElement;
  private readonly finder = new RoomFind();
  private announceTimer: ReturnType<typeof setTimeout> | undefined;

  /** Focuses the box with its words selected, as the browser's own find does when opened again. */
  override focus(): void {
    void this.updateComplete.then(() => {
      this.input?.focus();
      this.input?.select();
    });
  }

  override disconnectedCallback(): void {
    clearTimeout(this.announceTimer);
    this.finder.cancel();
    super.disconnectedCallback();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Closed, the bar looks for nothing: a search of earlier pages under way fetches no more, and a
    // count still waiting for typing to pause is not read out (the room closes it without `close`).
    if (changed.has('open') && !this.open) {
      this.finder.cancel();
      clearTimeout(this.announceTimer);
      this.announcement = '';
    }
    if (this.open && (changed.has('entries') || changed.has('open'))) this.finder.update(this.entries);
    if (this.source.threadId !== this.noteThread) {
      this.noteThread = this.source.threadId;
      if (this.announcement === this.earlierNote) this.announcement = '';
      this.earlierNote = '';
    }
  }

  protected override render() {
    const f = this.finder;
    const where = this.threaded ? 'this thread' : 'this room';
    const total = f.matches.length;
    const count = !f.query.trim() ? '' : total === 0 ? 'No matches' : f.position ? `${f.position} of ${total}` : plural(total, 'match', 'matches');
    const canOlder = !!f.query.trim() && this.source.hasOlder;
    return html`<div class="bar">
        <label class="visually-hidden" for="find-box">Find in ${where}</label>
        <input
          id="find-box"
          type="search"
          placeholder="Find in ${where}"
          autocomplete="off"
          spellcheck="false"
          enterkeyhint="search"
          maxlength=${MAX_FIND_CHARS}
          aria-describedby="find-count"
          aria-keyshortcuts="Control+Shift+F"
          .value=${this.value}
          @input=${this.onInput}
          @keydown=${this.onKey}
        />
        <span class="count" id="find-count" data-count=${count}>${count}</span>
        <button type="button" aria-label="Next match (older)" title="Next match, older (Enter)" ?disabled=${!total && !canOlder} @click=${() => this.step(1)}>
          <span aria-hidden="true">↑</span>
        </button>
        <button type="button" aria-label="Previous match (newer)" title="Previous match, newer (Shift+Enter)" ?disabled=${!total} @click=${() => this.step(-1)}>
          <span aria-hidden="true">↓</span>
        </button>
        <button type="button" aria-label="Close find" title="Close (Escape)" @click=${this.close}><span aria-hidden="true">✕</span></button>
      </div>
      ${
        canOlder || this.earlierNote
          ? html`<div class="more">
              ${this.earlierNote ? html`<span class="muted" data-earlier-note>${this.earlierNote}</span>` : nothing}
              ${
                canOlder
                  ? html`<button type="button" data-find-earlier ?disabled=${this.searching} @click=${() => void this.searchEarlier()}>
                      ${this.searching ? SEARCHING : 'Search earlier messages'}
                    </button>`
                  : nothing
              }
            </div>`
          : nothing
      }
      <p class="visually-hidden" role="status" data-find-status>${this.announcement}</p>`;
  }

  private onInput = (e: Event) => {
    this.value = (e.target as HTMLInputElement).value;
    this.earlierNote = '';
    const key = this.finder.search(this.value, this.entries);
    this.show(key);
    clearTimeout(this.announceTimer);
    this.announceTimer = setTimeout(() => this.announce(), ANNOUNCE_DELAY_MS);
  };

  private onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault();
      this.step(e.shiftKey ? -1 : 1);
    } else if (e.key === 'Escape') {
      // Not the search box's own Escape (which empties it): the bar closes, as the browser's does.
      e.preventDefault();
      this.close();
    }
  };

  /** Goes to the next older (`1`) or newer (`-1`) match; past the oldest held one, looks through earlier pages first. */
  private step(direction: 1 | -1): void {
    const f = this.finder;
    if (!f.query.trim() || this.searching) return;
    if (direction === 1 && (f.atOldest || !f.matches.length) && this.source.hasOlder) {
      void this.searchEarlier();
      return;
    }
    this.earlierNote = '';
    this.show(f.step(direction));
    this.announce();
  }

  /** Fetches older pages until one holds a match (see RoomFind.searchEarlier), and shows it. */
  private async searchEarlier(): Promise<void> {
    if (this.searching) return;
    this.searching = true;
    this.announcement = SEARCHING;
    const query = this.finder.query;
    try {
      const { found, added, superseded } = await this.finder.searchEarlier(this.source);
      // Closed meanwhile, the bar looks for nothing: a match it showed now would be outlined and
      // highlighted, and the list moved to it, with no bar left to say why or to clear it. New words
      // or another thread: the search was for what the member left, and says nothing of what is shown.
      if (superseded || !this.isConnected || !this.open || this.finder.query !== query) {
        // Not left saying it is still searching: new words say their own count once typing pauses.
        if (this.announcement === SEARCHING) this.announcement = '';
        return;
      }
      if (found) {
        this.earlierNote = '';
        this.show(this.finder.currentKey);
        this.announce();
        return;
      }
      const more = added ? `No earlier matches in ${plural(added, 'more message', 'more messages')}.` : 'No earlier matches.';
      this.earlierNote = this.source.full
        ? `${more} This page keeps at most ${MAX_SCROLLBACK_ENTRIES.toLocaleString('en')} messages, so it looks no further back.`
        : this.source.hasOlder
          ? `${more} There are older ones still.`
          : `${more} That is the start of this thread.`;
      this.announcement = this.earlierNote;
    } finally {
      this.searching = false;
    }
  }

  /** Tells the room which entry to show as the current match. */
  private show(key: string): void {
    this.requestUpdate();
    this.dispatchEvent(new CustomEvent('salon-find-show', { detail: { key, query: this.finder.query }, bubbles: true, composed: true }));
  }

  /** Puts the count, and the current match's author, time and words, in the status region. */
  private announce(): void {
    clearTimeout(this.announceTimer);
    const f = this.finder;
    const total = f.matches.length;
    if (!f.query.trim()) {
      this.announcement = '';
      return;
    }
    if (!total) {
      const held = plural(this.entries.length, 'message', 'messages');
      this.announcement = this.source.hasOlder ? `No matches in the ${held} loaded. Search earlier messages to look further back.` : 'No matches.';
      return;
    }
    const entry = this.entries.find((e) => e.key === f.currentKey);
    if (!entry) {
      this.announcement = plural(total, 'message matches', 'messages match');
      return;
    }
    const time = formatTime(entry.message.ts);
    this.announcement = `${f.position} of ${total}: ${entry.message.author.name}${time ? `, ${time}` : ''}: ${excerpt(entry.message.text, f.query)}`;
  }

  private close = () => {
    clearTimeout(this.announceTimer);
    this.dispatchEvent(new CustomEvent('salon-find-close', { bubbles: true, composed: true }));
  };
}

/** The words around the first place `query` occurs in `text` (plain string slicing: shown as text). */
function excerpt(text: string, query: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= EXCERPT_CHARS) return flat;
  const at = Math.max(0, flat.toLowerCase().indexOf(query.trim().toLowerCase()));
  const from = Math.max(0, Math.min(at - Math.floor(EXCERPT_CHARS / 3), flat.length - EXCERPT_CHARS));
  return `${from > 0 ? '…' : ''}${flat.slice(from, from + EXCERPT_CHARS)}${from + EXCERPT_CHARS < flat.length ? '…' : ''}`;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-room-find': SalonRoomFind;
  }
}
