/**
 * A rate per client address (a key from `addressKey`) in a table of bounded size: one token bucket
 * per address, `perMinute` a minute in bursts of `burst` (as many by default). The table is kept in the order addresses
 * were last seen: each take forgets the oldest address if its bucket has refilled (it then holds
 * nothing worth keeping), so the table shrinks as fast as it grows and holds about the addresses of
 * the last minute; past `maxAddresses` the oldest is forgotten whatever it holds. An address
 * forgotten that way starts again with a full bucket, which only a client holding more than
 * `maxAddresses` addresses could arrange, and one that could has that many buckets anyway.
 */
import { wholeNumber } from '../options.js';
import { TokenBucket } from './token-bucket.js';

/** What `AddressRate` takes. */
export interface AddressRateOptions {
  /** Takes one address may make a minute. */
  perMinute: number;
  /** Takes one address may make at once (default: perMinute). */
  burst?: number;
  /** Addresses remembered at most. */
  maxAddresses: number;
}

export class AddressRate {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly perMinute: number;
  private readonly burst: number;
  private readonly maxAddresses: number;

  constructor(options: AddressRateOptions) {
    this.perMinute = wholeNumber('AddressRate', 'perMinute', options.perMinute, 1);
    this.burst = wholeNumber('AddressRate', 'burst', options.burst ?? options.perMinute, 1);
    this.maxAddresses = wholeNumber('AddressRate', 'maxAddresses', options.maxAddresses, 1);
  }

  /** Takes one from `address`'s budget at `now` (ms); false when it is spent. */
  take(address: string, now: number): boolean {
    let bucket = this.buckets.get(address);
    if (bucket) this.buckets.delete(address);
    else bucket = new TokenBucket(this.perMinute / 60, this.burst, now);
    this.forgetOldest(now);
    this.buckets.set(address, bucket);
    return bucket.take(now);
  }

  /** Milliseconds from `now` until `address`'s budget holds one again (0: it does now, or the address is not remembered). */
  waitMs(address: string, now: number): number {
    return this.buckets.get(address)?.waitMs(now) ?? 0;
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.buckets.size;
  }

  private forgetOldest(now: number): void {
    const oldest = this.buckets.entries().next();
    if (oldest.done) return;
    const [address, bucket] = oldest.value;
    if (this.buckets.size >= this.maxAddresses || bucket.full(now)) this.buckets.delete(address);
  }
}
