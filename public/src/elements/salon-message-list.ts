/**
 * `<salon-message-list>`: the room's messages, oldest first, then answers still being written.
 * A polite live region announces new messages; it keeps to the bottom while the reader is there
 * and otherwise offers a "new messages" jump.
 *
 * Above the oldest message, a "Load earlier messages" button pages back through the room's
 * history; the reader's place stays put while older messages appear above it.
 *
 * A long list stays cheap: only a window of the newest messages is rendered (RENDER_WINDOW), and
 * older ones already held render as the reader scrolls up to them, or presses "Load earlier
 * messages" (which fetches only once every held one is rendered); back at the bottom the window
 * shrinks again. Each item skips layout and paint while
 * off screen (`content-visibility: auto`), and an item whose message did not change is not updated.
 *
 * The list shows one thread at a time (`view`); each thread keeps its own place, so switching
 * threads and back returns the reader to where they were.
 *
 * An answer's discussion source (`salon-show-messages` from its source list) scrolls to the first
 * message it cites and marks the cited ones for a moment; when they are older than what is shown,
 * earlier pages are loaded until they appear (or there are none left).
 *
 * @fires salon-load-older - the reader asked for the page before the oldest message shown.
 * @fires salon-retry - {clientId} (from a failed message) re-sent by the room.
 * @fires salon-discard - {clientId} (from a failed message) dropped by the room.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { Source } from '../../../src/protocol/messages.js';
import type { LogEntry } from '../lib/message-log.js';
import type { AnswerInProgress } from '../lib/room-controller.js';
import { baseStyles } from '../lib/styles.js';
import { SalonMessageItem } from './salon-message-item.js';

/** How long cited messages stay marked after a source is followed. */
const HIGHLIGHT_MS = 2_500;
/** Pages of history loaded at most while looking for a cited message. */
const SEEK_MAX_PAGES = 10;
/** Within this many pixels of the bottom counts as "reading the latest". */
const STICK_THRESHOLD_PX = 96;
/** Newest messages rendered while the reader is at the bottom. */
export const RENDER_WINDOW = 150;
/** Held messages rendered at once when the reader scrolls up to the oldest one rendered. */
const REVEAL_STEP = 100;
/** Within this many pixels of the top, held older messages are rendered. */
const REVEAL_THRESHOLD_PX = 600;
/** One empty list for every message without sources: a new `[]` per render would update every item. */
const NO_SOURCES: readonly Source[] = Object.freeze([]);
const ASSISTANT = { id: 'assistant', name: 'Salon AI', kind: 'assistant' as const };

