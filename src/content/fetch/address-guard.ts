/**
 * Which IP addresses the fetcher may connect to. Only globally routable unicast addresses pass:
 * private, loopback, link-local, multicast, unspecified, CGNAT, benchmarking, documentation and
 * reserved ranges are refused, for IPv4 and IPv6, including IPv4 addresses hidden inside IPv6
 * (IPv4-mapped `::ffff:127.0.0.1` / `::ffff:7f00:1`, IPv4-compatible, SIIT, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`). Ranges follow the IANA special-purpose address registries.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges that are not globally reachable unicast. */
const BLOCKED_V4 = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (cloud metadata lives here)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation TEST-NET-1
  '192.31.196.0/24', // AS112
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '192.175.48.0/24', // direct delegation AS112
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation TEST-NET-2
  '203.0.113.0/24', // documentation TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255 broadcast
];

/** IPv6 ranges refused outright (everything outside 2000::/3 is refused as well). */
const BLOCKED_V6 = [
  '64:ff9b::/96', // NAT64 well-known prefix
  '64:ff9b:1::/48', // NAT64 local use
  '100::/64', // discard-only
  '2001::/23', // IETF protocol assignments: Teredo, benchmarking 2001:2::/48, ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
  '5f00::/16', // SRv6 SIDs
];

/** Global unicast IPv6 space; anything else (::1, fc00::/7, fe80::/10, ff00::/8, ...) is refused. */
const GLOBAL_UNICAST_V6 = '2000::/3';

interface Range {
  base: bigint;
  bits: number;
}

function parseV4(address: string): bigint | null {
  if (!isIPv4(address)) return null;
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** 128-bit value of an IPv6 address (zone id dropped, embedded dotted quad allowed). */
function parseV6(address: string): bigint | null {
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return null;
  let text = bare;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseV4(dotted[1])!;
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === null ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function parseRange(cidr: string, v4: boolean): Range {
  const [addr, len] = cidr.split('/');
  const value = v4 ? parseV4(addr) : parseV6(addr);
  if (value === null) throw new Error(`bad range ${cidr}`);
  return { base: value, bits: Number(len) };
}

const V4_RANGES = BLOCKED_V4.map((r) => parseRange(r, true));
const V6_RANGES = BLOCKED_V6.map((r) => parseRange(r, false));
const GLOBAL_V6 = parseRange(GLOBAL_UNICAST_V6, false);

function inRange(value: bigint, range: Range, width: number): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

function blockedV4(value: bigint): boolean {
  return V4_RANGES.some((r) => inRange(value, r, 32));
}

/** The IPv4 address carried by an IPv4-mapped (`::ffff:a.b.c.d`) or 6to4 (`2002:aabb:ccdd::/48`) address. */
function carriedV4(value: bigint): bigint | null {
  if (value >> 32n === 0xffffn) return value & 0xffffffffn;
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn;
  return null;
}

function blockedV6(value: bigint): boolean {
  const v4 = carriedV4(value);
  if (v4 !== null) return blockedV4(v4);
  // IPv4-compatible (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), ::, ::1 and the rest of ::/3 fall outside 2000::/3.
  if (!inRange(value, GLOBAL_V6, 128)) return true;
  return V6_RANGES.some((r) => inRange(value, r, 128));
}

/** Whether `address` is a literal IPv4 or IPv6 address (brackets allowed around IPv6). */
export function isIpLiteral(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '');
  return isIPv4(a) || isIPv6(a.replace(/%.*$/, ''));
}

/**
 * Whether the fetcher must refuse to connect to `address` (an IPv4 or IPv6 literal, brackets
 * allowed). Anything that does not parse as an IP address is refused too.
 */
export function isBlockedAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '');
  const v4 = parseV4(a);
  if (v4 !== null) return blockedV4(v4);
  const v6 = parseV6(a);
  if (v6 !== null) return blockedV6(v6);
  return true;
}
