/**
 * `<salon-content-page>`: a list page — news (`/`), posts (`/posts`) or videos (`/videos`) — with
 * a category filter, "Load more", and live room counts on every Discuss link.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { ApiError, listContent, type ContentSummary } from '../lib/api.js';
import { RoomCountsController } from '../lib/room-counts-controller.js';
import { baseStyles } from '../lib/styles.js';
import './salon-category-filter.js';
import './salon-content-card.js';

/** Items per page. */
const PAGE_SIZE = 24;
/** Items scanned to learn the categories. */
const CATEGORY_SCAN = 100;

type Kind = 'news' | 'post' | 'video';
const HEADINGS: Record<Kind, { title: string; blurb: string }> = {
  news: { title: 'News', blurb: 'Pick a story and talk it over with whoever is reading it now.' },
  post: { title: 'Posts', blurb: 'Longer reads, each with its own discussion.' },
  video: { title: 'Videos', blurb: 'Watch, then join the room to discuss.' },
};

@customElement('salon-content-page')
export class SalonContentPage extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      header {
        margin-bottom: 1rem;
      }
      h1 {
        margin: 0 0 0.25rem;
        font-size: 1.7rem;
      }
      header p {
        margin: 0 0 0.8rem;
        color: var(--salon-muted);
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(min(100%, 17rem), 1fr));
        gap: 1rem;
      }
      .state {
        padding: 2rem 0;
        color: var(--salon-muted);
      }
      .error {
        color: var(--salon-danger);
      }
      .more {
        display: flex;
        justify-content: center;
        padding: 1.5rem 0;
      }
    `,
  ];

  @property() kind: Kind = 'news';
  /** The category filter, '' for all; mirrored in `?category=`. */
  @property() category = '';
  @state() private items: ContentSummary[] = [];
  @state() private categories: string[] = [];
  @state() private nextCursor: string | null = null;
  @state() private loading = false;
  @state() private error: ApiError | null = null;
  private readonly counts = new RoomCountsController(this);
  private abort: AbortController | undefined;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('kind') || changed.has('category')) void this.load(false);
    if (changed.has('kind')) void this.loadCategories();
  }

  protected override render() {
    const heading = HEADINGS[this.kind];
    const category = this.knownCategory();
    return html`<header>
        <h1>${heading.title}${category ? html` <span class="muted">· ${category}</span>` : nothing}</h1>
        <p>${heading.blurb}</p>
        ${
          this.categories.length > 1
            ? html`<salon-category-filter
                .categories=${this.categories}
                .selected=${this.category}
                @salon-category-change=${this.onCategory}
              ></salon-category-filter>`
            : nothing
        }
      </header>
      ${this.error ? html`<p class="state error" role="alert">Could not load the list: ${this.error.message} <button type="button" @click=${() => this.load(false)}>Try again</button></p>` : nothing}
      <div class="grid" aria-busy=${this.loading ? 'true' : 'false'}>
        ${repeat(
          this.items,
          (item) => item.id,
          (item) => html`<salon-content-card .item=${item} .count=${this.counts.countOf(item.id)}></salon-content-card>`,
        )}
      </div>
      ${this.loading ? html`<p class="state" role="status">Loading…</p>` : nothing}
      ${!this.loading && !this.error && this.items.length === 0 ? html`<p class="state">Nothing here yet.</p>` : nothing}
      ${this.nextCursor && !this.loading ? html`<div class="more"><button type="button" @click=${() => this.load(true)}>Load more</button></div>` : nothing}`;
  }

  /**
   * The category the heading names: the store's spelling of the one asked for, once the filter or
   * the list shows the store has it. An address is anyone's link: its own words never head the page.
   */
  private knownCategory(): string {
    const wanted = this.category.toLowerCase();
    if (!wanted) return '';
    const same = (c: string | null) => c?.toLowerCase() === wanted;
    return this.categories.find(same) ?? this.items.find((i) => same(i.category))?.category ?? '';
  }

  private async load(more: boolean): Promise<void> {
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    this.loading = true;
    this.error = null;
    try {
      const page = await listContent(
        { kind: this.kind, category: this.category || undefined, limit: PAGE_SIZE, cursor: more ? (this.nextCursor ?? undefined) : undefined },
        abort.signal,
      );
      this.items = more ? [...this.items, ...page.items.filter((i) => !this.items.some((x) => x.id === i.id))] : page.items;
      this.nextCursor = page.nextCursor;
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      this.error = ApiError.from(err);
    }
    this.loading = false;
  }

  private async loadCategories(): Promise<void> {
    try {
      const page = await listContent({ kind: this.kind, limit: CATEGORY_SCAN });
      const seen = new Set(page.items.map((i) => i.category).filter((c): c is string => !!c));
      this.categories = [...seen].sort((a, b) => a.localeCompare(b));
    } catch {
      this.categories = [];
    }
  }

  private onCategory = (e: CustomEvent<{ category: string }>) => {
    this.category = e.detail.category;
    const url = new URL(location.href);
    if (this.category) url.searchParams.set('category', this.category);
    else url.searchParams.delete('category');
    history.replaceState(null, '', url);
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-content-page': SalonContentPage;
  }
}