@customElement('salon-message-list')
export class SalonMessageList extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        position: relative;
        min-height: 0;
      }
      .scroller {
        height: 100%;
        overflow-y: auto;
        overscroll-behavior: contain;
        padding: 0.75rem;
        display: flex;
        flex-direction: column;
        gap: 0.55rem;
      }
      .empty {
        margin: auto;
        text-align: center;
        color: var(--salon-muted);
        padding: 2rem 1rem;
      }
      .older {
        align-self: center;
      }
      salon-message-item {
        /* Off screen, an item costs no layout or paint; its last size is kept as its placeholder. */
        content-visibility: auto;
        contain-intrinsic-size: auto 4.5rem;
        /* Size-contained, an item's minimum height in the column would be 0: never shrink it. */
        flex: none;
      }
      salon-message-item[highlight] {
        outline: 2px solid var(--salon-accent, #2563eb);
        outline-offset: 2px;
        border-radius: 0.5rem;
      }
      .jump {
        position: absolute;
        left: 50%;
        bottom: 0.75rem;
        transform: translateX(-50%);
        box-shadow: 0 2px 8px rgb(0 0 0 / 0.15);
      }
    `,
  ];

  @property({ attribute: false }) entries: readonly LogEntry[] = [];
  @property({ attribute: false }) answers: readonly AnswerInProgress[] = [];
  /** The member's own user id, to mark their messages. */
  @property() youId = '';
  /** Older messages can be loaded. */
  @property({ type: Boolean }) hasOlder = false;
  /** A page of older messages is on its way. */
  @property({ type: Boolean }) loadingOlder = false;
  /** The thread shown: each keeps its own scroll position. */
  @property() view = '';
  /** A fused thread's introduction, marked as such. */
  @property() introId = '';
  @state() private unseen = false;
  @query('.scroller') private scroller!: HTMLElement;
  private stick = true;
  /** Distance from the bottom to keep while older messages are added above the reader. */
  private keepFromBottom: number | null = null;
  /** Messages a followed source cites that are not shown yet, and the pages still allowed to find them. */
  private seeking: { ids: string[]; pagesLeft: number } | null = null;
  /** Where the reader was in each thread shown before. */
  private readonly places = new Map<string, Place>();
  /** The place to go back to once the newly shown thread has rendered. */
  private restore: Place | null = null;
  /**
   * The oldest message rendered, while the reader is away from the bottom ('' at the bottom: the
   * newest RENDER_WINDOW render). Kept by key so new messages do not move what the reader sees.
   */
  @state() private windowStart = '';
  /** The entries rendered (from the window's start), computed before each render. */
  private shown: readonly LogEntry[] = [];
  /** Older messages are being put in above the reader: the live region should not read them out. */
  @state() private prepending = false;

  /** A message whose Retry or Discard was pressed: once it has re-rendered, the focus must not be left on nothing. */
  private acted: SalonMessageItem | null = null;

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('salon-show-messages', this.onShowMessages as EventListener);
    this.addEventListener('salon-retry', this.onEntryAction);
    this.addEventListener('salon-discard', this.onEntryAction);
  }

  override disconnectedCallback(): void {
    this.removeEventListener('salon-show-messages', this.onShowMessages as EventListener);
    this.removeEventListener('salon-retry', this.onEntryAction);
    this.removeEventListener('salon-discard', this.onEntryAction);
    super.disconnectedCallback();
  }

  private onEntryAction = (event: Event) => {
    // The item that fired it: at this host the event's target is the host itself.
    const item = event.composedPath()[0];
    if (item instanceof SalonMessageItem) this.acted = item;
  };

  /**
   * Retry and Discard remove the button pressed (the message is sending again, or gone): the focus
   * would fall to the page's body, and a keyboard or screen-reader user would start over from the
   * top. It goes to the list of messages instead.
   */
  private keepFocus(item: SalonMessageItem): void {
    void item.updateComplete.then(() => {
      if (!this.isConnected || this.shadowRoot?.activeElement || (item.isConnected && item.shadowRoot?.activeElement)) return;
      if (document.activeElement && document.activeElement !== document.body) return;
      this.scroller.focus({ preventScroll: true });
    });
  }

  private onShowMessages = (event: CustomEvent<{ messageIds: string[] }>) => {
    const ids = event.detail?.messageIds ?? [];
    if (!ids.length) return;
    event.stopPropagation();
    this.seeking = { ids, pagesLeft: SEEK_MAX_PAGES };
    this.seek();
  };

  /** Shows the sought messages when they are loaded (rendering them if need be); otherwise asks for the page before the oldest. */
  private seek(): void {
    const sought = this.seeking;
    if (!sought) return;
    const held = sought.ids.map((id) => this.entries.findIndex((e) => e.message.id === id)).filter((i) => i >= 0);
    const oldest = held.length ? Math.min(...held) : -1;
    if (oldest >= 0 && oldest < this.entries.length - this.shown.length) {
      // Held but above the window: render from there, then look again.
      this.stick = false;
      this.windowStart = this.entries[oldest].key;
      return;
    }
    const items = sought.ids
      .map((id) => this.renderRoot.querySelector<HTMLElement>(`salon-message-item[data-id="${CSS.escape(id)}"]`))
      .filter((e) => e !== null);
    if (items.length) {
      this.seeking = null;
      this.stick = false;
      items[0].scrollIntoView({ block: 'center' });
      for (const item of items) item.setAttribute('highlight', '');
      setTimeout(() => items.forEach((item) => item.removeAttribute('highlight')), HIGHLIGHT_MS);
      return;
    }
    if (!this.hasOlder || sought.pagesLeft <= 0) {
      this.seeking = null;
      return;
    }
    if (this.loadingOlder) return;
    sought.pagesLeft--;
    this.loadOlder();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('view') && this.scroller) {
      this.places.set(changed.get('view') ?? '', { top: this.scroller.scrollTop, stick: this.stick, start: this.windowStart });
      this.restore = this.places.get(this.view) ?? { top: 0, stick: true, start: '' };
      this.windowStart = this.restore.start;
      this.shown = this.windowOf(this.entries);
      this.keepFromBottom = null;
      this.seeking = null;
      this.unseen = false;
      return;
    }
    const before = this.shown;
    const oldEntries = changed.get('entries') as readonly LogEntry[] | undefined;
    // Everything held was rendered and a page of older messages came in: it renders too.
    if (oldEntries && before.length && before[0] === oldEntries[0] && this.entries[0]?.key !== oldEntries[0]?.key && !this.stick) {
      this.windowStart = this.entries[0]?.key ?? '';
    }
    this.shown = this.windowOf(this.entries);
    const firstOld = before[0]?.key;
    if (firstOld && this.shown[0]?.key !== firstOld && this.scroller && !this.stick) {
      this.keepFromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
      this.prepending = true;
    }
    // The member's own new message always brings the view to the bottom.
    const lastOld = (changed.get('entries') as readonly LogEntry[] | undefined)?.at(-1)?.key;
    const last = this.entries.at(-1);
    if (last && last.key !== lastOld && last.state === 'sending') this.stick = true;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (this.acted) {
      this.keepFocus(this.acted);
      this.acted = null;
    }
    if (this.seeking && (changed.has('entries') || changed.has('loadingOlder') || (changed as Map<PropertyKey, unknown>).has('windowStart')))
      queueMicrotask(() => this.seek());
    if (this.restore) {
      const place = this.restore;
      this.restore = null;
      this.stick = place.stick;
      // Items render after this list does; set the place again once they have.
      const apply = () => (place.stick ? this.toBottom() : (this.scroller.scrollTop = place.top));
      apply();
      requestAnimationFrame(apply);
      return;
    }
    if (!changed.has('entries') && !changed.has('answers') && !(changed as Map<PropertyKey, unknown>).has('windowStart')) return;
    if (this.keepFromBottom !== null) {
      // Older messages came in above: the reader stays on what they were reading.
      const keep = this.keepFromBottom;
      this.keepFromBottom = null;
      this.scroller.scrollTop = this.scroller.scrollHeight - keep;
      requestAnimationFrame(() => {
        this.scroller.scrollTop = this.scroller.scrollHeight - keep;
        this.prepending = false;
      });
      return;
    }
    if (this.stick) {
      // Items render after this list does; scroll again once they have.
      this.toBottom();
      requestAnimationFrame(() => this.stick && this.toBottom());
    } else if (!this.unseen) {
      this.unseen = true;
    }
  }

  protected override render() {
    const empty = this.entries.length === 0 && this.answers.length === 0;
    const hidden = this.entries.length - this.shown.length;
    return html`<div
        class="scroller"
        role="log"
        aria-live="polite"
        aria-relevant="additions"
        aria-busy=${this.prepending || this.loadingOlder ? 'true' : 'false'}
        aria-label="Messages"
        tabindex="0"
        @scroll=${this.onScroll}
      >
        ${
          hidden > 0 || this.hasOlder
            ? html`<button
                class="older"
                type="button"
                data-held=${hidden}
                ?disabled=${!hidden && this.loadingOlder}
                @click=${hidden ? this.reveal : this.loadOlder}
              >
                ${!hidden && this.loadingOlder ? 'Loading earlier messages…' : 'Load earlier messages'}
              </button>`
            : nothing
        }
        ${empty ? html`<p class="empty">No messages yet. Say hello, or ask the AI about this item.</p>` : nothing}
        ${repeat(
          this.shown,
          (e) => e.key,
          (e) =>
            html`<salon-message-item
              data-key=${e.key}
              data-id=${e.message.id}
              data-seq=${e.message.seq}
              .author=${e.message.author}
              .text=${e.message.text}
              .ts=${e.message.ts}
              .kind=${e.message.author.kind}
              .state=${e.state}
              .error=${e.error ?? ''}
              .clientId=${e.message.clientId ?? ''}
              .sources=${e.message.sources ?? NO_SOURCES}
              ?only-you=${!!e.private || e.message.id.startsWith('private_')}
              ?unanswered=${!!e.unanswered}
              .retryable=${!e.final}
              ?intro=${!!this.introId && e.message.id === this.introId}
              ?mine=${e.message.author.kind === 'user' && (e.state !== 'sent' || (!!this.youId && e.message.author.id === this.youId))}
            ></salon-message-item>`,
        )}
        ${repeat(
          this.answers,
          (a) => `answer:${a.id}`,
          (a) =>
            html`<salon-message-item
              data-answer=${a.id}
              .author=${ASSISTANT}
              .text=${a.text}
              .kind=${'assistant'}
              .state=${'streaming'}
              .stage=${a.stage}
            ></salon-message-item>`,
        )}
      </div>
      ${this.unseen ? html`<button class="jump primary" type="button" @click=${this.jumpToLatest}>New messages ↓</button>` : nothing}`;
  }

  private toBottom(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.unseen = false;
  }

  /** The entries from the window's start: the newest RENDER_WINDOW when the reader is at the bottom. */
  private windowOf(entries: readonly LogEntry[]): readonly LogEntry[] {
    const at = this.windowStart ? entries.findIndex((e) => e.key === this.windowStart) : -1;
    if (at >= 0) return at === 0 ? entries : entries.slice(at);
    // At the bottom, or the window's first message is gone (trimmed, discarded): the newest.
    return entries.length > RENDER_WINDOW ? entries.slice(-RENDER_WINDOW) : entries;
  }

  /** Renders up to REVEAL_STEP more of the held messages above the oldest one rendered. */
  private reveal = () => {
    const at = this.entries.length - this.shown.length;
    if (at <= 0) return;
    this.stick = false;
    this.windowStart = this.entries[Math.max(0, at - REVEAL_STEP)].key;
  };

  /** Follows the reader: near the bottom means "keep me on the latest"; near the top, older held messages render. */
  private onScroll = () => {
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    this.stick = scrollHeight - scrollTop - clientHeight < STICK_THRESHOLD_PX;
    if (this.stick) {
      this.unseen = false;
      // Back at the latest: the window shrinks to the newest again (what it drops is above the reader).
      if (this.windowStart) this.windowStart = '';
      return;
    }
    // Away from the bottom, the window keeps its first message while new ones arrive below.
    if (!this.windowStart && this.shown.length) this.windowStart = this.shown[0].key;
    if (scrollTop < REVEAL_THRESHOLD_PX && this.shown.length < this.entries.length && !this.prepending) this.reveal();
  };

  private loadOlder = () => {
    this.stick = false;
    this.dispatchEvent(new CustomEvent('salon-load-older', { bubbles: true, composed: true }));
  };

  private jumpToLatest = () => {
    this.stick = true;
    this.windowStart = '';
    this.toBottom();
    this.scroller.focus();
  };
}

/** Where the reader was in a thread: scrolled to `top`, or at the bottom, and the window's first message. */
interface Place {
  top: number;
  stick: boolean;
  start: string;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-message-list': SalonMessageList;
  }
}
