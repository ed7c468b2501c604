/**
 * A cap on the TCP connections one client address holds at once, HTTP and room sockets together
 * (HTTP_MAX_CONNECTIONS_PER_IP; IPv6: per /64). Timeouts drop a connection that trickles its
 * request or idles, but only after 30 and 65 s: one address that kept opening them held as many
 * as it liked, each a file descriptor and some kilobytes, and the room-socket cap counts a socket
 * only once it is upgraded. Past the cap a new connection is closed before Node reads a byte of it.
 * A proxy TRUST_PROXY trusts is not counted: it carries many clients, whom the other limits count.
 */
import type { Server } from 'node:http';
import { BlockList, isIPv4, type Socket } from 'node:net';
import type { TrustProxy } from '../config.js';
import { addressKey, listHolds } from '../rooms/address.js';

/** Whether TRUST_PROXY trusts a direct peer at an address (then it is a proxy of ours). */
export function trustsPeer(trust: TrustProxy): (ip: string) => boolean {
  // A hop count trusts whatever is next to us, the first hop.
  if (!Array.isArray(trust)) {
    const all = trust === true || (typeof trust === 'number' && trust > 0);
    return () => all;
  }
  const list = new BlockList();
  for (const entry of trust) {
    const [address, prefix] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (ip) => listHolds(list, ip);
}

/** Closes each new connection to `server` from an address that holds `max` already (trusted peers aside). */
export function capConnectionsPerAddress(server: Server, max: number, trusted: (ip: string) => boolean): void {
  const open = new Map<string, number>();
  // Before Node's own listener, so a refused connection never gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    const ip = socket.remoteAddress;
    if (ip === undefined || trusted(ip)) return;
    const key = addressKey(ip);
    const held = open.get(key) ?? 0;
    if (held >= max) {
      socket.destroy();
      return;
    }
    open.set(key, held + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}
