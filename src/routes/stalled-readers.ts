/**
 * A client must keep taking the answer it asked for. Node bounds how long a request takes to
 * arrive (HTTP_REQUEST_TIMEOUT_MS) and how long a connection idles between requests (the
 * keep-alive timeout), but nothing while an answer is being written: a client that asked for a
 * large answer (an article, the OpenAPI document) and never read it held its connection, and the
 * part of the answer its kernel would not take, for as long as it liked. From the moment an answer
 * is sent the connection has an inactivity timeout: a write the kernel completes, a byte read,
 * restarts it, so a slow reader that makes progress is never cut, and one that stalls for the
 * whole time is destroyed. Node replaces the timeout with the keep-alive one once the answer has
 * gone, and clears it when the next request arrives, so a handler's own time is never limited.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Installs the timeout on every answer `app` sends: `ms` without progress cuts the connection. */
export function cutStalledReaders(app: FastifyInstance, ms: number): void {
  app.addHook('onSend', (request, _reply, payload, done) => {
    // No listener for the socket's 'timeout' on the response or the server: Node destroys it.
    // (An injected request's socket has no timeouts.)
    const socket = request.raw.socket as Partial<Socket> | undefined;
    if (typeof socket?.setTimeout === 'function') socket.setTimeout(ms);
    done(null, payload);
  });
}
