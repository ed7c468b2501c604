/**
 * `<salon-chat-page>`: `/chat?id=<contentId>` opens an item's room; `/chat?topic=<slug>` a topic
 * room, with tabs to switch topics in place (each topic keeps its messages while the page lives;
 * each gets a `<salon-room>` of its own, so nothing else of one shows in the next).
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { keyed } from 'lit/directives/keyed.js';
import { clampClusters } from '../../../src/protocol/clusters.js';
import { TOPIC_ROOM_PREFIX, topicSlug } from '../../../src/protocol/room-ids.js';
import { listContent } from '../lib/api.js';
import { RoomCountsController } from '../lib/room-counts-controller.js';
import { baseStyles } from '../lib/styles.js';
import './salon-room.js';
import './salon-topic-tabs.js';

/** Items scanned to learn which topics exist. */
const TOPIC_SCAN = 100;
/** Longest topic slug taken from an address. */
const MAX_SLUG_CHARS = 64;

interface Target {
  roomId: string;
  topic: string;
}

function targetFromUrl(): Target {
  const params = new URLSearchParams(location.search);
  // An address is anyone's link: its text is cut as all text that comes in is.
  const id = clampClusters(params.get('id') ?? '');
  if (id) return { roomId: id, topic: '' };
  const topic = topicSlug(params.get('topic') ?? '').slice(0, MAX_SLUG_CHARS);
  return topic ? { roomId: `${TOPIC_ROOM_PREFIX}${topic}`, topic } : { roomId: '', topic: '' };
}

@customElement('salon-chat-page')
export class SalonChatPage extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: flex;
        flex-direction: column;
        height: 100%;
        min-height: 0;
      }
      salon-room {
        flex: 1;
      }
    `,
  ];

  @state() private target: Target = targetFromUrl();
  @state() private topics: string[] = [];
  /** Topics whose room the server said does not exist: an address naming one gets no tab for it. */
  @state() private missing: ReadonlySet<string> = new Set();
  /**
   * Topics whose room welcomed the member. An address may name any slug: it gets a tab once the
   * page knows the topic exists (scanned, someone in its room, or this), not while its room is asked.
   */
  @state() private found: ReadonlySet<string> = new Set();
  private readonly counts = new RoomCountsController(this);

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('popstate', this.onPopState);
    if (!this.target.roomId || this.target.topic) void this.loadTopics();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('popstate', this.onPopState);
  }

  protected override render() {
    const { roomId, topic } = this.target;
    const topics = this.topicList(topic);
    const showTabs = topic || !roomId;
    return html`${
      showTabs
        ? html`<salon-topic-tabs .topics=${topics} .selected=${topic} .counts=${this.counts.counts} @salon-topic-change=${this.onTopic}></salon-topic-tabs>`
        : nothing
    }
    ${
      roomId
        ? // A room element per room: what one shows for the member (a command's answer, a form, a
          // dialog) never carries into the next; the messages stay in each room's memory.
          keyed(roomId, html`<salon-room .roomId=${roomId} @salon-room-missing=${this.onRoomMissing} @salon-room-found=${this.onRoomFound}></salon-room>`)
        : html`<h1>Topics</h1>
            <p>Pick a topic above to talk about whatever is new in it. Each topic has its own room.</p>`
    }`;
  }

  /** Known topics (from categories), active topic rooms, and the current one once its room welcomed the member, sorted. */
  private topicList(current: string): string[] {
    const slugs = new Set(this.topics);
    for (const id of this.counts.counts.keys()) if (id.startsWith(TOPIC_ROOM_PREFIX)) slugs.add(id.slice(TOPIC_ROOM_PREFIX.length));
    if (current && this.found.has(current)) slugs.add(current);
    for (const slug of this.missing) slugs.delete(slug);
    return [...slugs].sort();
  }

  private async loadTopics(): Promise<void> {
    try {
      const page = await listContent({ limit: TOPIC_SCAN });
      this.topics = [...new Set(page.items.map((i) => (i.category ? topicSlug(i.category) : '')).filter(Boolean))];
    } catch {
      this.topics = [];
    }
  }

  private onTopic = (e: CustomEvent<{ topic: string }>) => {
    const topic = e.detail.topic;
    history.pushState(null, '', `/chat?topic=${encodeURIComponent(topic)}`);
    this.target = { roomId: `${TOPIC_ROOM_PREFIX}${topic}`, topic };
  };

  private onRoomMissing = (e: CustomEvent<{ roomId: string }>) => {
    const { roomId } = e.detail;
    if (!roomId.startsWith(TOPIC_ROOM_PREFIX)) return;
    const slug = roomId.slice(TOPIC_ROOM_PREFIX.length);
    this.missing = new Set([...this.missing, slug]);
    this.found = new Set([...this.found].filter((s) => s !== slug));
  };

  private onRoomFound = (e: CustomEvent<{ roomId: string }>) => {
    const { roomId } = e.detail;
    if (!roomId.startsWith(TOPIC_ROOM_PREFIX)) return;
    const slug = roomId.slice(TOPIC_ROOM_PREFIX.length);
    this.found = new Set([...this.found, slug]);
    this.missing = new Set([...this.missing].filter((s) => s !== slug));
  };

  private onPopState = () => {
    this.target = targetFromUrl();
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-chat-page': SalonChatPage;
  }
}
