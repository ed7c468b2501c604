/**
 * `<salon-markdown>`: shows a message's text — or, with `document`, a post's body — through the
 * safe markdown renderer (lib/markdown.ts). The sanitised result is inserted as DOM nodes, never
 * as an HTML string.
 */
import { LitElement, css, html, type PropertyValues } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { renderDocument, renderMarkdown } from '../lib/markdown.js';
import { baseStyles } from '../lib/styles.js';

@customElement('salon-markdown')
export class SalonMarkdown extends LitElement {
  static override styles = [
    baseStyles,
    css`
      /* A body is a bidi isolate of its own: no control in it reorders what the page shows around it. */
      :host {
        display: block;
        overflow-wrap: anywhere;
        line-height: 1.5;
        unicode-bidi: isolate;
      }
      pre {
        unicode-bidi: isolate;
      }
      p,
      ul,
      ol,
      blockquote,
      pre {
        margin: 0 0 0.5em;
      }
      :last-child {
        margin-bottom: 0;
      }
      ul,
      ol {
        padding-left: 1.4em;
      }
      blockquote {
        border-left: 3px solid var(--salon-border-strong);
        padding-left: 0.75em;
        color: var(--salon-muted);
      }
      code {
        font-family: var(--salon-mono);
        font-size: 0.9em;
        background: var(--salon-code-bg);
        padding: 0.1em 0.3em;
        border-radius: 4px;
      }
      pre {
        background: var(--salon-code-bg);
        padding: 0.6em 0.8em;
        border-radius: 6px;
        overflow-x: auto;
        max-width: 100%;
      }
      pre code {
        background: none;
        padding: 0;
      }
      h2,
      h3,
      h4,
      h5,
      h6 {
        line-height: 1.25;
        margin: 1.2em 0 0.4em;
      }
      hr {
        border: none;
        border-top: 1px solid var(--salon-border);
        margin: 1em 0;
      }
      :host([document]) p {
        margin-bottom: 0.9em;
      }
      /* The room's find bar marks the words it found here (lib/find-highlight.ts). */
      ::highlight(salon-find) {
        background-color: #fde047;
        color: #1d1c1a;
      }
      @media (forced-colors: active) {
        ::highlight(salon-find) {
          background-color: Mark;
          color: MarkText;
        }
      }
    `,
  ];

  /** Markdown source. */
  @property() text = '';
  /** A document (a post's body): headings and rules too, and any length, rendered in bounded segments. */
  @property({ type: Boolean, reflect: true }) document = false;

  private content: DocumentFragment | null = null;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('text') || changed.has('document')) this.content = this.document ? renderDocument(this.text) : renderMarkdown(this.text);
  }

  protected override render() {
    return html`${this.content}`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-markdown': SalonMarkdown;
  }
}
