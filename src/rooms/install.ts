/**
 * Wires the rooms core into an app: the RoomHub (`services.rooms`), @fastify/websocket with the
 * room limits, `GET /ws/rooms/:roomId`, `GET /api/v1/rooms[/:id]`, and the assistant's outlet.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import roomsHttpRoutes from '../routes/rooms-http.js';
import { endRefusedUpgrades, roomsWebsocket } from '../routes/rooms-ws.js';
import type { Services } from '../services.js';
import { createRooms } from './index.js';
import type { RoomOptions } from './options.js';
import type { RoomBus } from './types.js';

export interface InstallRoomsOptions {
  /** A bus instead of the lone in-process one (tests of several nodes). */
  bus?: RoomBus;
  /** Room option overrides (tests shrink timers and limits). */
  options?: Partial<RoomOptions>;
}

/** Builds the hub and registers the websocket plugin and room routes. */
export async function installRooms(app: FastifyInstance, services: Services, options: InstallRoomsOptions = {}): Promise<void> {
  const rooms = createRooms(services.config, {
    store: services.store,
    log: app.log,
    // Looked up per ask: the assistant is installed after the rooms.
    assistant: () => services.assistant,
    bus: options.bus,
    options: options.options,
  });
  services.rooms = rooms;
  const ws = roomsWebsocket(rooms, {
    allowedOrigins: services.config.ALLOWED_ORIGINS,
    heartbeatMs: rooms.options.heartbeatMs,
    shutdownGraceMs: rooms.options.shutdownGraceMs,
    log: app.log,
  });
  await app.register(websocket, ws.pluginOptions);
  await app.register(ws.routes);
  endRefusedUpgrades(app.server);
  await app.register(roomsHttpRoutes, { hub: rooms });
  app.addHook('onReady', async () => services.assistant?.attach(rooms));
  app.addHook('onClose', async () => ws.stop());
}
