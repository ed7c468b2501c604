/**
 * `<salon-post-page>`: one post (`/post?id=post_…`) — title, author, date, category, picture, the
 * body as safe markdown (`<salon-markdown document>`), a link to the original — and the Discuss
 * link with who is in its room now.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { ApiError, getContent, type ContentDetail } from '../lib/api.js';
import { formatDate, hostOf, safeHttpUrl } from '../lib/format.js';
import { RoomCountsController } from '../lib/room-counts-controller.js';
import { itemPageProblem, type ItemPageKind } from '../lib/item-page-problem.js';
import { baseStyles } from '../lib/styles.js';
import './salon-discuss-link.js';
import './salon-markdown.js';

const POST_PAGE: ItemPageKind = { kind: 'post', noun: 'post', listHref: '/posts', listLabel: 'All posts' };

@customElement('salon-post-page')
export class SalonPostPage extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        max-width: 46rem;
      }
      .kicker {
        font-size: 0.8rem;
        font-weight: 700;
        text-transform: uppercase;
        letter-spacing: 0.05em;
        color: var(--salon-accent-strong);
      }
      h1 {
        margin: 0.25rem 0 0.5rem;
        font-size: clamp(1.4rem, 3.4vw, 2.1rem);
        line-height: 1.2;
        overflow-wrap: anywhere;
      }
      .meta {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem 1rem;
        align-items: center;
        color: var(--salon-muted);
        margin-bottom: 1rem;
      }
      .picture {
        display: block;
        width: 100%;
        aspect-ratio: 16 / 9;
        object-fit: cover;
        border-radius: 14px;
        background: var(--salon-placeholder);
        margin-bottom: 1rem;
      }
      .lead {
        font-size: 1.1rem;
        color: var(--salon-muted);
        line-height: 1.5;
        margin: 0 0 1.2rem;
      }
      salon-markdown {
        font-size: 1.02rem;
        line-height: 1.65;
      }
      footer {
        margin-top: 1.5rem;
        padding-top: 1rem;
        border-top: 1px solid var(--salon-border);
        display: flex;
        flex-wrap: wrap;
        gap: 0.6rem 1.2rem;
        align-items: center;
      }
      .error {
        color: var(--salon-danger);
      }
    `,
  ];

  /** The post's content id (`post_…`). */
  @property() itemId = '';
  @state() private item: ContentDetail | null = null;
  @state() private error: ApiError | null = null;
  @state() private imageFailed = false;
  private readonly counts = new RoomCountsController(this);

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('itemId')) void this.load();
  }

  protected override render() {
    const problem = itemPageProblem(POST_PAGE, this.error, this.item);
    if (problem) return problem;
    const item = this.item;
    if (!item) return html`<p role="status">Loading…</p>`;
    const original = safeHttpUrl(item.url);
    const picture = this.imageFailed ? null : safeHttpUrl(item.image);
    const discuss = html`<salon-discuss-link .contentId=${item.id} .itemTitle=${item.title} .count=${this.counts.countOf(item.id)}></salon-discuss-link>`;
    return html`<article data-item=${item.id}>
      ${item.category ? html`<div class="kicker">${item.category}</div>` : nothing}
      <h1>${item.title}</h1>
      <div class="meta">
        ${item.author ? html`<span data-author>${item.author}</span>` : nothing}
        ${item.publishedAt ? html`<time datetime=${item.publishedAt}>${formatDate(item.publishedAt)}</time>` : nothing} ${discuss}
      </div>
      ${picture ? html`<img class="picture" src=${picture} alt="" @error=${() => (this.imageFailed = true)} />` : nothing}
      ${item.description && !item.body.trim() ? html`<p class="lead">${item.description}</p>` : nothing}
      <salon-markdown document .text=${item.body}></salon-markdown>
      <footer>
        ${discuss}
        ${original ? html`<a href=${original} target="_blank" rel="noopener noreferrer nofollow" data-original>Read the original on ${hostOf(original) || 'its site'} ↗</a>` : nothing}
        <a href="/posts">All posts</a>
      </footer>
    </article>`;
  }

  private async load(): Promise<void> {
    this.item = null;
    this.error = null;
    this.imageFailed = false;
    if (!this.itemId) {
      this.error = new ApiError('ERR_BAD_REQUEST', 'The address names no post.', 400);
      return;
    }
    try {
      this.item = await getContent(this.itemId);
      if (this.item.kind === 'post') document.title = `${this.item.title} · Salon`;
    } catch (err) {
      this.error = ApiError.from(err);
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-post-page': SalonPostPage;
  }
}
