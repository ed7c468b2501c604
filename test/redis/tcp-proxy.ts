/**
 * A loopback TCP proxy to Redis (or PostgreSQL) that a test can cut (every connection reset, new
 * ones refused) and restore on the same port: the server going away for one node without stopping
 * it. Or freeze: every connection stays open and nothing more is forwarded either way, new ones
 * are accepted and left unanswered, as when the server hangs or the network drops packets
 * silently; `cut()` and `restore()` end that.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  cut(): Promise<void>;
  freeze(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let listenPort = 0;
  let frozen = false;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        if (frozen) {
          sockets.add(client);
          client.on('error', () => {});
          client.on('close', () => sockets.delete(client));
          return;
        }
        const upstream = connect(Number(port || 6379), hostname);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('error', () => {});
          sock.on('close', () => {
            sockets.delete(sock);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(listenPort, '127.0.0.1', () => {
        listenPort = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });

  const freeze = () => {
    frozen = true;
    for (const sock of sockets) {
      sock.unpipe();
      sock.pause();
    }
  };

  const cut = async () => {
    const s = server;
    server = null;
    frozen = false;
    for (const sock of sockets) sock.resetAndDestroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  return { url: `redis://127.0.0.1:${listenPort}`, cut, freeze, restore: listen, close: cut };
}
