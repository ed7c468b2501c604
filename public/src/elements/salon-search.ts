/**
 * `<salon-search>`: the search box in the page header. Typing searches (`GET /api/v1/search`)
 * and opens a panel of results — kind, title, date, site, snippet and a Discuss link — with
 * filters by kind, category, date and site.
 *
 * Keyboard: `/` anywhere outside a text field focuses the box; ArrowDown/ArrowUp (and Home/End)
 * move through the results; Enter opens the active result's page (Shift+Enter its discussion);
 * Escape closes the panel, a second Escape clears the box. The box is an ARIA combobox whose
 * popup is the results listbox (`aria-activedescendant` names the active option); the count of
 * results is announced in a status region.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { ApiError, listContent, searchContent, type SearchHit } from '../lib/api.js';
import { formatDate } from '../lib/format.js';
import { DATE_RANGES, KIND_LABELS, NO_FILTERS, hitHref, mergeChoices, searchQuery, type SearchFilters } from '../lib/search-filters.js';
import { baseStyles } from '../lib/styles.js';

/** Pause after the last keystroke before searching. */
const DEBOUNCE_MS = 250;
/** Results asked for. */
const RESULTS = 10;
/** Items scanned once to learn the categories for the filter. */
const CATEGORY_SCAN = 100;
const LISTBOX_ID = 'search-results';

/** True when a key pressed in `target` is typing, so `/` must not be taken. */
function isTyping(target: EventTarget | undefined): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

