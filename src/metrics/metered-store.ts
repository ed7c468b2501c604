/**
 * The Store with every call timed into `salon_store_seconds{operation}` (and failures and refusals
 * counted): a proxy, so a new Store method is measured without anything to add here. Messages are
 * counted here too, where every path that stores one (chat, asks, answers, imports) meets.
 */
import { SalonError } from '../errors.js';
import { ForgottenExchange, type Store } from '../store/types.js';
import type { SalonMetrics, StoreOutcome } from './metrics.js';

/**
 * Whether a store call that threw `err` failed or refused: a refusal is the store declining what it
 * was asked for a reason of the request (a client's error code, below 500: a thread changed or gone,
 * a cursor that is not one; or a private exchange its asker has since forgotten). An alert on
 * `salon_store_errors_total` should mean the store is in trouble, not that a member raced a merge.
 */
export function storeOutcome(err: unknown): Exclude<StoreOutcome, 'ok'> {
  if (err instanceof ForgottenExchange) return 'refused';
  return err instanceof SalonError && err.statusCode < 500 ? 'refused' : 'failed';
}

export function meteredStore(store: Store, metrics: SalonMetrics): Store {
  // A resent message (found again by its clientId: a client's retry, an import sent twice) was stored before.
  const countMessages = (operation: string, result: unknown) => {
    if (operation === 'appendMessage' && !(result as { duplicate: boolean }).duplicate) metrics.messagesStored(1);
    else if (operation === 'appendMessages') metrics.messagesStored((result as { duplicate: boolean }[]).filter((r) => !r.duplicate).length);
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
          const done = (outcome: StoreOutcome) => metrics.storeOperation(key, (performance.now() - started) / 1000, outcome);
          let out: unknown;
          try {
            out = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (err) {
            done(storeOutcome(err));
            throw err;
          }
          if (out instanceof Promise)
            return out.then(
              (v) => {
                done('ok');
                countMessages(key, v);
                return v;
              },
              (err: unknown) => {
                done(storeOutcome(err));
                throw err;
              },
            );
          done('ok');
          return out;
        };
        wrapped.set(value, fn);
      }
      return fn;
    },
  });
}
