/** A Web Storage stand-in for the client's modules that keep state in sessionStorage or localStorage, without a browser. */
import type { StorageLike } from '../../public/src/lib/private-asks.js';

/** Keeps items in a Map; `items` lets a test read or change what is stored. */
export class FakeStorage implements StorageLike {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}
