/**
 * The rooms plugin: @fastify/websocket with the room limits, `GET /ws/rooms/:roomId`, the rooms
 * HTTP routes, the transport self-test and the v1 tokens' issue time before the first socket, and
 * the assistant's outlet.
 */
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { loopbackHostCheck } from '../routes/loopback-host.js';
import roomsHttpRoutes from '../routes/rooms-http.js';
import { endRefusedUpgrades, roomsWebsocket } from '../routes/rooms-ws.js';
import { checkTransport } from '../routes/rooms-ws-transport.js';
import { adoptLegacyTokenTime } from '../rooms/legacy-tokens.js';

async function roomsPlugin(app: FastifyInstance): Promise<void> {
  const { rooms, config, assistant, store } = app.salon;
  const ws = roomsWebsocket(rooms, {
    allowedOrigins: config.ALLOWED_ORIGINS,
    hostAllowed: loopbackHostCheck(config.HOST, config.TRUST_PROXY),
    heartbeatMs: rooms.options.heartbeatMs,
    shutdownGraceMs: rooms.options.shutdownGraceMs,
    log: app.log,
  });
  await app.register(websocket, ws.pluginOptions);
  await app.register(ws.routes);
  endRefusedUpgrades(app.server);
  await app.register(roomsHttpRoutes, { hub: rooms });
  // Before the first socket: a Node whose internals changed falls back to ws's own send.
  app.addHook('onReady', async () => {
    await checkTransport(app.log);
  });
  // Before the first socket: from when v1 identity tokens count (legacy-tokens.ts).
  app.addHook('onReady', async () => adoptLegacyTokenTime(rooms.identity, store, app.log));
  app.addHook('onReady', async () => assistant.attach(rooms));
  app.addHook('onClose', async () => ws.stop());
}

export default fp(roomsPlugin, { name: 'salon-rooms' });
