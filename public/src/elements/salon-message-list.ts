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
 * The room's find bar (`showFound`) brings a match into view: when it is outside the window, the
 * window moves to a stretch of messages around it (its end no longer the newest until the reader
 * scrolls down to it, presses "Show later messages" or goes back to the latest), so even the oldest
 * held message costs no more items than the newest do. The match is outlined and the words found
 * in it highlighted (lib/find-highlight.ts).
 *
 * An answer's discussion source (`salon-show-messages` from its source list) scrolls to the first
 * message it cites and marks the cited ones for a moment; when they are older than what is held,
 * earlier pages are loaded until they appear (or there are none left). Outside the window, the
 * window moves to a stretch around the first cited message, as for a found one.
 *
 * "New messages ↓" shows when messages arrived below what the reader sees (scrolling up alone does
 * not show it); "Latest messages ↓" when the window ends before the newest. Many arriving at once
 * below a reader up the list (a reconnect's catch-up) render REVEAL_STEP at a time.
 *
 * @fires salon-load-older - the reader asked for the page before the oldest message shown.
 * @fires salon-retry - {clientId} (from a failed message) re-sent by the room.
 * @fires salon-discard - {clientId} (from a failed message) dropped by the room.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { RoomKind, Source } from '../../../src/protocol/messages.js';
import type { LogEntry } from '../lib/message-log.js';
import type { AnswerInProgress } from '../lib/room-controller.js';
import { AnswerNews } from '../lib/answer-news.js';
import { clearFoundHighlight, highlightFound } from '../lib/find-highlight.js';
import { windowRange } from '../lib/render-window.js';
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
/** Within this many pixels of the top (or of the bottom, when the window ends early), held messages are rendered. */
const REVEAL_THRESHOLD_PX = 600;
/** Messages rendered above a found message brought into view from outside the window. */
const FOUND_CONTEXT = 50;
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
      .older,
      .later {
        align-self: center;
      }
      /* The window ends early: "Show later messages" must scroll clear of the "Latest messages" button over it. */
      .scroller.cut {
        padding-bottom: 3.5rem;
      }
      salon-message-item {
        /* Off screen, an item costs no layout or paint; its last size is kept as its placeholder. */
        content-visibility: auto;
        contain-intrinsic-size: auto 4.5rem;
        /* Size-contained, an item's minimum height in the column would be 0: never shrink it. */
        flex: none;
      }
      salon-message-item[found] {
        outline: 3px solid var(--salon-accent-strong, #8f341e);
        outline-offset: 2px;
        border-radius: 0.5rem;
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
        white-space: nowrap;
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
  /** The room's kind ('' before its welcome): what the empty list suggests asking the AI about. */
  @property() roomKind: RoomKind | '' = '';
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
  /**
   * The newest message rendered when the window ends before the newest held one ('' otherwise): a
   * found message far back is shown with the messages around it, not with everything after it.
   */
  @state() private windowEnd = '';
  /** The entries rendered (from the window's start), computed before each render. */
  private shown: readonly LogEntry[] = [];
  /** How many held entries come before the rendered ones. */
  private shownFrom = 0;
  /** The find bar's current match (its key) and the words looked for; '' when there is none. */
  @state() private foundKey = '';
  private foundQuery = '';
  /** The found message is still to be brought into the window (its entry may not have come in yet). */
  private foundPending = false;
  /** The found message was brought into the window: scroll to it once rendered. */
  private foundScroll = false;
  /** Held messages are being rendered below the window's end (see `prepending`). */
  private appending = false;
  /** Older messages are being put in above the reader: the live region should not read them out. */
  @state() private prepending = false;
  /**
   * The reader asked this list for the page before the oldest message ("Load earlier messages"):
   * when everything held was rendered, that page renders too. A page fetched for the find bar or a
   * followed source does not grow the window (they move it to what they bring into view).
   */
  private growOnPage = false;
  /** The window moved to a followed source's message: nothing to keep in place, the items put in are not news. */
  private jumped = false;
  /** Messages (or an answer being written) arrived after the newest held one in this update. */
  private arrived = false;
  /** Which answers being written were shown before: one shown again is not news. */
  private readonly answerNews = new AnswerNews();

  /** A message whose Retry or Discard was pressed: once it has re-rendered, the focus must not be left on nothing. */
  private acted: SalonMessageItem | null = null;
  /** The items a followed source marked, and the timer that unmarks them. */
  private highlighted: HTMLElement[] = [];
  private highlightTimer: ReturnType<typeof setTimeout> | undefined;
  /** Animation frames asked for and not run yet: cancelled when the list is removed. */
  private readonly frames = new Set<number>();

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
    if (this.foundKey) clearFoundHighlight();
    this.unmarkCited();
    for (const frame of this.frames) cancelAnimationFrame(frame);
    this.frames.clear();
    this.seeking = null;
    // A frame cancelled would have ended it: put back, the list must not stay busy.
    this.prepending = false;
    super.disconnectedCallback();
  }

  /** Runs `step` at the next frame, unless the list is removed before. */
  private nextFrame(step: () => void): void {
    const frame = requestAnimationFrame(() => {
      this.frames.delete(frame);
      step();
    });
    this.frames.add(frame);
  }

  /** Marks `items` as a followed source's for HIGHLIGHT_MS; the ones an earlier source marked are unmarked now (their timer would cut this mark short). */
  private markCited(items: HTMLElement[]): void {
    this.unmarkCited();
    for (const item of items) item.setAttribute('highlight', '');
    this.highlighted = items;
    this.highlightTimer = setTimeout(() => this.unmarkCited(), HIGHLIGHT_MS);
  }

  private unmarkCited(): void {
    clearTimeout(this.highlightTimer);
    this.highlightTimer = undefined;
    for (const item of this.highlighted) item.removeAttribute('highlight');
    this.highlighted = [];
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
    if (oldest >= 0 && (oldest < this.shownFrom || oldest >= this.shownFrom + this.shown.length)) {
      // Held but outside the window: render a stretch around it, then look again.
      this.stick = false;
      this.jumped = true;
      this.moveWindowTo(oldest);
      return;
    }
    const items = sought.ids
      .map((id) => this.renderRoot.querySelector<HTMLElement>(`salon-message-item[data-id="${CSS.escape(id)}"]`))
      .filter((e) => e !== null);
    if (items.length) {
      this.seeking = null;
      this.stick = false;
      items[0].scrollIntoView({ block: 'center' });
      this.markCited(items);
      // Items render after this list does, and the ones above take their real height: centre again then.
      this.nextFrame(() => {
        if (items[0].isConnected) items[0].scrollIntoView({ block: 'center' });
        this.prepending = false;
      });
      return;
    }
    if (!this.hasOlder || sought.pagesLeft <= 0) {
      this.seeking = null;
      this.prepending = false;
      return;
    }
    if (this.loadingOlder) return;
    sought.pagesLeft--;
    this.stick = false;
    this.requestOlder();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Noted even when the thread shown changes: an answer shown then is not news when it next changes.
    const answerStarted = changed.has('answers') && this.answerNews.note(this.answers, changed.get('answers') === undefined);
    if (changed.has('view') && this.scroller) {
      this.places.set(changed.get('view') ?? '', { top: this.scroller.scrollTop, stick: this.stick, start: this.windowStart, end: this.windowEnd });
      this.restore = this.places.get(this.view) ?? { top: 0, stick: true, start: '', end: '' };
      this.windowStart = this.restore.start;
      this.windowEnd = this.restore.end;
      this.shown = this.windowOf(this.entries);
      this.keepFromBottom = null;
      this.seeking = null;
      this.jumped = false;
      // The page the reader asked for in the thread left must not grow this one's window when one of its pages comes in.
      this.growOnPage = false;
      if (this.foundKey) clearFoundHighlight();
      this.foundKey = '';
      this.foundPending = false;
      this.unseen = false;
      return;
    }
    const before = this.shown;
    const oldEntries = changed.get('entries') as readonly LogEntry[] | undefined;
    // Everything held was rendered and the page of older messages the reader asked for came in: it renders too.
    if (
      this.growOnPage &&
      oldEntries &&
      before.length &&
      before[0] === oldEntries[0] &&
      this.entries[0]?.key !== oldEntries[0]?.key &&
      !this.stick &&
      !this.seeking
    ) {
      this.windowStart = this.entries[0]?.key ?? '';
    }
    if (changed.has('loadingOlder') && !this.loadingOlder) this.growOnPage = false;
    this.arrived = (!!oldEntries && arrivedBelow(oldEntries, this.entries)) || answerStarted;
    // The member's own new message always brings the view to the bottom.
    const last = this.entries.at(-1);
    if (last && last.key !== oldEntries?.at(-1)?.key && last.state === 'sending') {
      this.stick = true;
      this.windowEnd = '';
      // A cited message still being paged back to must not pull the view up once it comes in.
      this.seeking = null;
    }
    if (this.arrived) this.limitArrivals(before);
    this.shown = this.windowOf(this.entries);
    if (this.foundPending) this.bringFound();
    const firstOld = before[0]?.key;
    if (this.jumped) {
      // Moved to a followed source's message: scrolled to by `seek` once rendered.
      this.jumped = false;
      this.keepFromBottom = null;
      if (this.shown[0]?.key !== firstOld || this.shown.at(-1)?.key !== before.at(-1)?.key) this.prepending = true;
    } else if (this.foundScroll) {
      // Moved to a found message: nothing to keep in place, and the items put in are not news.
      if (this.shown[0]?.key !== firstOld) this.prepending = true;
    } else if (firstOld && this.shown[0]?.key !== firstOld && this.scroller && !this.stick) {
      this.keepFromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
      this.prepending = true;
    }
  }

  /**
   * Many messages at once below a reader who is up the list (a reconnect's catch-up brings up to
   * 500): REVEAL_STEP of them render, the rest wait below the window's end ("Show later messages",
   * scrolling down, "New messages ↓") rather than all rendering in one go.
   */
  private limitArrivals(before: readonly LogEntry[]): void {
    if (this.stick || !this.windowStart || this.windowEnd || !before.length) return;
    const at = this.entries.findIndex((e) => e.key === before.at(-1)!.key);
    if (at >= 0 && this.entries.length - 1 - at > REVEAL_STEP) this.windowEnd = this.entries[at + REVEAL_STEP].key;
  }

  /**
   * Shows the find bar's current match (the entry keyed `key`): brings it into the rendered window,
   * scrolls it to the middle of the list, outlines it and highlights `query`'s words in it. An
   * empty key clears the mark.
   */
  showFound(key: string, query = ''): void {
    // The reader moved on to a match: a followed source's page coming in later must not move the view off it.
    if (key) this.seeking = null;
    this.foundKey = key;
    this.foundQuery = query;
    this.foundPending = !!key;
    if (!key) clearFoundHighlight();
    this.requestUpdate();
  }

  /** Moves the window to the found entry when it is not rendered (FOUND_CONTEXT messages above it, RENDER_WINDOW in all). */
  private bringFound(): void {
    const at = this.entries.findIndex((e) => e.key === this.foundKey);
    if (at < 0) return;
    this.foundPending = false;
    this.foundScroll = true;
    this.stick = false;
    if (at >= this.shownFrom && at < this.shownFrom + this.shown.length) return;
    this.moveWindowTo(at);
    this.shown = this.windowOf(this.entries);
  }

  /** Moves the window to a stretch around the entry at `at`: FOUND_CONTEXT messages above it, RENDER_WINDOW in all. */
  private moveWindowTo(at: number): void {
    const from = Math.max(0, at - FOUND_CONTEXT);
    const last = Math.max(at, from + RENDER_WINDOW - 1);
    this.windowStart = this.entries[from].key;
    this.windowEnd = last >= this.entries.length - 1 ? '' : this.entries[last].key;
    this.keepFromBottom = null;
  }

  /** Scrolls the list (not the page) so the found item sits in its middle, and highlights the words in it. */
  private scrollToFound(): void {
    const key = this.foundKey;
    const item = key ? this.renderRoot.querySelector<SalonMessageItem>(`salon-message-item[data-key="${CSS.escape(key)}"]`) : null;
    if (!item) {
      this.prepending = false;
      return;
    }
    const centre = () => {
      const box = item.getBoundingClientRect();
      const view = this.scroller.getBoundingClientRect();
      this.scroller.scrollTop += box.top - view.top - Math.max(0, (view.height - box.height) / 2);
    };
    centre();
    void highlightFound(item, this.foundQuery);
    // Items render after this list does, and the ones above take their real height: centre again then.
    this.nextFrame(() => {
      if (this.foundKey === key && item.isConnected) centre();
      this.prepending = false;
    });
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (this.acted) {
      this.keepFocus(this.acted);
      this.acted = null;
    }
    const moved = (changed as Map<PropertyKey, unknown>).has('windowStart') || (changed as Map<PropertyKey, unknown>).has('windowEnd');
    if (this.seeking && (changed.has('entries') || changed.has('loadingOlder') || moved)) queueMicrotask(() => this.seek());
    if (this.foundScroll && !this.restore) {
      this.foundScroll = false;
      this.scrollToFound();
      return;
    }
    if (this.restore) {
      const place = this.restore;
      this.restore = null;
      this.stick = place.stick;
      // Items render after this list does; set the place again once they have.
      const apply = () => (place.stick ? this.toBottom() : (this.scroller.scrollTop = place.top));
      apply();
      this.nextFrame(apply);
      return;
    }
    if (this.appending) {
      this.appending = false;
      this.nextFrame(() => (this.prepending = false));
      return;
    }
    if (!changed.has('entries') && !changed.has('answers') && !moved) return;
    if (this.keepFromBottom !== null) {
      // Older messages came in above: the reader stays on what they were reading.
      const keep = this.keepFromBottom;
      this.keepFromBottom = null;
      this.scroller.scrollTop = this.scroller.scrollHeight - keep;
      this.nextFrame(() => {
        this.scroller.scrollTop = this.scroller.scrollHeight - keep;
        this.prepending = false;
      });
      return;
    }
    if (this.stick) {
      // Items render after this list does; scroll again once they have.
      this.toBottom();
      this.nextFrame(() => this.stick && this.toBottom());
    } else if (this.arrived && !this.unseen) {
      this.unseen = true;
    }
  }

  protected override render() {
    const empty = this.entries.length === 0 && this.answers.length === 0;
    const hidden = this.shownFrom;
    const below = this.entries.length - this.shownFrom - this.shown.length;
    return html`<div
        class="scroller ${below > 0 ? 'cut' : ''}"
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
        ${empty ? html`<p class="empty">${emptyText(this.roomKind)}</p>` : nothing}
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
              ?found=${!!this.foundKey && e.key === this.foundKey}
              ?mine=${e.message.author.kind === 'user' && (e.state !== 'sent' || (!!this.youId && e.message.author.id === this.youId))}
            ></salon-message-item>`,
        )}
        ${below > 0 ? html`<button class="later" type="button" data-below=${below} @click=${this.revealLater}>Show later messages</button>` : nothing}
        ${repeat(
          below > 0 ? [] : this.answers,
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
      ${
        this.unseen || below > 0
          ? html`<button class="jump primary" type="button" @click=${this.jumpToLatest}>${this.unseen ? 'New messages ↓' : 'Latest messages ↓'}</button>`
          : nothing
      }`;
  }

  private toBottom(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.unseen = false;
  }

  /**
   * The entries from the window's start to its end (the newest unless `windowEnd` says otherwise):
   * the newest RENDER_WINDOW when the reader is at the bottom. Sets `shownFrom`.
   */
  private windowOf(entries: readonly LogEntry[]): readonly LogEntry[] {
    const { from, to } = windowRange(entries, this.windowStart, this.windowEnd, RENDER_WINDOW);
    this.shownFrom = from;
    return from === 0 && to === entries.length ? entries : entries.slice(from, to);
  }

  /** Renders up to REVEAL_STEP more of the held messages above the oldest one rendered. */
  private reveal = () => {
    const at = this.shownFrom;
    if (at <= 0) return;
    this.stick = false;
    this.windowStart = this.entries[Math.max(0, at - REVEAL_STEP)].key;
  };

  /** Renders up to REVEAL_STEP more of the held messages below the newest one rendered (the window ends early after a find). */
  private revealLater = () => {
    const next = this.shownFrom + this.shown.length;
    if (next >= this.entries.length) return;
    // Rendered until now from the bottom up: the window keeps its first message while it grows below.
    if (!this.windowStart && this.shown.length) this.windowStart = this.shown[0].key;
    const last = next + REVEAL_STEP - 1;
    this.windowEnd = last >= this.entries.length - 1 ? '' : this.entries[last].key;
    // Held messages put in below are not news either: the live region should not read them out.
    this.prepending = true;
    this.appending = true;
  };

  /** Follows the reader: near the bottom means "keep me on the latest"; near the top, older held messages render. */
  private onScroll = () => {
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    const toBottom = scrollHeight - scrollTop - clientHeight;
    const below = this.entries.length - this.shownFrom - this.shown.length;
    this.stick = below === 0 && toBottom < STICK_THRESHOLD_PX;
    if (this.stick) {
      this.unseen = false;
      // Back at the latest: the window shrinks to the newest again (what it drops is above the reader).
      if (this.windowStart) this.windowStart = '';
      if (this.windowEnd) this.windowEnd = '';
      return;
    }
    if (below > 0 && toBottom < REVEAL_THRESHOLD_PX && !this.prepending) this.revealLater();
    // Away from the bottom, the window keeps its first message while new ones arrive below.
    if (!this.windowStart && this.shown.length) this.windowStart = this.shown[0].key;
    if (scrollTop < REVEAL_THRESHOLD_PX && this.shownFrom > 0 && !this.prepending) this.reveal();
  };

  /** "Load earlier messages": the page renders when it comes in (see `growOnPage`). */
  private loadOlder = () => {
    this.stick = false;
    this.growOnPage = true;
    this.requestOlder();
  };

  private requestOlder(): void {
    this.dispatchEvent(new CustomEvent('salon-load-older', { bubbles: true, composed: true }));
  }

  private jumpToLatest = () => {
    this.stick = true;
    this.seeking = null;
    this.windowStart = '';
    this.windowEnd = '';
    this.toBottom();
    this.scroller.focus();
  };
}

/** What an empty thread says: a topic room discusses a topic (and its recent items), any other room one item. */
function emptyText(kind: RoomKind | ''): string {
  if (kind === 'topic') return 'No messages yet. Say hello, or ask the AI about this topic and its recent items.';
  if (kind) return 'No messages yet. Say hello, or ask the AI about this item.';
  return 'No messages yet. Say hello, or ask the AI.';
}

/** A message came in after the newest one held before (not a page of older ones, an edit or a removal). */
function arrivedBelow(before: readonly LogEntry[], after: readonly LogEntry[]): boolean {
  const last = after.at(-1);
  const lastBefore = before.at(-1);
  if (!last || last.key === lastBefore?.key) return false;
  if (!lastBefore) return true;
  const at = after.findIndex((e) => e.key === lastBefore.key);
  // The newest held before is gone (discarded): something new is last only if it was not held before.
  return at >= 0 ? at < after.length - 1 : !before.some((e) => e.key === last.key);
}

/** Where the reader was in a thread: scrolled to `top`, or at the bottom, and the window's first and last messages. */
interface Place {
  top: number;
  stick: boolean;
  start: string;
  end: string;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-message-list': SalonMessageList;
  }
}
