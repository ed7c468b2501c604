/** `<salon-discuss-link>`: the "Discuss" link into an item's room, with how many people are there now. */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-discuss-link')
export class SalonDiscussLink extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: inline-block;
      }
      a {
        display: inline-flex;
        align-items: center;
        gap: 0.45rem;
        padding: 0.35rem 0.85rem;
        border-radius: 999px;
        background: var(--salon-accent);
        color: var(--salon-on-accent);
        font-weight: 650;
        text-decoration: none;
        font-size: 0.9rem;
        min-height: 2.25rem;
      }
      a:hover {
        background: var(--salon-accent-strong);
      }
      .count {
        font-weight: 500;
        font-size: 0.8rem;
        background: rgb(255 255 255 / 0.22);
        border-radius: 999px;
        padding: 0.05rem 0.5rem;
        display: inline-flex;
        align-items: center;
        gap: 0.3rem;
      }
      .live {
        width: 0.45rem;
        height: 0.45rem;
        border-radius: 50%;
        background: var(--salon-live);
      }
    `,
  ];

  /** The item's id; the link leads to `/chat?id=<contentId>`. */
  @property() contentId = '';
  /** What the item is called, for the accessible name. */
  @property() itemTitle = '';
  /** People in the room now; undefined while unknown. */
  @property({ type: Number }) count: number | undefined = undefined;

  protected override render() {
    const n = this.count;
    const people = n === undefined ? '' : n === 0 ? 'nobody here yet' : n === 1 ? '1 person here now' : `${n} people here now`;
    const label = `Discuss${this.itemTitle ? ` “${this.itemTitle}”` : ''}${people ? ` — ${people}` : ''}`;
    return html`<a href="/chat?id=${encodeURIComponent(this.contentId)}" aria-label=${label} data-count=${n ?? ''}>
      Discuss ${n === undefined ? nothing : html`<span class="count">${n > 0 ? html`<span class="live" aria-hidden="true"></span>` : nothing}${n} here</span>`}
    </a>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-discuss-link': SalonDiscussLink;
  }
}
