/** Styles every element shares: focus ring, links, buttons, the visually-hidden helper. Colours come from app.css. */
import { css } from 'lit';

export const baseStyles = css`
  :host {
    box-sizing: border-box;
  }
  *,
  *::before,
  *::after {
    box-sizing: inherit;
  }
  a {
    color: var(--salon-link);
  }
  a:hover {
    text-decoration-thickness: 2px;
  }
  :focus-visible {
    outline: 3px solid var(--salon-focus);
    outline-offset: 2px;
    border-radius: 4px;
  }
  .visually-hidden {
    position: absolute !important;
    width: 1px;
    height: 1px;
    margin: -1px;
    padding: 0;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
    border: 0;
  }
  button,
  .button {
    font: inherit;
    cursor: pointer;
    border: 1px solid var(--salon-border-strong);
    background: var(--salon-surface);
    color: var(--salon-fg);
    border-radius: 999px;
    padding: 0.35rem 0.9rem;
    min-height: 2.25rem;
    text-decoration: none;
    display: inline-flex;
    align-items: center;
    gap: 0.35rem;
  }
  button:hover,
  .button:hover {
    border-color: var(--salon-accent);
  }
  button.primary,
  .button.primary {
    background: var(--salon-accent);
    border-color: var(--salon-accent);
    color: var(--salon-on-accent);
  }
  button:disabled {
    cursor: not-allowed;
    opacity: 0.6;
  }
  .muted {
    color: var(--salon-muted);
  }
`;

/** Thread badges (main, fused, memory off, locked, archived, merged), shared by the thread list and the thread header. */
export const badgeStyles = css`
  .badge {
    display: inline-block;
    font-size: 0.72rem;
    line-height: 1.4;
    border-radius: 999px;
    padding: 0.05rem 0.5rem;
    background: var(--salon-accent-soft);
    color: var(--salon-accent-strong);
    white-space: nowrap;
  }
  .badge[data-badge='fused'] {
    background: var(--salon-assistant-bg);
    color: var(--salon-fg);
    border: 1px solid var(--salon-assistant-border);
  }
  .badge[data-badge='locked'] {
    background: var(--salon-warning-bg);
    color: var(--salon-warning-fg);
  }
  .badge[data-badge='memory-off'] {
    background: transparent;
    color: var(--salon-warning-fg);
    border: 1px dashed var(--salon-warning-fg);
  }
  .badge[data-badge='archived'],
  .badge[data-badge='merged'] {
    background: transparent;
    color: var(--salon-muted);
    border: 1px solid var(--salon-border-strong);
  }
`;
