/**
 * `<salon-category-filter>`: "All" plus one toggle per category; the chosen one is pressed.
 *
 * @fires salon-category-change - {category} the member picked a category ('' for all).
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-category-filter')
export class SalonCategoryFilter extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      div {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4rem;
      }
      button[aria-pressed='true'] {
        background: var(--salon-fg);
        color: var(--salon-bg);
        border-color: var(--salon-fg);
      }
    `,
  ];

  @property({ attribute: false }) categories: readonly string[] = [];
  /** The chosen category, '' for all. */
  @property() selected = '';

  protected override render() {
    return html`<div role="group" aria-label="Filter by category">
      ${repeat(
        ['', ...this.categories],
        (c) => c,
        (c) =>
          html`<button type="button" data-category=${c} aria-pressed=${c === this.selected ? 'true' : 'false'} @click=${() => this.pick(c)}>
            ${c || 'All'}
          </button>`,
      )}
    </div>`;
  }

  private pick(category: string): void {
    if (category === this.selected) return;
    this.dispatchEvent(new CustomEvent('salon-category-change', { detail: { category }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-category-filter': SalonCategoryFilter;
  }
}
