/**
 * The connect-time half of the fetcher's SSRF guard: an undici connector that refuses literal
 * IP hosts outside the public address space and resolves names through a lookup that checks
 * every address DNS returns. Because it runs for every socket undici opens, neither a redirect
 * nor a DNS answer that changes between checks can reach a private address.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { isBlockedAddress, isIpLiteral } from './address-guard.js';

/** Raised (inside undici) when a connection would reach a refused address; the fetcher maps it. */
export class BlockedAddressError extends Error {
  readonly host: string;
  readonly address: string;
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a private or reserved address`);
    this.name = 'BlockedAddressError';
    this.host = host;
    this.address = address;
  }
}

/** Lower-cased host without IPv6 brackets, the form allow-lists are compared in. */
export function normaliseHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
}

/** Decides whether a host name or address may be reached: public, or on the allow-list. */
export type HostPolicy = (hostOrAddress: string) => boolean;

/** A policy allowing public addresses and anything named in `allowHosts` (names or IPs). */
export function hostPolicy(allowHosts: string[]): { allowedName: HostPolicy; allowedAddress: HostPolicy } {
  const allow = new Set(allowHosts.map(normaliseHost));
  return {
    allowedName: (host) => allow.has(normaliseHost(host)),
    allowedAddress: (address) => allow.has(normaliseHost(address)) || !isBlockedAddress(address),
  };
}

type AnyLookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Wraps `resolve` so that every resolved address is checked; one refused address refuses the name. */
export function guardedLookup(policy: ReturnType<typeof hostPolicy>, resolve: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  const guarded = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: AnyLookupCallback) => {
    const wantAll = (options as LookupAllOptions).all === true;
    resolve(hostname, { ...options, all: true }, ((err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) return callback(err, wantAll ? [] : '', undefined);
      const list = Array.isArray(addresses) ? addresses : [];
      if (!policy.allowedName(hostname)) {
        const refused = list.find((a) => !policy.allowedAddress(a.address));
        if (refused) return callback(new BlockedAddressError(hostname, refused.address), wantAll ? [] : '', undefined);
      }
      if (list.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), wantAll ? [] : '', undefined);
      if (wantAll) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    }) as never);
  };
  return guarded as unknown as LookupFunction;
}

/** Options of {@link guardedConnector}. */
export interface GuardedConnectorOptions {
  allowHosts: string[];
  /** Connect timeout in milliseconds. */
  timeoutMs: number;
  /** Name resolution to guard; default `dns.lookup`. */
  lookup?: LookupFunction;
}

/** An undici connector (the Agent's `connect` option) that enforces the address guard. */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const policy = hostPolicy(options.allowHosts);
  const connect = buildConnector({ timeout: options.timeoutMs, lookup: guardedLookup(policy, options.lookup) });
  return (opts, callback) => {
    const host = normaliseHost(opts.hostname);
    // Node skips `lookup` for literal addresses, so those are checked here.
    if (isIpLiteral(host) && !policy.allowedName(host) && !policy.allowedAddress(host)) {
      callback(new BlockedAddressError(host, host), null);
      return;
    }
    connect(opts, callback);
  };
}
