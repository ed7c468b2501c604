/**
 * `<salon-room-header>`: what the room is about — its title, the first sentence of its context
 * and a link to the original; for a topic room, its digest: the category's recent items, each
 * with its line, a link to its page in Salon and one to the original.
 *
 * @csspart kind - the line above the title naming the room's kind (there, empty, while joining).
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { itemPagePath } from '../../../src/protocol/content.js';
import type { DigestEntry, RoomInfo } from '../../../src/protocol/messages.js';
import { firstSentence, formatDate, hostOf, safeHttpUrl } from '../lib/format.js';
import { baseStyles } from '../lib/styles.js';

const KIND_LABEL: Record<RoomInfo['kind'], string> = { news: 'News', post: 'Post', video: 'Video', topic: 'Topic' };

@customElement('salon-room-header')
export class SalonRoomHeader extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        overflow-wrap: anywhere;
      }
      .kind {
        font-size: 0.75rem;
        font-weight: 700;
        text-transform: uppercase;
        letter-spacing: 0.06em;
        color: var(--salon-accent-strong);
      }
      h1 {
        font-size: clamp(1.15rem, 2.6vw, 1.6rem);
        line-height: 1.25;
        margin: 0.15rem 0 0.3rem;
        overflow-wrap: anywhere;
      }
      p {
        margin: 0 0 0.35rem;
        color: var(--salon-muted);
        max-width: 70ch;
      }
      @media (max-width: 720px) {
        h1 {
          font-size: 1.05rem;
        }
        p {
          font-size: 0.9rem;
          display: -webkit-box;
          -webkit-line-clamp: 2;
          -webkit-box-orient: vertical;
          overflow: hidden;
        }
        /* Folded behind the room's Details toggle: the title on one line, the rest hidden. */
        :host([folded]) h1 {
          font-size: 1rem;
          margin: 0;
          white-space: nowrap;
          overflow: hidden;
          text-overflow: ellipsis;
          overflow-wrap: normal;
        }
        :host([folded]) .more {
          display: none;
        }
      }
      details {
        margin: 0 0 0.4rem;
        max-width: 70ch;
      }
      summary {
        cursor: pointer;
        color: var(--salon-link);
        font-size: 0.92rem;
      }
      .digest {
        margin: 0.4rem 0 0;
        padding-left: 1.2rem;
        max-height: 40vh;
        overflow-y: auto;
        font-size: 0.9rem;
      }
      .digest li {
        margin-bottom: 0.4rem;
      }
      .digest .line {
        color: var(--salon-muted);
      }
      .digest time,
      .digest .original {
        font-size: 0.8rem;
        color: var(--salon-muted);
        margin-left: 0.4rem;
      }
      .links {
        display: flex;
        flex-wrap: wrap;
        gap: 0.3rem 1rem;
        font-size: 0.9rem;
      }
    `,
  ];

  @property({ attribute: false }) room: RoomInfo | null = null;
  /** On a phone, only the title shows, on one line: the room folds the rest away. */
  @property({ type: Boolean, reflect: true }) folded = false;

  protected override render() {
    const room = this.room;
    // Until the room answers, nothing names it: its id is the address's, and an address is anyone's link.
    if (!room) {
      return html`<div class="kind more" part="kind"></div>
        <h1>Joining the discussion…</h1>`;
    }
    const original = safeHttpUrl(room.url);
    const digest = room.kind === 'topic' && Array.isArray(room.digest) && room.digest.length ? room.digest : null;
    const sentence = digest ? leadOf(room.context, room.title) : firstSentence(room.context, room.title);
    return html`<div class="kind more" part="kind">${KIND_LABEL[room.kind] ?? room.kind}</div>
      <h1>${room.title}</h1>
      ${sentence ? html`<p class="more" data-context>${sentence}</p>` : nothing} ${digest ? this.renderDigest(digest) : nothing}
      <div class="links more">
        ${
          original
            ? html`<a href=${original} target="_blank" rel="noopener noreferrer nofollow" data-original
                >Read the original${hostOf(original) ? ` on ${hostOf(original)}` : ''} ↗</a
              >`
            : nothing
        }
        ${room.kind === 'video' ? html`<a href="/watch?id=${encodeURIComponent(room.id)}">Video page</a>` : nothing}
        ${room.kind === 'post' ? html`<a href="/post?id=${encodeURIComponent(room.id)}" data-post-page>Read the post</a>` : nothing}
      </div>`;
  }

  private renderDigest(digest: DigestEntry[]) {
    return html`<details class="more" data-digest>
      <summary>Recent in this topic (${digest.length})</summary>
      <ol class="digest">
        ${digest.map((entry) => {
          const original = safeHttpUrl(entry.url);
          return html`<li data-item=${entry.id}>
            <a href=${itemPagePath(entry)}>${entry.title}</a>
            ${entry.publishedAt ? html`<time datetime=${entry.publishedAt}>${formatDate(entry.publishedAt)}</time>` : nothing}
            ${original ? html`<a class="original" href=${original} target="_blank" rel="noopener noreferrer nofollow">${hostOf(original) || 'original'} ↗</a>` : nothing}
            ${entry.line ? html`<div class="line">${entry.line}</div>` : nothing}
          </li>`;
        })}
      </ol>
    </details>`;
  }
}

/** A topic context's lead: what comes between its title and its digest (`Recent in …`), squashed. */
function leadOf(context: string, title: string): string {
  const body = context.startsWith(title) ? context.slice(title.length) : context;
  const at = body.indexOf('Recent in ');
  return (at >= 0 ? body.slice(0, at) : '').replace(/\s+/g, ' ').trim();
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-room-header': SalonRoomHeader;
  }
}
