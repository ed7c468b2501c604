/**
 * The layout of `<salon-room>`: the head, the threads and people beside the conversation (above it
 * on a phone), and on a phone the head folded behind the Details toggle until it is opened
 * (`.layout.folded` / `.layout.open`; what folds carries the `fold` class).
 */
import { css } from 'lit';

export const roomLayoutStyles = css`
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
    min-width: 0;
    display: flex;
    align-items: flex-start;
    gap: 0.75rem;
  }
  salon-room-header {
    flex: 1;
    min-width: 0;
  }
  .head-tools {
    flex: none;
    display: flex;
    align-items: flex-start;
    gap: 0.35rem;
  }
  .details-toggle {
    display: none;
  }
  .side {
    grid-area: members;
    border-left: 1px solid var(--salon-border);
    padding-left: 1rem;
    overflow-y: auto;
    display: flex;
    flex-direction: column;
    gap: 1.25rem;
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
    .side {
      border-left: none;
      padding-left: 0;
      overflow: visible;
      min-width: 0;
      gap: 0.5rem;
    }
    .bottom {
      padding: 0.4rem 0.5rem 0.5rem;
    }
    /* A phone's height must still hold the composer below the messages. */
    salon-message-list {
      min-height: 6rem;
    }
    /* Folded (the default on a phone), the head is one line: the title and the toggle that opens
       what it folds: the room's details, the people here, starting a thread, the thread's header.
       The threads stay as one row of buttons when there is another to switch to. */
    .head {
      display: flex;
      align-items: center;
      gap: 0.5rem;
    }
    .head-tools {
      align-self: flex-start;
    }
    /* The find button is its icon alone here; its name stays "Find in this room". */
    .find-toggle {
      min-height: 2rem;
      padding: 0.15rem 0.55rem;
    }
    .find-label {
      display: none;
    }
    .details-toggle {
      display: inline-flex;
      flex: none;
      min-height: 2rem;
      padding: 0.15rem 0.65rem;
      font-size: 0.85rem;
      white-space: nowrap;
    }
    .details-toggle .chevron {
      display: inline-block;
      transition: transform 0.15s;
    }
    .details-toggle[aria-expanded='true'] .chevron {
      transform: rotate(180deg);
    }
    /* Folded, what the thread's header would say (merge suggestions, memory off) is marked on the toggle. */
    .notes-dot {
      align-self: center;
      width: 0.55rem;
      height: 0.55rem;
      margin-left: 0.35rem;
      border-radius: 50%;
      background: var(--salon-accent-strong);
      forced-color-adjust: none;
    }
    /* Open, the title keeps the whole width: Find and the toggle sit at the end of the line above
       it, and stay there while the head scrolls (the toggle closes what scrolls). Put first and
       taking no height, they stick from the head's top without moving the header down. */
    .open .head {
      display: flex;
      flex-direction: column;
      align-items: stretch;
    }
    .open .head-tools {
      order: -1;
      position: sticky;
      top: 0;
      z-index: 1;
      align-self: flex-end;
      height: 2rem;
      margin-bottom: -2rem;
    }
    /* Open, the head, the threads and people, and the thread's header each scroll within a share of
       the screen: a very long title or many suggestions must not push the composer off it. */
    .open .head {
      max-height: 20dvh;
      overflow-y: auto;
      overscroll-behavior: contain;
    }
    .open .side {
      max-height: 16dvh;
      overflow-y: auto;
      overscroll-behavior: contain;
    }
    .open salon-thread-header {
      max-height: 16dvh;
      overflow-y: auto;
      overscroll-behavior: contain;
      flex: none;
    }
    .open salon-room-header::part(kind) {
      display: flex;
      align-items: center;
      min-height: 2.25rem;
      margin-right: 12rem;
    }
    .folded .fold {
      display: none;
    }
    .folded .side {
      gap: 0;
    }
    .folded .members {
      height: 0;
    }
  }
  @media (max-width: 720px) and (prefers-reduced-motion: reduce) {
    .details-toggle .chevron {
      transition: none;
    }
  }
`;
