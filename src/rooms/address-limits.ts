/**
 * Limits per client address, across all of its sockets: how many sockets it holds, how many frames
 * a second all of them together may send (typing frames apart, from a budget of the same size), how many slash commands a minute (a listing counts every
 * thread's messages: it costs more than a frame), and how many new identities it may take a minute (a
 * flood from one address cannot hide behind fresh sockets or fresh names). Addresses are keys from
 * `addressKey` (IPv6 by /64). An address with no socket and nothing left to remember is forgotten
 * by a sweep once a minute; between sweeps the table holds at most `maxAddresses`, past which the
 * address seen first that holds no socket is forgotten whatever its budgets hold (IPv6 gives one
 * client millions of /64s, each a new entry). Addresses holding sockets are never forgotten: their
 * count is what caps them, and the node's socket cap bounds how many there are.
 */
import { wholeNumber } from '../options.js';
import { TokenBucket } from './token-bucket.js';

export interface AddressLimitOptions {
  /** Sockets one address may hold open at once. */
  maxConnectionsPerAddress: number;
  /** Frames a second one address may send over all of its sockets (bursts of twice that). */
  framesPerSecondPerAddress: number;
  /** Identities (hello without a token) one address may take a minute. */
  newIdentitiesPerMinute: number;
  /** Slash commands one address may send a minute (bursts of half that). */
  commandsPerMinute: number;
  /** Addresses remembered at most, besides those holding sockets (default DEFAULT_MAX_ADDRESSES). */
  maxAddresses?: number;
}

/**
 * Addresses remembered at most by default (~480 bytes each with their five buckets, ~48 MB): an address
 * forgotten early starts again with full budgets, which only a client holding this many addresses
 * can arrange, and such a client has that many budgets anyway.
 */
export const DEFAULT_MAX_ADDRESSES = 100_000;

interface AddressState {
  sockets: number;
  frames: TokenBucket;
  typing: TokenBucket;
  identities: TokenBucket;
  commands: TokenBucket;
}

/** How often forgotten addresses are swept out of the table. */
const SWEEP_INTERVAL_MS = 60_000;

export class AddressLimits {
  private readonly addresses = new Map<string, AddressState>();
  private sweptAt = 0;
  private readonly maxAddresses: number;
  /** Addresses holding at least one socket (never forgotten). */
  private holding = 0;

  constructor(private readonly options: AddressLimitOptions) {
    this.maxAddresses = wholeNumber('AddressLimits', 'maxAddresses', options.maxAddresses ?? DEFAULT_MAX_ADDRESSES, 1);
  }

  /** Counts a new socket of `address`; false (nothing counted) when it already holds the maximum. */
  open(address: string, now: number): boolean {
    const state = this.state(address, now);
    if (state.sockets >= this.options.maxConnectionsPerAddress) return false;
    if (state.sockets++ === 0) this.holding++;
    return true;
  }

  /** A socket of `address` closed. */
  close(address: string, now: number): void {
    const state = this.addresses.get(address);
    if (state && state.sockets > 0 && --state.sockets === 0) this.holding--;
    // A sweep after `now` was taken before the clock was set back: sweep again rather than wait for it.
    if (now - this.sweptAt >= SWEEP_INTERVAL_MS || now < this.sweptAt) this.sweep(now);
  }

  /** Takes one frame from the address's shared budget; false when it is spent. */
  frame(address: string, now: number): boolean {
    return this.state(address, now).frames.take(now);
  }

  /** Takes one typing frame from the address's own budget for them; false when it is spent. */
  typing(address: string, now: number): boolean {
    return this.state(address, now).typing.take(now);
  }

  /** Takes one new identity from the address's budget; false when it is spent. */
  newIdentity(address: string, now: number): boolean {
    return this.state(address, now).identities.take(now);
  }

  /** Takes one slash command from the address's budget; false when it is spent. */
  command(address: string, now: number): boolean {
    return this.state(address, now).commands.take(now);
  }

  /** Milliseconds from `now` until the address's budget of new identities holds one again (0: it does now). */
  newIdentityWaitMs(address: string, now: number): number {
    return this.state(address, now).identities.waitMs(now);
  }

  /** Milliseconds from `now` until the address's frame budget holds a frame again (0: it does now). */
  frameWaitMs(address: string, now: number): number {
    return this.state(address, now).frames.waitMs(now);
  }

  /** Milliseconds from `now` until the address's command budget holds a command again (0: it does now). */
  commandWaitMs(address: string, now: number): number {
    return this.state(address, now).commands.waitMs(now);
  }

  /** Addresses remembered now (tests, metrics). */
  get size(): number {
    return this.addresses.size;
  }

  private state(address: string, now: number): AddressState {
    let state = this.addresses.get(address);
    if (!state) {
      const { framesPerSecondPerAddress: fps, newIdentitiesPerMinute: ipm, commandsPerMinute: cpm } = this.options;
      state = {
        sockets: 0,
        frames: new TokenBucket(fps, fps * 2, now),
        typing: new TokenBucket(fps, fps * 2, now),
        identities: new TokenBucket(ipm / 60, ipm, now),
        commands: new TokenBucket(cpm / 60, Math.max(1, Math.floor(cpm / 2)), now),
      };
      if (this.addresses.size >= this.maxAddresses && this.addresses.size > this.holding) this.forgetOldestIdle();
      this.addresses.set(address, state);
    }
    return state;
  }

  /**
   * Forgets the address seen first that holds no socket. One holding sockets met on the way goes
   * to the back, so the next look starts past it: each is passed over once per round of the table.
   */
  private forgetOldestIdle(): void {
    for (let looked = 0, n = this.addresses.size; looked < n; looked++) {
      const [address, state] = this.addresses.entries().next().value!;
      this.addresses.delete(address);
      if (state.sockets === 0) return;
      this.addresses.set(address, state);
    }
  }

  /** Forgets addresses without sockets whose budgets have refilled: they hold nothing to remember. */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [address, s] of this.addresses) {
      if (s.sockets === 0 && s.frames.full(now) && s.typing.full(now) && s.identities.full(now) && s.commands.full(now)) this.addresses.delete(address);
    }
  }
}
