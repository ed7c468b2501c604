/**
 * A RoomBus that counts what it publishes and receives (`salon_bus_*`) and how long a message took
 * from the sending node (as the two clocks tell), around whichever bus src/parts.ts chose. Every
 * other member of the bus is passed through as it is.
 */
import { sentAtOf } from '../rooms/envelope.js';
import type { RoomBus } from '../rooms/types.js';
import type { SalonMetrics } from './metrics.js';

export function meteredBus<B extends RoomBus>(bus: B, metrics: SalonMetrics): B {
  return new Proxy(bus, {
    get(target, key, receiver) {
      if (key === 'publish')
        return (roomId: string, payload: string) => {
          metrics.busPublished(Buffer.byteLength(payload));
          return target.publish(roomId, payload);
        };
      if (key === 'subscribe')
        return (handler: (roomId: string, payload: string) => void) =>
          target.subscribe((roomId, payload) => {
            metrics.busReceived(Buffer.byteLength(payload), sentAtOf(payload));
            handler(roomId, payload);
          });
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
