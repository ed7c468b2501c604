/**
 * `<salon-room>`: a live room — header, its threads and who is here, the open thread's messages,
 * who is typing, the composer — and the split dialog. The socket and the room's state live in a
 * RoomController; this element only lays them out and hands the children's events to it.
 *
 * On a phone (720 px and narrower) the head folds to one line — the title and a "Details" toggle
 * (`aria-expanded`) with the number of people here — so the messages get most of the screen; the
 * toggle opens the room's details, the people, starting a thread and the open thread's header.
 *
 * "Find" in the head (or Ctrl+Shift+F anywhere in the room; the browser's own Ctrl+F is left
 * alone) opens a find bar above the messages that looks through every message the page holds for
 * the open thread, and older pages on demand (`<salon-room-find>`).
 *
 * @fires salon-room-missing - {roomId} the server has no such room (a topic the address named that does not exist).
 * @fires salon-room-found - {roomId} the room welcomed the member: it exists.
 */
import { LitElement, html, nothing, svg, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { CommandReply } from '../lib/command-replies.js';
import { saveDisplayName } from '../lib/identity.js';
import { MAX_MESSAGE_CHARS, RoomController } from '../lib/room-controller.js';
import { plural } from '../lib/format.js';
import { roomLayoutStyles } from '../lib/room-layout.js';
import { baseStyles } from '../lib/styles.js';
import { memoryOff, type SplitLock, type SplitPart, type ThreadView } from '../lib/threads-api.js';
import './salon-composer.js';
import './salon-connection-status.js';
import './salon-member-list.js';
import './salon-message-list.js';
import './salon-room-find.js';
import './salon-room-header.js';
import type { SalonMessageList } from './salon-message-list.js';
import type { SalonRoomFind } from './salon-room-find.js';
import './salon-split-dialog.js';
import './salon-thread-header.js';
import './salon-thread-list.js';
import './salon-typing-indicator.js';

/** A thread command the room is waiting on, and its last answer. */
interface CommandState {
  pending: boolean;
  reply: CommandReply | null;
}
const IDLE: CommandState = { pending: false, reply: null };
const FIND_ICON = svg`<svg viewBox="0 0 20 20" width="16" height="16" aria-hidden="true" focusable="false"><circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" stroke-width="2"/><path d="M12.6 12.6 17 17" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>`;

/** Ctrl+Shift+F: opens the room's find bar. Not Ctrl+F, which stays the browser's find-in-page; not `/`, the site search's key. */
function isFindShortcut(e: KeyboardEvent): boolean {
  return e.ctrlKey && e.shiftKey && !e.altKey && !e.metaKey && (e.key === 'F' || e.key === 'f');
}

/** The element that has the focus, looking into shadow roots. */
function focusedElement(): HTMLElement | null {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el instanceof HTMLElement && el !== document.body ? el : null;
}

@customElement('salon-room')
export class SalonRoom extends LitElement {
  static override styles = [baseStyles, roomLayoutStyles];

  /** `news_42`, `topic_tech`… */
  @property() roomId = '';

  private readonly controller = new RoomController(this);
  @state() private newThread: CommandState = IDLE;
  @state() private merging: CommandState = IDLE;
  @state() private splitting: CommandState & { threadId: string } = { ...IDLE, threadId: '' };
  /** On a phone, the room's details, people and thread tools are shown (they fold behind a toggle). */
  @state() private detailsOpen = false;
  /** The find bar is open. */
  @state() private findOpen = false;
  /** Where the focus was when the find bar opened: it goes back there when the bar closes. */
  private findOpener: HTMLElement | null = null;
  @query('salon-message-list') private list!: SalonMessageList;
  @query('salon-room-find') private finder!: SalonRoomFind;
  @query('.find-toggle') private findToggle!: HTMLButtonElement;

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('keydown', this.onDocumentKey);
  }

  override disconnectedCallback(): void {
    document.removeEventListener('keydown', this.onDocumentKey);
    super.disconnectedCallback();
  }

  /** The room id a `salon-room-missing` was last fired for. */
  private toldMissing = '';
  /** The room id a `salon-room-found` was last fired for. */
  private toldFound = '';

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('roomId')) this.controller.setRoom(this.roomId);
  }

  protected override updated(): void {
    const missing = this.controller.fatal?.code === 'ERR_ROOM_NOT_FOUND' ? this.roomId : '';
    if (missing && missing !== this.toldMissing) {
      this.toldMissing = missing;
      this.dispatchEvent(new CustomEvent('salon-room-missing', { detail: { roomId: missing }, bubbles: true, composed: true }));
    }
    const found = this.controller.room?.id === this.roomId ? this.roomId : '';
    if (found && found !== this.toldFound) {
      this.toldFound = found;
      this.dispatchEvent(new CustomEvent('salon-room-found', { detail: { roomId: found }, bubbles: true, composed: true }));
    }
    const title = this.controller.room?.title;
    if (title && document.title !== `${title} · Salon`) document.title = `${title} · Salon`;
  }

  protected override render() {
    const c = this.controller;
    if (c.fatal) {
      return html`<div class="fatal" role="alert" data-fatal=${c.fatal.code}>
        <h1>Can't open this room</h1>
        <p>${c.fatal.message}</p>
        <p><a href="/">Back to the news</a></p>
      </div>`;
    }
    const queued = c.status === 'offline' || c.status === 'reconnecting';
    const { threads } = c.nav;
    const open = threads.byId(c.threadId) ?? null;
    const folded = !this.detailsOpen;
    // Folded, the row of threads shows only when there is another thread to switch to.
    const switchable = threads.list.filter((t) => t.status === 'active').length > 1 || (!!open && open.status !== 'active');
    // Folded, an active thread's header is hidden: the toggle says what it would show.
    const hiddenNotes = folded && open?.status === 'active' ? notesIn(open, threads.suggestions[open.id]?.length ?? 0) : [];
    return html`<salon-connection-status
        .status=${c.status}
        .retryAt=${c.retryAt}
        .notice=${c.notice}
        .forget=${c.forgetState}
        @salon-reconnect=${() => c.reconnectNow()}
        @salon-dismiss-notice=${() => c.dismissNotice()}
      ></salon-connection-status>
      <div class="layout ${folded ? 'folded' : 'open'}">
        <div class="head">
          <salon-room-header id="room-about" .room=${c.room} ?folded=${folded}></salon-room-header>
          <div class="head-tools">
            <button
              class="find-toggle"
              type="button"
              aria-label="Find in this room"
              aria-expanded=${this.findOpen ? 'true' : 'false'}
              aria-controls="room-find"
              aria-keyshortcuts="Control+Shift+F"
              title="Find in this room (Ctrl+Shift+F)"
              @click=${this.toggleFind}
            >
              ${FIND_ICON}<span class="find-label">Find</span>
            </button>
            <button
              class="details-toggle"
              type="button"
              aria-expanded=${folded ? 'false' : 'true'}
              aria-controls="room-about room-side thread-about"
              @click=${this.toggleDetails}
            >
              Details${c.status === 'open' ? html` <span class="muted" data-here=${c.memberCount}>· ${c.memberCount} here</span>` : nothing}
              ${
                hiddenNotes.length
                  ? html`<span class="notes-dot" data-hidden-notes=${hiddenNotes.length} aria-hidden="true"></span
                      ><span class="visually-hidden">, ${hiddenNotes.join(', ')}</span>`
                  : nothing
              }
              <span class="chevron" aria-hidden="true">▾</span>
            </button>
          </div>
        </div>
        <div class="side" id="room-side">
          <aside class="threads ${switchable ? '' : 'fold'}" aria-label="Threads">
            <salon-thread-list
              ?folded=${folded}
              .threads=${threads.list}
              .archivedTotal=${threads.archivedTotal}
              .counts=${threads.counts}
              .importing=${threads.importing}
              .current=${c.threadId}
              .pending=${this.newThread.pending}
              .status=${this.newThread.reply}
              @salon-select-thread=${this.onSelectThread}
              @salon-new-thread=${this.onNewThread}
            ></salon-thread-list>
          </aside>
          <aside class="members" aria-label="People in this room">
            <salon-member-list
              ?folded=${folded}
              .members=${c.members}
              .count=${c.memberCount}
              .you=${c.you}
              .known=${c.status === 'open'}
              @salon-rename=${this.onRename}
            ></salon-member-list>
          </aside>
        </div>
        <section class="chat" aria-label="Discussion">
          ${
            open
              ? html`<salon-thread-header
                  id="thread-about"
                  class=${open.status === 'active' ? 'fold' : ''}
                  .thread=${open}
                  .threads=${threads.list}
                  .count=${threads.counts[open.id]}
                  .importing=${!!threads.importing[open.id]}
                  .suggestions=${threads.suggestions[open.id] ?? []}
                  .pending=${this.merging.pending}
                  .status=${this.merging.reply}
                  @salon-open-split=${this.onOpenSplit}
                  @salon-merge=${this.onMerge}
                ></salon-thread-header>`
              : nothing
          }
          <salon-room-find
            id="room-find"
            ?open=${this.findOpen}
            ?threaded=${threads.list.length > 1}
            .entries=${c.messages}
            .source=${c.nav}
            @salon-find-show=${(e: CustomEvent<{ key: string; query: string }>) => this.list.showFound(e.detail.key, e.detail.query)}
            @salon-find-close=${this.closeFind}
          ></salon-room-find>
          <salon-message-list
            .entries=${c.messages}
            .answers=${c.answers}
            .youId=${c.you?.id ?? ''}
            .view=${c.threadId}
            .roomKind=${c.room?.kind ?? ''}
            .introId=${open?.isMerged ? (c.messages.find((e) => e.message.author.kind === 'assistant')?.message.id ?? '') : ''}
            .hasOlder=${c.nav.hasOlder}
            .loadingOlder=${c.nav.loadingOlder}
            @salon-load-older=${() => void c.nav.loadOlder()}
            @salon-retry=${(e: CustomEvent<{ clientId: string }>) => c.retry(e.detail.clientId)}
            @salon-discard=${(e: CustomEvent<{ clientId: string }>) => c.discard(e.detail.clientId)}
          ></salon-message-list>
          <div class="bottom">
            <salon-typing-indicator .members=${c.typing}></salon-typing-indicator>
            <salon-composer
              .maxLength=${MAX_MESSAGE_CHARS}
              .queued=${queued}
              .privateCount=${c.privateCount}
              ?forgetRefused=${c.forgetRefused}
              @salon-forget-private=${() => c.forgetPrivate()}
              @salon-send=${(e: CustomEvent<{ text: string; ask: boolean; private: boolean }>) => c.send(e.detail.text, e.detail.ask, e.detail.private)}
              @salon-typing=${(e: CustomEvent<{ active: boolean }>) => c.setTyping(e.detail.active)}
            ></salon-composer>
          </div>
        </section>
      </div>
      <salon-split-dialog
        .threadId=${this.splitting.threadId}
        .threadTitle=${threads.byId(this.splitting.threadId)?.title ?? ''}
        .open=${!!this.splitting.threadId}
        .pending=${this.splitting.pending}
        .result=${this.splitting.reply}
        @salon-split=${this.onSplit}
        @salon-close-split=${() => (this.splitting = { ...IDLE, threadId: '' })}
      ></salon-split-dialog>`;
  }

  private toggleDetails = () => {
    this.detailsOpen = !this.detailsOpen;
  };

  private toggleFind = () => {
    if (this.findOpen) this.closeFind();
    else this.openFind();
  };

  /** Opens the find bar (or, open, takes the focus back to it) with its words selected. */
  private openFind(): void {
    if (!this.findOpen) this.findOpener = focusedElement();
    this.findOpen = true;
    this.finder.focus();
  }

  private closeFind = () => {
    this.findOpen = false;
    this.list.showFound('');
    const back = this.findOpener?.isConnected ? this.findOpener : this.findToggle;
    this.findOpener = null;
    back?.focus();
  };

  private onDocumentKey = (e: KeyboardEvent) => {
    if (!isFindShortcut(e) || e.defaultPrevented || this.controller.fatal) return;
    e.preventDefault();
    this.openFind();
  };

  private onSelectThread = (e: CustomEvent<{ threadId: string }>) => {
    this.merging = IDLE;
    this.controller.nav.select(e.detail.threadId);
  };

  private onNewThread = async (e: CustomEvent<{ title: string }>) => {
    this.newThread = { pending: true, reply: null };
    this.newThread = { pending: false, reply: await this.controller.nav.createThread(e.detail.title) };
  };

  private onMerge = async (e: CustomEvent<{ survivorId: string; absorbedId: string }>) => {
    const merging = (this.merging = { pending: true, reply: null });
    const reply = await this.controller.nav.merge(e.detail.survivorId, e.detail.absorbedId);
    // Another thread opened meanwhile (which resets `merging`): its header is not this merge's to tell.
    if (this.merging === merging) this.merging = { pending: false, reply };
  };

  private onOpenSplit = (e: CustomEvent<{ threadId: string }>) => {
    this.splitting = { ...IDLE, threadId: e.detail.threadId };
  };

  private onSplit = async (e: CustomEvent<{ threadId: string; parts: SplitPart[]; lock: SplitLock }>) => {
    const { threadId, parts, lock } = e.detail;
    const splitting = (this.splitting = { threadId, pending: true, reply: null });
    const reply = await this.controller.nav.split(threadId, parts, lock);
    // The dialog closed meanwhile (and may be open again, afresh): its answer is not this split's.
    if (this.splitting === splitting) this.splitting = { threadId, pending: false, reply };
  };

  private onRename = (e: CustomEvent<{ name: string }>) => {
    const saved = saveDisplayName(e.detail.name);
    if ('name' in saved) this.controller.rename(saved.name);
    else this.controller.refuseName(saved.refused);
  };
}

/** What an open thread's header shows that the member should not miss, in words for the Details toggle. */
function notesIn(thread: ThreadView, suggestions: number): string[] {
  const notes: string[] = [];
  if (suggestions) notes.push(plural(suggestions, 'merge suggestion', 'merge suggestions'));
  if (memoryOff(thread)) notes.push('memory is off');
  return notes;
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-room': SalonRoom;
  }
}
