/**
 * `<salon-source-list>`: the numbered sources under an assistant answer, each linking to its
 * original. Comments (from Hacker News or Reddit) and the room's own discussion are labelled as such; a discussion
 * source is a button that asks the message list to show the messages it cites
 * (`salon-show-messages`, detail `{messageIds}`).
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { Source } from '../../../src/protocol/messages.js';
import { hostOf } from '../lib/format.js';
import { sourceLink } from '../lib/source-links.js';
import { baseStyles } from '../lib/styles.js';

/** Longest snippet shown under a source. */
const SNIPPET_CHARS = 160;

function label(source: Source): string {
  // A comment's title is its label, `HN comment by pg` or `Reddit comment by spez`: the tag names the site.
  if (source.kind === 'comment') {
    const site = /^(HN|Reddit) comment by /.exec(source.title)?.[1];
    return site ? `${site} comment` : 'comment';
  }
  if (source.sourceType === 'conversation' || source.kind === 'thread') return 'this discussion';
  if (source.kind === 'video') return 'video';
  if (source.kind === 'post') return 'post';
  return 'article';
}

@customElement('salon-source-list')
export class SalonSourceList extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: block;
        margin-top: 0.6rem;
        font-size: 0.9rem;
      }
      h3 {
        font-size: 0.8rem;
        text-transform: uppercase;
        letter-spacing: 0.05em;
        margin: 0 0 0.3rem;
        color: var(--salon-muted);
      }
      ol {
        margin: 0;
        padding: 0;
        list-style: none;
        display: grid;
        gap: 0.3rem;
      }
      li {
        display: grid;
        grid-template-columns: auto 1fr;
        gap: 0.5rem;
      }
      .n {
        font-weight: 600;
        color: var(--salon-muted);
        font-variant-numeric: tabular-nums;
      }
      .tag {
        display: inline-block;
        font-size: 0.75rem;
        border: 1px solid var(--salon-border);
        border-radius: 999px;
        padding: 0 0.45rem;
        margin-left: 0.3rem;
        color: var(--salon-muted);
        white-space: nowrap;
      }
      li > span {
        min-width: 0;
        overflow-wrap: anywhere;
      }
      button.show {
        font: inherit;
        color: var(--salon-link, inherit);
        background: none;
        border: 0;
        padding: 0;
        text-align: left;
        text-decoration: underline;
        cursor: pointer;
      }
      .snippet {
        display: block;
        color: var(--salon-muted);
        font-size: 0.82rem;
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
      }
    `,
  ];

  @property({ attribute: false }) sources: Source[] = [];

  protected override render() {
    if (!this.sources.length) return nothing;
    return html`<h3>Sources</h3>
      <ol>
        ${repeat(
          this.sources,
          (s) => `${s.n}:${s.id}`,
          (s) => this.renderSource(s),
        )}
      </ol>`;
  }

  private renderSource(source: Source) {
    const link = sourceLink(source, location.origin);
    const title = source.title || source.id;
    const snippet = source.snippet.length > SNIPPET_CHARS ? `${source.snippet.slice(0, SNIPPET_CHARS)}…` : source.snippet;
    const host = link?.external ? hostOf(link.href) : '';
    const cited = source.messageIds ?? [];
    return html`<li data-source=${source.n}>
      <span class="n">[${source.n}]</span>
      <span>
        ${
          cited.length
            ? html`<button class="show" type="button" title="Show these messages" @click=${() => this.show(cited)}>${title}</button>`
            : link
              ? html`<a href=${link.href} target=${link.external ? '_blank' : '_self'} rel=${link.external ? 'noopener noreferrer nofollow' : nothing}
                  >${title}</a
                >`
              : html`<span>${title}</span>`
        }
        <span class="tag">${label(source)}</span>${host ? html` <span class="muted">${host}</span>` : nothing}
        ${snippet ? html`<span class="snippet" title=${snippet}>${snippet}</span>` : nothing}
      </span>
    </li>`;
  }

  private show(messageIds: string[]): void {
    this.dispatchEvent(new CustomEvent('salon-show-messages', { detail: { messageIds }, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-source-list': SalonSourceList;
  }
}
