import type { Store } from '../../src/store/types.js';

/** A store's `/forget private` scans held at their first call: `reached` once one starts, none reads until `release`. */
export interface HeldScan {
  reached: Promise<void>;
  release: () => void;
  /** The store's own scan, never held: for a test's reads while the forget's are. */
  scan: Store['scanPrivateMemory'];
}

/** Holds every `scanPrivateMemory` call of `store` until `release`, so a test acts while a forget reads. */
export function holdPrivateScans(store: Store): HeldScan {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const scan = store.scanPrivateMemory.bind(store);
  store.scanPrivateMemory = async (...args) => {
    reach();
    await gate;
    return scan(...args);
  };
  return { reached, release, scan };
}
