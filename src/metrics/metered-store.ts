/**
 * The Store with every call timed into `salon_store_seconds{operation}` (and failures counted): a
 * proxy, so a new Store method is measured without anything to add here. Messages are counted
 * here too, where every path that stores one (chat, asks, answers, imports) meets.
 */
import type { Store } from '../store/types.js';
import type { SalonMetrics } from './metrics.js';

export function meteredStore(store: Store, metrics: SalonMetrics): Store {
  const countMessages = (operation: string, result: unknown) => {
    if (operation === 'appendMessage' && !(result as { duplicate: boolean }).duplicate) metrics.messagesStored(1);
    else if (operation === 'appendMessages') metrics.messagesStored((result as unknown[]).length);
  };
  // By function, not by name: a method replaced on the store (tests do) gets its own wrapper.
  const wrapped = new WeakMap<object, unknown>();
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'constructor' || typeof key !== 'string') return value;
      let fn = wrapped.get(value);
      if (!fn) {
        fn = function (this: unknown, ...args: unknown[]) {
          const started = performance.now();
          const done = (failed: boolean) => metrics.storeOperation(key, (performance.now() - started) / 1000, failed);
          let out: unknown;
          try {
            out = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (err) {
            done(true);
            throw err;
          }
          if (out instanceof Promise)
            return out.then(
              (v) => {
                done(false);
                countMessages(key, v);
                return v;
              },
              (err: unknown) => {
                done(true);
                throw err;
              },
            );
          done(false);
          return out;
        };
        wrapped.set(value, fn);
      }
      return fn;
    },
  });
}
