/**
 * A page's room socket routed to the server through the test, which can drop it and rewrite the
 * next welcome: how a page meets a node behind the others, a cut catch-up or a wiped store.
 */
import type { Page, WebSocketRoute } from 'playwright-core';
import type { Message, WelcomeFrame } from '../../src/protocol/messages.js';

/** What the test does to a welcome before the page gets it. */
export type WelcomeRewrite = (welcome: WelcomeFrame) => void;

/** The routed socket as the test holds it. */
export interface RewritingRoute {
  /** The stored messages (seq above 0) the server sent, in order. */
  readonly messages: Message[];
  /** The main thread the server's last welcome named. */
  readonly threadId: string;
  /** Drops the socket; the welcome of the page's next one is rewritten. Resolves once the page was sent it. */
  rejoin(rewrite: WelcomeRewrite): Promise<void>;
}

/** What the test answers itself: a frame the page sends, answered through `toPage`; true keeps it from the server. */
export type PageFrameHandler = (frame: { type: string; clientId?: string; threadId?: string }, toPage: (frame: string) => void) => boolean;

/** Routes `page`'s room sockets to the server; `fromPage` may answer the page's frames instead. */
export async function routeRewritingWelcomes(page: Page, fromPage: PageFrameHandler = () => false): Promise<RewritingRoute> {
  let route: WebSocketRoute | undefined;
  let toServer: WebSocketRoute | undefined;
  let rewrite: WelcomeRewrite | undefined;
  let rewritten: (() => void) | undefined;
  let threadId = '';
  const messages: Message[] = [];
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    route = ws;
    const server = ws.connectToServer();
    toServer = server;
    ws.onMessage((m) => {
      if (!fromPage(JSON.parse(String(m)), (frame) => ws.send(frame))) server.send(m);
    });
    server.onMessage((m) => {
      const frame = JSON.parse(String(m)) as { type: string; message?: Message };
      if (frame.type === 'message' && frame.message!.seq > 0) messages.push(frame.message!);
      if (frame.type !== 'welcome') return ws.send(m);
      const welcome = frame as WelcomeFrame;
      threadId = welcome.threadId;
      if (!rewrite) return ws.send(m);
      rewrite(welcome);
      rewrite = undefined;
      ws.send(JSON.stringify(welcome));
      rewritten?.();
    });
  });
  return {
    messages,
    get threadId() {
      return threadId;
    },
    rejoin: (r) =>
      new Promise<void>((resolve) => {
        rewrite = r;
        rewritten = resolve;
        void toServer!.close();
        void route!.close();
      }),
  };
}
