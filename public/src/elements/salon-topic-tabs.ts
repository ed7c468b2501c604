/**
 * `<salon-topic-tabs>`: the topic rooms one can switch between; each shows how many are there.
 * They are plain links (open in a new tab works); a plain click switches in place.
 *
 * @fires salon-topic-change - {topic} the member picked another topic.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-topic-tabs')
export class SalonTopicTabs extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        margin-bottom: 0.75rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0 0 0.25rem;
        display: flex;
        gap: 0.4rem;
        overflow-x: auto;
      }
      a {
        display: inline-flex;
        gap: 0.35rem;
        align-items: center;
        white-space: nowrap;
        padding: 0.3rem 0.8rem;
        border-radius: 999px;
        border: 1px solid var(--salon-border-strong);
        text-decoration: none;
        color: var(--salon-fg);
        min-height: 2.1rem;
      }
      a[aria-current='page'] {
        background: var(--salon-fg);
        color: var(--salon-bg);
        border-color: var(--salon-fg);
      }
      .n {
        font-size: 0.75rem;
        opacity: 0.8;
      }
    `,
  ];

  /** Topic slugs (`tech`, `science`…). */
  @property({ attribute: false }) topics: readonly string[] = [];
  @property() selected = '';
  /** People per topic room id (`topic_<slug>`). */
  @property({ attribute: false }) counts: ReadonlyMap<string, number> = new Map();

  protected override render() {
    return html`<nav aria-label="Topics">
      <ul>
        ${repeat(
          this.topics,
          (t) => t,
          (t) => {
            const n = this.counts.get(`topic_${t}`) ?? 0;
            return html`<li>
              <a
                href="/chat?topic=${encodeURIComponent(t)}"
                data-topic=${t}
                aria-current=${t === this.selected ? 'page' : 'false'}
                @click=${(e: MouseEvent) => this.onClick(e, t)}
                >#${t}${n > 0 ? html`<span class="n" aria-label="${n} here">· ${n}</span>` : nothing}</a
              >
            </li>`;
          },
        )}
      </ul>
    </nav>`;
  }

  private onClick(e: MouseEvent, topic: string): void {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (topic !== this.selected) {
      this.dispatchEvent(new CustomEvent('salon-topic-change', { detail: { topic }, bubbles: true, composed: true }));
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-topic-tabs': SalonTopicTabs;
  }
}
