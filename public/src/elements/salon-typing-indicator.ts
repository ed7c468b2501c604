/** `<salon-typing-indicator>`: "Ana is typing…" for the other members currently typing. */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Member } from '../../../src/protocol/messages.js';

/**
 * Each name is a bidi isolate (<bdi>): a right-to-left name, or one ending in digits or
 * punctuation, would otherwise take "and" or the other name into its run and show the two
 * names in the wrong order.
 */
function describe(members: readonly Member[]) {
  if (members.length === 0) return nothing;
  if (members.length === 1) return html`<bdi>${members[0].name}</bdi> is typing…`;
  if (members.length === 2) return html`<bdi>${members[0].name}</bdi> and <bdi>${members[1].name}</bdi> are typing…`;
  return html`${members.length} people are typing…`;
}

@customElement('salon-typing-indicator')
export class SalonTypingIndicator extends LitElement {
  static override styles = css`
    :host {
      display: block;
      min-height: 1.3rem;
      font-size: 0.82rem;
      color: var(--salon-muted);
      font-style: italic;
      overflow-wrap: anywhere;
    }
  `;

  @property({ attribute: false }) members: readonly Member[] = [];

  protected override render() {
    return this.members.length ? html`<span>${describe(this.members)}</span>` : nothing;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-typing-indicator': SalonTypingIndicator;
  }
}
