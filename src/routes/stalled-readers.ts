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
 * A request pipelined behind an answer arrived while that answer's timeout ran, so Node cleared
 * nothing for it: the timeout follows the answer Node is writing, the oldest unfinished one of the
 * connection. When an answer ends and the next one in line has not been sent (its handler is at
 * work), the timeout is cleared; when it has (it waited behind the one before), it starts afresh.
 * An answer sent while an earlier one is still in line waits, and touches no timeout.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Installs the timeout on every answer `app` sends: `ms` without progress cuts the connection. */
export function cutStalledReaders(app: FastifyInstance, ms: number): void {
  /** Each connection's unfinished answers, in the order Node writes them. */
  const inLine = new WeakMap<Socket, ServerResponse[]>();
  const sent = new WeakSet<ServerResponse>();
  // Counted as Node parses each request, ahead of Fastify's own listener: a pipelined request is
  // in line from the moment the answer before it could end, and an answer sent at once finds its
  // request counted.
  app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    let line = inLine.get(socket);
    if (!line) inLine.set(socket, (line = []));
    line.push(res);
    const answers = line;
    res.once('finish', () => {
      // Node writes answers in order, and has just given the connection to the next one in line
      // (setting no keep-alive timeout, since a request waits).
      answers.splice(answers.indexOf(res), 1);
      if (answers.length > 0) socket.setTimeout(sent.has(answers[0]) ? ms : 0);
    });
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    // No listener for the socket's 'timeout' on the response or the server: Node destroys it.
    // (An injected request's socket has no timeouts.)
    const socket = request.raw.socket as Partial<Socket> | undefined;
    if (typeof socket?.setTimeout === 'function') {
      sent.add(reply.raw);
      const line = inLine.get(socket as Socket);
      if (!line?.includes(reply.raw) || line[0] === reply.raw) socket.setTimeout(ms);
    }
    done(null, payload);
  });
}
