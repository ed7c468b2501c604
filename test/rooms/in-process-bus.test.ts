import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import type { RoomBus } from '../../src/rooms/types.js';
import { busContract, presenceContract, type BusNetwork } from './bus-contract.js';

function inProcess(): BusNetwork {
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
}

busContract('in-process', inProcess);
presenceContract('in-process', inProcess);
