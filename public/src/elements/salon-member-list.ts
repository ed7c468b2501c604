/**
 * `<salon-member-list>`: who is in the room now, with a count. The member's own entry lets them
 * change the name others see.
 *
 * @fires salon-rename - {name} the member chose a new display name.
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { Member } from '../../../src/protocol/messages.js';
import { plural } from '../lib/format.js';
import { MAX_NAME_CHARS } from '../../../src/protocol/names.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-member-list')
export class SalonMemberList extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
      }
      h2 {
        font-size: 0.95rem;
        margin: 0 0 0.5rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
        display: flex;
        flex-direction: column;
        gap: 0.3rem;
      }
      li {
        display: flex;
        align-items: center;
        gap: 0.45rem;
        min-width: 0;
      }
      .avatar {
        flex: none;
        width: 1.7rem;
        height: 1.7rem;
        border-radius: 50%;
        display: grid;
        place-items: center;
        font-size: 0.8rem;
        font-weight: 700;
        background: var(--salon-accent-soft);
        color: var(--salon-accent-strong);
      }
      .name {
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .you {
        font-size: 0.8rem;
      }
      form {
        display: flex;
        gap: 0.3rem;
        flex-wrap: wrap;
      }
      input {
        font: inherit;
        min-width: 0;
        flex: 1;
        padding: 0.25rem 0.5rem;
        border-radius: 8px;
        border: 1px solid var(--salon-border-strong);
        background: var(--salon-surface);
        color: var(--salon-fg);
      }
      .link {
        border: none;
        background: none;
        padding: 0;
        min-height: 0;
        color: var(--salon-link);
        text-decoration: underline;
        font-size: 0.8rem;
      }
      @media (max-width: 720px) {
        :host {
          display: flex;
          flex-wrap: wrap;
          align-items: center;
          gap: 0.4rem;
        }
        h2 {
          margin: 0;
          font-size: 0.85rem;
        }
        .avatar {
          width: 1.4rem;
          height: 1.4rem;
        }
        ul {
          flex-direction: row;
          flex-wrap: nowrap;
          overflow-x: auto;
          min-width: 0;
          flex: 1;
          padding-bottom: 0.15rem;
        }
        li {
          flex: none;
          max-width: 70vw;
        }
        :host {
          flex-wrap: nowrap;
        }
        li {
          background: var(--salon-surface);
          border: 1px solid var(--salon-border);
          border-radius: 999px;
          padding: 0.1rem 0.6rem 0.1rem 0.15rem;
        }
        /* Folded behind the room's Details toggle; the live count is still read out. */
        :host([folded]) h2,
        :host([folded]) ul,
        :host([folded]) .more {
          display: none;
        }
      }
    `,
  ];

  @property({ attribute: false }) members: readonly Member[] = [];
  /** Everyone in the room (the list may show only the first of them). */
  @property({ type: Number }) count = 0;
  /** The member themselves: listed whether or not the server's list (its first members) holds them. */
  @property({ attribute: false }) you: Member | null = null;
  /** Whether the list is the room's now: false while the page is not connected to it. */
  @property({ type: Boolean }) known = true;
  /** On a phone, only the count's live announcement is kept: the room folds the list away. */
  @property({ type: Boolean, reflect: true }) folded = false;
  @state() private editing = false;
  /**
   * The name form closed, so the focus goes back to "change": at once ('now'), or also once the
   * list is back after the rejoin a rename makes ('rejoin': while not connected it shows no one).
   */
  private refocus: 'now' | 'rejoin' | null = null;

  protected override render() {
    // Not connected, the page does not know who is here: "(0)" and "0 people in the room" would say nobody is, the member included.
    if (!this.known) return html`<h2 id="members-heading">Here now <span class="muted" data-unknown>(not connected)</span></h2>`;
    // The server lists the first members to join: in a larger room the member may not be among them.
    const you = this.you;
    const members = you && !this.members.some((m) => m.id === you.id) ? [you, ...this.members] : this.members;
    const count = Math.max(this.count, members.length);
    const unlisted = count - members.length;
    return html`<h2 id="members-heading">Here now <span class="count" data-count=${count}>(${count})</span></h2>
      <span class="visually-hidden" aria-live="polite">${plural(count, 'person', 'people')} in the room</span>
      <ul aria-labelledby="members-heading">
        ${repeat(
          members,
          (m) => m.id,
          (m) => this.renderMember(m),
        )}
      </ul>
      ${unlisted > 0 ? html`<p class="muted more">and ${plural(unlisted, 'other', 'others')}</p>` : nothing}`;
  }

  private renderMember(m: Member) {
    const you = m.id === this.you?.id;
    // The first character, not the first UTF-16 unit: half an emoji shows as "�".
    const initial = (Array.from(m.name.trim())[0] ?? '?').toUpperCase();
    if (you && this.editing) {
      return html`<li data-member=${m.id}>
        <form @submit=${this.onRename} @keydown=${this.onFormKey}>
          <label class="visually-hidden" for="name">Your name</label>
          <input id="name" name="name" .value=${m.name} maxlength=${MAX_NAME_CHARS} required autocomplete="nickname" />
          <button type="submit">Save</button>
          <button type="button" @click=${() => this.stopEditing()}>Cancel</button>
        </form>
      </li>`;
    }
    return html`<li data-member=${m.id}>
      <span class="avatar" aria-hidden="true">${initial}</span>
      <span class="name">${m.name}</span>
      ${
        you
          ? html`<span class="you muted">(you)</span>
              <button class="link" type="button" @click=${this.startEditing} aria-label="Change your name">change</button>`
          : nothing
      }
    </li>`;
  }

  private async startEditing(): Promise<void> {
    this.editing = true;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLInputElement>('#name')?.select();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('known') && !this.known && this.refocus === 'rejoin') this.refocus = 'now';
  }

  protected override updated(): void {
    if (!this.refocus) return;
    const change = this.renderRoot.querySelector<HTMLButtonElement>('button.link');
    if (!change) return;
    if (this.refocus === 'now') this.refocus = null;
    // Only when the focus went nowhere (the form it was in is gone): never taken from elsewhere.
    const active = document.activeElement;
    if (!active || active === document.body) change.focus();
  }

  private stopEditing = (then: 'now' | 'rejoin' = 'now') => {
    this.editing = false;
    this.refocus = then;
  };

  private onFormKey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    this.stopEditing();
  };

  private onRename(e: Event): void {
    e.preventDefault();
    const name = new FormData(e.target as HTMLFormElement).get('name')?.toString().trim();
    this.stopEditing(name ? 'rejoin' : 'now');
    if (name) this.dispatchEvent(new CustomEvent('salon-rename', { detail: { name }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-member-list': SalonMemberList;
  }
}
