/**
 * Tells the operator, once, that Salon looks to be behind a proxy it was not told of: with
 * TRUST_PROXY=false every client of a proxy counts as the proxy's address, so one client can use up
 * every per-address budget for all of them (room sockets, asks, API requests, and the admin
 * lock-out, which would then lock the admin out too). Only requests from a loopback or private
 * peer count: a stranger on the internet can send X-Forwarded-For too, and should not be able to
 * make the log advise trusting it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';
import { isLocalNetworkAddress } from '../rooms/address.js';

/** Headers a proxy adds to name the client it forwards. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** The local peer that forwarded `request` for someone else, or null. */
export function untrustedProxyOf(request: FastifyRequest): string | null {
  if (!FORWARDING_HEADERS.some((h) => request.headers[h] !== undefined)) return null;
  const peer = request.raw.socket?.remoteAddress;
  return peer && isLocalNetworkAddress(peer) ? peer : null;
}

/**
 * Adds the once-per-app warning to `app` when `trust` is false (nothing is trusted); with `true`
 * (every peer trusted) warns at once: X-Forwarded-For then names the client whoever sends it, so
 * any client can give each request another address and pass every per-address limit, and no
 * peer's TCP connections are counted per address either.
 */
export function warnOfUntrustedProxy(app: FastifyInstance, trust: TrustProxy): void {
  if (trust === true) {
    app.log.warn(
      { variable: 'TRUST_PROXY' },
      'TRUST_PROXY=true trusts X-Forwarded-For from anyone: a client can name any address in it and so pass every per-address limit ' +
        "(room sockets, asks, API requests, TCP connections, the admin lock-out). Set TRUST_PROXY to the proxy's address, or to 1 for one proxy in front",
    );
    return;
  }
  if (trust !== false) return;
  let warned = false;
  app.addHook('onRequest', async (request) => {
    if (warned) return;
    const proxy = untrustedProxyOf(request);
    if (proxy === null) return;
    warned = true;
    app.log.warn(
      { proxy, variable: 'TRUST_PROXY' },
      `requests arrive through a proxy at ${proxy} (they carry X-Forwarded-For or Forwarded) but TRUST_PROXY is false: ` +
        `every client counts as ${proxy}, so one of them can use up the per-address limits of all (room sockets, asks, API requests, ` +
        `the admin lock-out). Set TRUST_PROXY to the proxy's address (TRUST_PROXY=${proxy})`,
    );
  });
}
