/**
 * bench:ws's peer (`--server bare`, a child process driven over IPC by bench/ws.ts like
 * ws-server.ts): a bare `ws` server that speaks just enough of the rooms protocol for the load
 * generator and only rebroadcasts. A `hello` is answered with a bare `welcome`; each `say` becomes
 * a `message` frame of the same shape and size as Salon's (id, seq, roomId, threadId, author, text,
 * ts, clientId) sent to every member of the room, the sender included (Salon echoes a message to
 * its sender, and the load generator counts that receipt), with `ws`'s own `send`, one Buffer per
 * message. No store, no validation beyond JSON.parse, no limits, no metrics, no heartbeat: what is
 * left is what any WebSocket broadcast in Node pays.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { PhaseTrace, quantile, serveBenchCommands } from './ws-proc.js';

const PROFILE_INTERVAL_US = 100;
const MAX_PAYLOAD_BYTES = 64 * 1024;
const ROOM_PATH = '/ws/rooms/';

interface BareRoom {
  seq: number;
  readonly threadId: string;
  readonly members: Set<WebSocket>;
}

const rooms = new Map<string, BareRoom>();
let connections = 0;
/** Per message: from its receipt to the end of the event-loop turn after the one that wrote it (as ws-server.ts times Salon's). */
let fanouts: number[] = [];
const trace = new PhaseTrace();

function roomOf(id: string): BareRoom {
  let room = rooms.get(id);
  if (!room) rooms.set(id, (room = { seq: 0, threadId: `thr_${randomUUID()}`, members: new Set() }));
  return room;
}

function broadcast(roomId: string, room: BareRoom, userId: string, name: string, say: { text?: unknown; clientId?: unknown }): void {
  if (typeof say.text !== 'string') return;
  const t0 = performance.now();
  const message = {
    id: randomUUID(),
    seq: ++room.seq,
    roomId,
    threadId: room.threadId,
    author: { id: userId, name, kind: 'user' },
    text: say.text,
    ts: new Date().toISOString(),
    clientId: say.clientId,
  };
  const frame = Buffer.from(JSON.stringify({ type: 'message', message }));
  for (const member of room.members) member.send(frame, { binary: false });
  setImmediate(() =>
    setImmediate(() => {
      const fanout = performance.now() - t0;
      fanouts.push(fanout);
      trace.add('m', trace.at(t0), fanout);
    }),
  );
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 4096, perMessageDeflate: false, clientTracking: false, maxPayload: MAX_PAYLOAD_BYTES });
wss.on('connection', (socket, request) => {
  const url = request.url ?? '';
  if (!url.startsWith(ROOM_PATH)) return socket.close(4404);
  const roomId = url.slice(ROOM_PATH.length);
  const userId = `u_${randomUUID()}`;
  let name = '';
  let room: BareRoom | null = null;
  connections++;
  socket.on('error', () => {});
  socket.on('close', () => {
    connections--;
    room?.members.delete(socket);
  });
  socket.on('message', (data, isBinary) => {
    if (isBinary) return;
    let frame: { type?: unknown; name?: unknown; text?: unknown; clientId?: unknown };
    try {
      frame = JSON.parse(data.toString());
    } catch {
      return;
    }
    if (typeof frame !== 'object' || frame === null) return;
    if (room) {
      if (frame.type === 'say') broadcast(roomId, room, userId, name, frame);
    } else if (frame.type === 'hello') {
      name = typeof frame.name === 'string' ? frame.name : 'anon';
      room = roomOf(roomId);
      room.members.add(socket);
      socket.send(JSON.stringify({ type: 'welcome', you: { id: userId, name }, seq: room.seq }));
    }
  });
});
await new Promise<void>((resolve) => wss.once('listening', resolve));
const { port } = wss.address() as { port: number };

serveBenchCommands(
  {
    connections: () => connections,
    resetPhase: () => {
      fanouts = [];
      trace.start();
    },
    phaseStats: () => {
      trace.write();
      return { fanoutP50Ms: quantile(fanouts, 0.5), fanoutP99Ms: quantile(fanouts, 0.99), fanoutMaxMs: quantile(fanouts, 1) };
    },
    close: async () => {
      // Connections are left to the driver, which kills this process next.
      wss.close();
    },
  },
  PROFILE_INTERVAL_US,
);
process.send!({ evt: 'listening', port });
