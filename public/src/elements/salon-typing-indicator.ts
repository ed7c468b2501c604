/** `<salon-typing-indicator>`: "Ana is typing…" for the other members currently typing. */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import type { Member } from '../../../src/protocol/messages.js';

function describe(members: readonly Member[]): string {
  if (members.length === 0) return '';
  if (members.length === 1) return `${members[0].name} is typing…`;
  if (members.length === 2) return `${members[0].name} and ${members[1].name} are typing…`;
  return `${members.length} people are typing…`;
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
    const text = describe(this.members);
    return text ? html`<span>${text}</span>` : nothing;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-typing-indicator': SalonTypingIndicator;
  }
}
