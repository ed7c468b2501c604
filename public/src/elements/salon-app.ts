/**
 * `<salon-app>`: the page frame — skip link, site navigation, the search box — and the page for the current
 * address: `/` news, `/posts`, `/post?id=…`, `/videos`, `/watch?id=…`, `/chat?id=…|topic=…`.
 */
import { LitElement, css, html } from 'lit';
import { customElement } from 'lit/decorators.js';
import { clampClusters } from '../../../src/protocol/clusters.js';
import { baseStyles } from '../lib/styles.js';
import './salon-chat-page.js';
import './salon-content-page.js';
import './salon-post-page.js';
import './salon-search.js';
import './salon-watch-page.js';

interface NavItem {
  href: string;
  label: string;
  /** Paths for which this item is the current page. */
  paths: string[];
}

const NAV: NavItem[] = [
  { href: '/', label: 'News', paths: ['/'] },
  { href: '/posts', label: 'Posts', paths: ['/posts', '/post'] },
  { href: '/videos', label: 'Videos', paths: ['/videos', '/watch'] },
  { href: '/chat', label: 'Topics', paths: ['/chat?topic'] },
];

const TITLES: Record<string, string> = { '/': 'News', '/posts': 'Posts', '/post': 'Post', '/videos': 'Videos', '/watch': 'Video', '/chat': 'Discussion' };

@customElement('salon-app')
export class SalonApp extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: flex;
        flex-direction: column;
        height: 100dvh;
      }
      .skip {
        position: absolute;
        left: 0.5rem;
        top: -3rem;
        z-index: 10;
        background: var(--salon-surface);
        padding: 0.5rem 0.8rem;
        border-radius: 8px;
      }
      .skip:focus {
        top: 0.5rem;
      }
      header {
        flex: none;
        border-bottom: 1px solid var(--salon-border);
        background: var(--salon-surface);
      }
      .bar {
        max-width: 72rem;
        margin: 0 auto;
        padding: 0.6rem 1rem;
        display: flex;
        align-items: center;
        gap: 0.5rem 1.5rem;
        flex-wrap: wrap;
      }
      .brand {
        font-weight: 800;
        font-size: 1.2rem;
        letter-spacing: -0.02em;
        color: var(--salon-fg);
        text-decoration: none;
        display: inline-flex;
        align-items: center;
        gap: 0.4rem;
      }
      .brand span {
        color: var(--salon-accent);
      }
      nav ul {
        list-style: none;
        display: flex;
        gap: 0.25rem;
        margin: 0;
        padding: 0;
        flex-wrap: wrap;
      }
      nav a {
        display: inline-block;
        padding: 0.35rem 0.7rem;
        border-radius: 999px;
        color: var(--salon-fg);
        text-decoration: none;
      }
      nav a:hover {
        background: var(--salon-accent-soft);
      }
      nav a[aria-current='page'] {
        background: var(--salon-accent-soft);
        color: var(--salon-accent-strong);
        font-weight: 650;
      }
      main {
        flex: 1;
        min-height: 0;
        overflow-y: auto;
      }
      .page {
        max-width: 72rem;
        margin: 0 auto;
        padding: 1.25rem 1rem 2rem;
      }
      main.chat {
        overflow: hidden;
      }
      main.chat .page {
        height: 100%;
        padding-bottom: 0.75rem;
        display: flex;
        flex-direction: column;
      }
      main.chat .page > * {
        flex: 1;
        min-height: 0;
      }
      @media (max-width: 720px) {
        .page {
          padding: 0.75rem 0.6rem 1.5rem;
        }
        /* Narrow: the sections stay on one line beside the name (scrolling sideways if even that is
           too wide) and the search box takes the next row, instead of the sections wrapping into a
           column of three rows. */
        .bar {
          padding: 0.4rem 0.6rem;
          gap: 0.35rem 0.5rem;
        }
        nav {
          flex: 1 1 0;
          min-width: 0;
        }
        nav ul {
          flex-wrap: nowrap;
          overflow-x: auto;
        }
        nav a {
          padding: 0.3rem 0.45rem;
          white-space: nowrap;
        }
      }
      @media (max-width: 560px) {
        salon-search {
          flex: 1 1 100%;
          max-width: none;
        }
      }
    `,
  ];

  private readonly path = location.pathname.replace(/\/+$/, '') || '/';
  private readonly params = new URLSearchParams(location.search);

  override connectedCallback(): void {
    super.connectedCallback();
    document.title = `${Object.hasOwn(TITLES, this.path) ? TITLES[this.path] : 'Not found'} · Salon`;
  }

  protected override render() {
    const chat = this.path === '/chat';
    return html`<a class="skip" href="#main" @click=${this.skipToMain}>Skip to content</a>
      <header>
        <div class="bar">
          <a class="brand" href="/"><span aria-hidden="true">◆</span>Salon</a>
          <nav aria-label="Sections">
            <ul>
              ${NAV.map((item) => html`<li><a href=${item.href} aria-current=${this.isCurrent(item) ? 'page' : 'false'}>${item.label}</a></li>`)}
            </ul>
          </nav>
          <salon-search></salon-search>
        </div>
      </header>
      <main id="main" class=${chat ? 'chat' : ''} tabindex="-1">
        <div class="page">${this.renderPage()}</div>
      </main>`;
  }

  private renderPage() {
    switch (this.path) {
      case '/':
        return html`<salon-content-page kind="news" .category=${this.param('category')}></salon-content-page>`;
      case '/posts':
        return html`<salon-content-page kind="post" .category=${this.param('category')}></salon-content-page>`;
      case '/post':
        return html`<salon-post-page .itemId=${this.param('id')}></salon-post-page>`;
      case '/videos':
        return html`<salon-content-page kind="video" .category=${this.param('category')}></salon-content-page>`;
      case '/watch':
        return html`<salon-watch-page .itemId=${this.param('id')}></salon-watch-page>`;
      case '/chat':
        return html`<salon-chat-page></salon-chat-page>`;
      default:
        return html`<h1>Not found</h1>
          <p>There is no page at this address. <a href="/">Back to the news</a></p>`;
    }
  }

  /** A query parameter, '' when absent. An address is anyone's link, and the category is shown in the heading. */
  private param(name: string): string {
    return clampClusters(this.params.get(name) ?? '');
  }

  private isCurrent(item: NavItem): boolean {
    if (item.paths.includes('/chat?topic')) return this.path === '/chat' && !this.params.has('id');
    return item.paths.includes(this.path);
  }

  private skipToMain = (e: Event) => {
    e.preventDefault();
    this.renderRoot.querySelector<HTMLElement>('main')?.focus();
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-app': SalonApp;
  }
}
