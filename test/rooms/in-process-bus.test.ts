import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import type { RoomBus } from '../../src/rooms/types.js';
import { busContract } from './bus-contract.js';

busContract('in-process', () => {
  const network = new InProcessBusNetwork();
  const made: RoomBus[] = [];
  return {
    nodes: async (count) => {
      const nodes = Array.from({ length: count }, () => network.node());
      made.push(...nodes);
      return nodes;
    },
    cleanup: async () => {
      await Promise.all(made.map((b) => b.close()));
    },
  };
});
