/**
 * Client addresses as limits count them. One IPv6 subscriber usually holds a whole /64 and can
 * pick any address in it, so IPv6 addresses are grouped by their /64; an IPv4 address arriving
 * IPv4-mapped (`::ffff:1.2.3.4`, as a dual-stack socket reports it) is that IPv4 address.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail becomes two groups). */
function ipv6Groups(ip: string): number[] | null {
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The key of a client address: `1.2.3.4`, or `2001:db8:1:2::/64`; anything unparseable as given. */
export function addressKey(ip: string): string {
  const address = ip.split('%')[0];
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return ip;
  const g = ipv6Groups(address);
  if (!g) return ip;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.');
  }
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** Loopback, private, shared (CGNAT), link-local and unique-local ranges: where a site's own proxy sits. */
const LOCAL_NETWORKS = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
] as const)
  LOCAL_NETWORKS.addSubnet(net, prefix, 'ipv4');
LOCAL_NETWORKS.addAddress('::1', 'ipv6');
LOCAL_NETWORKS.addSubnet('fc00::', 7, 'ipv6');
LOCAL_NETWORKS.addSubnet('fe80::', 10, 'ipv6');

/**
 * Whether `list` holds `ip`: an IPv4-mapped address as its IPv4 address, an IPv6 one without its
 * zone (`%eth0`); false for what is no address.
 */
export function listHolds(list: BlockList, ip: string): boolean {
  const key = addressKey(ip);
  if (isIPv4(key)) return list.check(key, 'ipv4');
  const address = ip.split('%')[0];
  return isIPv6(address) && list.check(address, 'ipv6');
}

/** True when `ip` is on this machine or a private network (not reachable from the internet as itself). */
export function isLocalNetworkAddress(ip: string): boolean {
  return listHolds(LOCAL_NETWORKS, ip);
}
