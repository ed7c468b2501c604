/**
 * `<salon-watch-page>`: one video (`/watch?id=video_…`) — thumbnail linking to the original,
 * title, channel, its whole description (chapter timestamps included) — and the Discuss link with
 * who is in its room now. Another kind of item is not shown as a video: the page says so and links
 * to that item's own page.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, getContent, type ContentDetail } from '../lib/api.js';
import { formatDate, hostOf, safeHttpUrl } from '../lib/format.js';
import { RoomCountsController } from '../lib/room-counts-controller.js';
import { itemPageProblem, type ItemPageKind } from '../lib/item-page-problem.js';
import { baseStyles } from '../lib/styles.js';
import './salon-discuss-link.js';

/**
 * A video's description in full, as paragraphs: its body holds the whole text (chapters and all),
 * while `description` is an excerpt of ~300 characters for cards. Shown as text, never as markup.
 */
function fullDescription(item: ContentDetail): string[] {
  const text = item.body.trim() ? item.body : item.description;
  return text.split(/\n\s*\n/).filter((p) => p.trim());
}

const WATCH_PAGE: ItemPageKind = { kind: 'video', noun: 'video', listHref: '/videos', listLabel: 'All videos' };

@customElement('salon-watch-page')
export class SalonWatchPage extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        max-width: 60rem;
      }
      .player {
        position: relative;
        display: block;
        aspect-ratio: 16 / 9;
        background: #111;
        border-radius: 14px;
        overflow: hidden;
        color: white;
        text-decoration: none;
      }
      .player img {
        width: 100%;
        height: 100%;
        object-fit: cover;
        opacity: 0.85;
      }
      .player .cta {
        position: absolute;
        inset: 0;
        display: grid;
        place-items: center;
        align-content: center;
        gap: 0.5rem;
        font-weight: 700;
        text-shadow: 0 2px 10px rgb(0 0 0 / 0.7);
      }
      .player .icon {
        font-size: 3rem;
      }
      h1 {
        margin: 1rem 0 0.3rem;
        font-size: clamp(1.25rem, 3vw, 1.8rem);
      }
      .meta {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem 1rem;
        align-items: center;
        color: var(--salon-muted);
        margin-bottom: 0.8rem;
      }
      .description p {
        margin: 0 0 0.7rem;
        line-height: 1.55;
        white-space: pre-line;
      }
      .error {
        color: var(--salon-danger);
      }
    `,
  ];

  /** The video's content id (`video_…`). */
  @property() itemId = '';
  @state() private item: ContentDetail | null = null;
  @state() private error: ApiError | null = null;
  private readonly counts = new RoomCountsController(this);

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('itemId')) void this.load();
  }

  protected override render() {
    const problem = itemPageProblem(WATCH_PAGE, this.error, this.item);
    if (problem) return problem;
    const item = this.item;
    if (!item) return html`<p role="status">Loading…</p>`;
    const original = safeHttpUrl(item.url);
    const thumb = safeHttpUrl(item.thumbnail ?? item.image);
    return html`<article data-item=${item.id}>
      ${
        original
          ? html`<a class="player" href=${original} target="_blank" rel="noopener noreferrer nofollow">
              ${thumb ? html`<img src=${thumb} alt="" />` : nothing}
              <span class="cta"><span class="icon" aria-hidden="true">▶</span>Watch on ${hostOf(original) || 'the original site'} ↗</span>
            </a>`
          : thumb
            ? html`<div class="player"><img src=${thumb} alt="" /></div>`
            : nothing
      }
      <h1>${item.title}</h1>
      <div class="meta">
        ${item.channel ? html`<span>${item.channel}</span>` : nothing}
        ${item.publishedAt ? html`<time datetime=${item.publishedAt}>${formatDate(item.publishedAt)}</time>` : nothing}
        <salon-discuss-link .contentId=${item.id} .itemTitle=${item.title} .count=${this.counts.countOf(item.id)}></salon-discuss-link>
      </div>
      <div class="description">${fullDescription(item).map((p) => html`<p dir="auto">${p}</p>`)}</div>
    </article>`;
  }

  private async load(): Promise<void> {
    this.item = null;
    this.error = null;
    if (!this.itemId) {
      this.error = new ApiError('ERR_BAD_REQUEST', 'The address names no video.', 400);
      return;
    }
    try {
      this.item = await getContent(this.itemId);
      if (this.item.kind === 'video') document.title = `${this.item.title} · Salon`;
    } catch (err) {
      this.error = ApiError.from(err);
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-watch-page': SalonWatchPage;
  }
}
