/**
 * `<salon-room>`: a live room — header, who is here, the messages, who is typing, the composer.
 * The socket and the room's state live in a RoomController; this element only lays them out and
 * hands the children's events to it.
 */
import { LitElement, css, html, type PropertyValues } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { saveDisplayName } from '../lib/identity.js';
import { MAX_MESSAGE_CHARS, RoomController } from '../lib/room-controller.js';
import { baseStyles } from '../lib/styles.js';
import './salon-composer.js';
import './salon-connection-status.js';
import './salon-member-list.js';
import './salon-message-list.js';
import './salon-room-header.js';
import './salon-typing-indicator.js';

@customElement('salon-room')
export class SalonRoom extends LitElement {
  static override styles = [
    baseStyles,
    css`
      :host {
        display: flex;
        flex-direction: column;
        min-height: 0;
        height: 100%;
      }
      .layout {
        flex: 1;
        min-height: 0;
        display: grid;
        grid-template-columns: minmax(0, 1fr) 16rem;
        grid-template-rows: auto minmax(0, 1fr);
        grid-template-areas: 'head members' 'chat members';
        gap: 0.75rem 1.25rem;
      }
      .head {
        grid-area: head;
      }
      .members {
        grid-area: members;
        border-left: 1px solid var(--salon-border);
        padding-left: 1rem;
        overflow-y: auto;
      }
      .chat {
        grid-area: chat;
        display: flex;
        flex-direction: column;
        min-height: 0;
        border: 1px solid var(--salon-border);
        border-radius: 14px;
        background: var(--salon-panel);
      }
      salon-message-list {
        flex: 1;
        min-height: 12rem;
      }
      .bottom {
        border-top: 1px solid var(--salon-border);
        padding: 0.4rem 0.75rem 0.75rem;
      }
      .fatal {
        padding: 2rem 0;
        max-width: 40rem;
      }
      @media (max-width: 720px) {
        .layout {
          grid-template-columns: minmax(0, 1fr);
          grid-template-rows: auto auto minmax(0, 1fr);
          grid-template-areas: 'head' 'members' 'chat';
          gap: 0.5rem;
        }
        .members {
          border-left: none;
          padding-left: 0;
          overflow: visible;
        }
        .bottom {
          padding: 0.4rem 0.5rem 0.5rem;
        }
      }
    `,
  ];

  /** `news_42`, `topic_tech`… */
  @property() roomId = '';

  private readonly controller = new RoomController(this);

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('roomId')) this.controller.setRoom(this.roomId);
  }

  protected override updated(): void {
    const title = this.controller.room?.title;
    if (title && document.title !== `${title} · Salon`) document.title = `${title} · Salon`;
  }

  protected override render() {
    const c = this.controller;
    if (c.fatal) {
      return html`<div class="fatal" role="alert" data-fatal=${c.fatal.code}>
        <h1>Can't open this room</h1>
        <p>${c.fatal.message}</p>
        <p><a href="/">Back to the news</a></p>
      </div>`;
    }
    const queued = c.status === 'offline' || c.status === 'reconnecting';
    return html`<salon-connection-status
        .status=${c.status}
        .retryAt=${c.retryAt}
        .notice=${c.notice}
        @salon-reconnect=${() => c.reconnectNow()}
        @salon-dismiss-notice=${() => c.dismissNotice()}
      ></salon-connection-status>
      <div class="layout">
        <div class="head"><salon-room-header .room=${c.room} .roomId=${this.roomId}></salon-room-header></div>
        <aside class="members" aria-label="People in this room">
          <salon-member-list .members=${c.members} .count=${c.memberCount} .youId=${c.you?.id ?? ''} @salon-rename=${this.onRename}></salon-member-list>
        </aside>
        <section class="chat" aria-label="Discussion">
          <salon-message-list
            .entries=${c.messages}
            .answers=${c.answers}
            .youId=${c.you?.id ?? ''}
            .hasOlder=${c.hasOlder}
            .loadingOlder=${c.loadingOlder}
            @salon-load-older=${() => void c.loadOlder()}
            @salon-retry=${(e: CustomEvent<{ clientId: string }>) => c.retry(e.detail.clientId)}
            @salon-discard=${(e: CustomEvent<{ clientId: string }>) => c.discard(e.detail.clientId)}
          ></salon-message-list>
          <div class="bottom">
            <salon-typing-indicator .members=${c.typing}></salon-typing-indicator>
            <salon-composer
              .maxLength=${MAX_MESSAGE_CHARS}
              .queued=${queued}
              @salon-send=${(e: CustomEvent<{ text: string; ask: boolean; private: boolean }>) => c.send(e.detail.text, e.detail.ask, e.detail.private)}
              @salon-typing=${(e: CustomEvent<{ active: boolean }>) => c.setTyping(e.detail.active)}
            ></salon-composer>
          </div>
        </section>
      </div>`;
  }

  private onRename = (e: CustomEvent<{ name: string }>) => {
    this.controller.rename(saveDisplayName(e.detail.name));
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'salon-room': SalonRoom;
  }
}
