/**
 * `<salon-content-card>`: one article, post or video in a list — picture, category, date, author
 * or channel, the host it is on, title, description — with its Discuss link. Videos show their
 * thumbnail and lead to their watch page, posts to their post page.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { ContentSummary } from '../lib/api.js';
import { formatDate, hostOf, safeHttpUrl } from '../lib/format.js';
import { baseStyles } from '../lib/styles.js';
import './salon-discuss-link.js';

/** Longest description shown on a card. */
const DESCRIPTION_CHARS = 220;

/** Where a card's title leads: the watch page for videos, the post page for posts, the original for news, else the room. */
export function itemHref(item: Pick<ContentSummary, 'id' | 'kind' | 'url'>): { href: string; external: boolean } {
  if (item.kind === 'video') return { href: `/watch?id=${encodeURIComponent(item.id)}`, external: false };
  if (item.kind === 'post') return { href: `/post?id=${encodeURIComponent(item.id)}`, external: false };
  const url = safeHttpUrl(item.url);
  if (url) return { href: url, external: true };
  return { href: `/chat?id=${encodeURIComponent(item.id)}`, external: false };
}

@customElement('salon-content-card')
export class SalonContentCard extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      article {
        height: 100%;
        display: flex;
        flex-direction: column;
        background: var(--salon-surface);
        border: 1px solid var(--salon-border);
        border-radius: 14px;
        overflow: hidden;
      }
      .media {
        position: relative;
        display: block;
        aspect-ratio: 16 / 9;
        background: var(--salon-placeholder);
      }
      .media img {
        width: 100%;
        height: 100%;
        object-fit: cover;
        display: block;
      }
      .play {
        position: absolute;
        inset: 0;
        display: grid;
        place-items: center;
        color: white;
        font-size: 2.2rem;
        text-shadow: 0 2px 10px rgb(0 0 0 / 0.6);
        pointer-events: none;
      }
      .body {
        padding: 0.85rem 1rem 1rem;
        display: flex;
        flex-direction: column;
        gap: 0.4rem;
        flex: 1;
      }
      .meta {
        display: flex;
        flex-wrap: wrap;
        gap: 0.3rem 0.6rem;
        font-size: 0.8rem;
        color: var(--salon-muted);
        align-items: center;
        overflow-wrap: anywhere;
      }
      .category {
        font-weight: 700;
        text-transform: uppercase;
        letter-spacing: 0.05em;
        color: var(--salon-accent-strong);
      }
      h2 {
        font-size: 1.05rem;
        line-height: 1.3;
        margin: 0;
      }
      h2 a {
        color: inherit;
        text-decoration: none;
      }
      h2 a:hover {
        text-decoration: underline;
      }
      p {
        margin: 0;
        color: var(--salon-muted);
        font-size: 0.92rem;
        line-height: 1.45;
      }
      .actions {
        margin-top: auto;
        padding-top: 0.4rem;
        display: flex;
        align-items: center;
        justify-content: space-between;
        gap: 0.5rem;
        flex-wrap: wrap;
        font-size: 0.82rem;
      }
    `,
  ];

  @property({ attribute: false }) item!: ContentSummary;
  /** People in the item's room now. */
  @property({ type: Number }) count: number | undefined = undefined;
  @state() private imageFailed = false;

  protected override render() {
    const item = this.item;
    if (!item) return nothing;
    const link = itemHref(item);
    const picture = item.kind === 'video' ? (item.thumbnail ?? item.image) : item.image;
    const src = this.imageFailed ? null : safeHttpUrl(picture);
    const description = item.description.length > DESCRIPTION_CHARS ? `${item.description.slice(0, DESCRIPTION_CHARS).trimEnd()}…` : item.description;
    const byline = item.kind === 'video' ? item.channel : item.author;
    // A page calls itself what it likes (its site name is its own claim): the card names the host its address is on.
    const original = safeHttpUrl(item.url);
    const site = original ? hostOf(original) : '';
    const target = link.external ? '_blank' : nothing;
    const rel = link.external ? 'noopener noreferrer' : nothing;
    return html`<article data-item=${item.id}>
      ${
        src
          ? html`<a class="media" href=${link.href} target=${target} rel=${rel} tabindex="-1" aria-hidden="true">
              <img src=${src} alt="" loading="lazy" @error=${() => (this.imageFailed = true)} />
              ${item.kind === 'video' ? html`<span class="play">▶</span>` : nothing}
            </a>`
          : nothing
      }
      <div class="body">
        <div class="meta">
          ${item.category ? html`<span class="category">${item.category}</span>` : nothing}
          ${item.publishedAt ? html`<time datetime=${item.publishedAt}>${formatDate(item.publishedAt)}</time>` : nothing}
          ${byline ? html`<span>${byline}</span>` : nothing} ${site ? html`<span data-site>${site}</span>` : nothing}
        </div>
        <h2><a href=${link.href} target=${target} rel=${rel}>${item.title}</a></h2>
        ${description ? html`<p>${description}</p>` : nothing}
        <div class="actions">
          <salon-discuss-link .contentId=${item.id} .itemTitle=${item.title} .count=${this.count}></salon-discuss-link>
          ${item.commentCount ? html`<span class="muted">${item.commentCount} ${item.commentCount === 1 ? 'comment' : 'comments'}</span>` : nothing}
        </div>
      </div>
    </article>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-content-card': SalonContentCard;
  }
}