@customElement('salon-search')
export class SalonSearch extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        position: relative;
        flex: 1 1 14rem;
        max-width: 28rem;
        min-width: 0;
      }
      input[type='search'] {
        width: 100%;
        font: inherit;
        padding: 0.4rem 0.8rem;
        border-radius: 999px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-bg);
        color: var(--salon-fg);
        min-height: 2.25rem;
      }
      .panel {
        position: absolute;
        top: calc(100% + 0.4rem);
        right: 0;
        width: min(38rem, calc(100vw - 1rem));
        max-height: min(75vh, 40rem);
        overflow-y: auto;
        z-index: 20;
        background: var(--salon-surface);
        border: 1px solid var(--salon-border-strong);
        border-radius: 12px;
        box-shadow: 0 10px 30px rgb(0 0 0 / 0.18);
        padding: 0.6rem;
      }
      .filters {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem 0.6rem;
        padding-bottom: 0.5rem;
        border-bottom: 1px solid var(--salon-border);
        font-size: 0.85rem;
      }
      .filters label {
        display: inline-flex;
        align-items: center;
        gap: 0.3rem;
        color: var(--salon-muted);
      }
      select {
        font: inherit;
        max-width: 11rem;
        border-radius: 6px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-bg);
        color: var(--salon-fg);
        padding: 0.15rem 0.3rem;
      }
      [role='listbox'] {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      [role='option'] {
        padding: 0.55rem 0.6rem;
        border-radius: 8px;
        cursor: pointer;
        display: grid;
        gap: 0.2rem;
      }
      [role='option'] + [role='option'] {
        border-top: 1px solid var(--salon-border);
      }
      [role='option'][aria-selected='true'] {
        background: var(--salon-accent-soft);
        outline: 2px solid var(--salon-accent);
        outline-offset: -2px;
      }
      .meta {
        display: flex;
        flex-wrap: wrap;
        gap: 0.2rem 0.6rem;
        font-size: 0.78rem;
        color: var(--salon-muted);
        align-items: center;
      }
      .kind {
        font-weight: 700;
        text-transform: uppercase;
        letter-spacing: 0.05em;
        color: var(--salon-accent-strong);
      }
      .title {
        font-weight: 650;
        color: var(--salon-fg);
        text-decoration: none;
      }
      .snippet {
        margin: 0;
        font-size: 0.88rem;
        color: var(--salon-muted);
        line-height: 1.4;
      }
      .discuss {
        justify-self: start;
        font-size: 0.82rem;
        font-weight: 650;
      }
      .state {
        margin: 0.6rem 0.2rem 0.2rem;
        color: var(--salon-muted);
      }
      .error {
        color: var(--salon-danger);
      }
      .hint {
        margin: 0.5rem 0.2rem 0;
        font-size: 0.78rem;
        color: var(--salon-muted);
      }
    `,
  ];

  @state() private query = '';
  @state() private filters: SearchFilters = { ...NO_FILTERS };
  @state() private hits: SearchHit[] = [];
  @state() private active = -1;
  @state() private open = false;
  @state() private loading = false;
  @state() private error: ApiError | null = null;
  /** The words the shown hits answer (so "no results" is never said of words still being searched). */
  @state() private answered = '';
  @state() private categories: string[] = [];
  @state() private sites: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private abort: AbortController | undefined;
  private categoriesAsked = false;

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('keydown', this.onDocumentKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('keydown', this.onDocumentKey);
    clearTimeout(this.timer);
    this.abort?.abort();
  }

  /** Focuses the box (what `/` does). */
  override focus(): void {
    this.renderRoot.querySelector('input')?.focus();
  }

  protected override render() {
    const expanded = this.open && this.query.trim().length > 0;
    const activeId = expanded && this.active >= 0 ? this.optionId(this.active) : nothing;
    return html`<div role="search" @focusout=${this.onFocusOut}>
      <label class="visually-hidden" for="search-box">Search news, posts and videos</label>
      <input
        id="search-box"
        type="search"
        placeholder="Search  /"
        autocomplete="off"
        spellcheck="false"
        maxlength="500"
        role="combobox"
        aria-autocomplete="list"
        aria-haspopup="listbox"
        aria-controls=${LISTBOX_ID}
        aria-expanded=${expanded ? 'true' : 'false'}
        aria-activedescendant=${activeId}
        aria-keyshortcuts="/"
        .value=${this.query}
        @input=${this.onInput}
        @keydown=${this.onKey}
        @focus=${this.onFocus}
      />
      <div class="panel" ?hidden=${!expanded} @mousedown=${this.keepFocus}>${this.renderFilters()} ${this.renderResults()}</div>
      <p class="visually-hidden" role="status">${expanded ? this.statusText() : ''}</p>
    </div>`;
  }

  private renderFilters() {
    const f = this.filters;
    const select = (name: keyof SearchFilters, label: string, options: { value: string; label: string }[]) =>
      html`<label
        >${label}
        <select data-filter=${name} @change=${(e: Event) => this.setFilter(name, (e.target as HTMLSelectElement).value)}>
          ${options.map((o) => html`<option value=${o.value} ?selected=${o.value === f[name]}>${o.label}</option>`)}
        </select></label
      >`;
    const choices = (values: string[], any: string) => [{ value: '', label: any }, ...values.map((v) => ({ value: v, label: v }))];
    return html`<div class="filters" role="group" aria-label="Filter the results">
      ${select('kind', 'Kind', [{ value: '', label: 'All kinds' }, ...Object.entries(KIND_LABELS).map(([value, label]) => ({ value, label }))])}
      ${select('category', 'Category', choices(mergeChoices(this.categories, [f.category]), 'All categories'))}
      ${select(
        'date',
        'Date',
        DATE_RANGES.map((r) => ({ value: r.value, label: r.label })),
      )}
      ${select('source', 'Site', choices(mergeChoices(this.sites, [f.source]), 'All sites'))}
    </div>`;
  }

  private renderResults() {
    return html`<ul id=${LISTBOX_ID} role="listbox" aria-label="Search results">
        ${repeat(
          this.hits,
          (hit) => hit.id,
          (hit, i) => this.renderHit(hit, i),
        )}
      </ul>
      ${this.error ? html`<p class="state error" role="alert">Search failed: ${this.error.message}</p>` : nothing}
      ${!this.error && this.loading && this.hits.length === 0 ? html`<p class="state">Searching…</p>` : nothing}
      ${!this.error && !this.loading && this.answered && this.hits.length === 0 ? html`<p class="state" data-empty>No results.</p>` : nothing}
      <p class="hint" aria-hidden="true">↑↓ to move · Enter to open · Shift+Enter to discuss · Esc to close</p>`;
  }

  private renderHit(hit: SearchHit, i: number) {
    return html`<li
      id=${this.optionId(i)}
      role="option"
      aria-selected=${i === this.active ? 'true' : 'false'}
      data-id=${hit.id}
      @mousemove=${() => (this.active = i)}
      @click=${(e: MouseEvent) => this.onOptionClick(e, hit)}
    >
      <span class="meta">
        <span class="kind">${KIND_LABELS[hit.kind] ?? hit.kind}</span>
        ${hit.publishedAt ? html`<time datetime=${hit.publishedAt}>${formatDate(hit.publishedAt)}</time>` : nothing}
        ${hit.category ? html`<span>${hit.category}</span>` : nothing} ${hit.site ? html`<span data-site>${hit.site}</span>` : nothing}
      </span>
      <a class="title" href=${hitHref(hit)} tabindex="-1">${hit.title}</a>
      ${hit.snippet ? html`<p class="snippet">${hit.snippet}</p>` : nothing}
      <a class="discuss" href="/chat?id=${encodeURIComponent(hit.id)}" tabindex="-1" aria-label="Discuss “${hit.title}”">Discuss</a>
    </li>`;
  }

  private statusText(): string {
    if (this.error) return 'Search failed.';
    if (this.loading) return 'Searching…';
    if (!this.answered) return '';
    const n = this.hits.length;
    return n === 0 ? 'No results.' : `${n} result${n === 1 ? '' : 's'}. Use the up and down arrows to move through them.`;
  }

  private optionId(i: number): string {
    return `search-hit-${i}`;
  }

  private onFocus = () => {
    this.open = true;
    void this.loadCategories();
  };

  private onFocusOut = (e: FocusEvent) => {
    const next = e.relatedTarget as Node | null;
    if (next && this.renderRoot.contains(next)) return;
    this.open = false;
  };

  /** A click in the panel (but on a filter) keeps the focus in the box, so the panel stays open. */
  private keepFocus = (e: MouseEvent) => {
    if (!(e.target as Element).closest('select')) e.preventDefault();
  };

  private onInput = (e: Event) => {
    this.query = (e.target as HTMLInputElement).value;
    this.open = true;
    this.schedule();
  };

  private setFilter(name: keyof SearchFilters, value: string): void {
    this.filters = { ...this.filters, [name]: value };
    this.schedule(0);
  }

  private schedule(delay = DEBOUNCE_MS): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), delay);
  }

  private async run(): Promise<void> {
    clearTimeout(this.timer);
    this.abort?.abort();
    const q = this.query.trim();
    if (!q) {
      this.hits = [];
      this.answered = '';
      this.active = -1;
      this.loading = false;
      return;
    }
    const abort = (this.abort = new AbortController());
    this.loading = true;
    this.error = null;
    try {
      const hits = await searchContent(searchQuery(q, this.filters, RESULTS), abort.signal);
      this.hits = hits;
      this.answered = q;
      this.active = hits.length ? 0 : -1;
      this.sites = mergeChoices(
        this.sites,
        hits.map((h) => h.site),
      );
      this.categories = mergeChoices(
        this.categories,
        hits.map((h) => h.category),
      );
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      this.error = ApiError.from(err);
      this.hits = [];
      this.active = -1;
    }
    this.loading = false;
  }

  private async loadCategories(): Promise<void> {
    if (this.categoriesAsked) return;
    this.categoriesAsked = true;
    try {
      const page = await listContent({ limit: CATEGORY_SCAN });
      this.categories = mergeChoices(
        this.categories,
        page.items.map((i) => i.category),
      );
    } catch {
      this.categoriesAsked = false;
    }
  }

  private onKey = (e: KeyboardEvent) => {
    const n = this.hits.length;
    switch (e.key) {
      case 'ArrowDown':
      case 'ArrowUp': {
        e.preventDefault();
        this.open = true;
        if (!n) return;
        const step = e.key === 'ArrowDown' ? 1 : -1;
        this.move(this.active < 0 ? (step > 0 ? 0 : n - 1) : (this.active + step + n) % n);
        return;
      }
      case 'Home':
      case 'End':
        if (!n || !this.open) return;
        e.preventDefault();
        this.move(e.key === 'Home' ? 0 : n - 1);
        return;
      case 'Enter': {
        e.preventDefault();
        const hit = this.hits[this.active];
        if (hit && this.answered === this.query.trim()) this.go(hit, e.shiftKey);
        else void this.run();
        return;
      }
      case 'Escape':
        e.preventDefault();
        if (this.open && this.query) this.open = false;
        else {
          this.query = '';
          void this.run();
        }
        return;
    }
  };

  private move(i: number): void {
    this.active = i;
    void this.updateComplete.then(() => this.renderRoot.querySelector(`#${this.optionId(i)}`)?.scrollIntoView({ block: 'nearest' }));
  }

  private onOptionClick(e: MouseEvent, hit: SearchHit): void {
    // A click on one of the option's links follows that link.
    if ((e.target as HTMLElement).closest('a')) return;
    this.go(hit, false);
  }

  private go(hit: SearchHit, discuss: boolean): void {
    this.open = false;
    location.assign(discuss ? `/chat?id=${encodeURIComponent(hit.id)}` : hitHref(hit));
  }

  private onDocumentKey = (e: KeyboardEvent) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    if (isTyping(e.composedPath()[0])) return;
    e.preventDefault();
    this.focus();
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-search': SalonSearch;
  }
}
