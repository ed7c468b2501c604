/** GET /api/v1/rooms and GET /api/v1/rooms/:id. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { OTHER_ROOM, ROOM, joined, roomsApp } from './helpers.js';

describe('rooms HTTP API', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ app, close } = await roomsApp());
  });
  afterEach(async () => close());

  it('tells a plain GET of a room socket to upgrade, with 426 and a typed error, and still takes sockets there', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: `/ws/rooms/${ROOM}?token=x` });
      expect(res.statusCode).toBe(426);
      if (method === 'GET')
        expect(res.json().error).toEqual({ code: 'ERR_UPGRADE_REQUIRED', message: expect.stringContaining(`/ws/rooms/${ROOM} is a WebSocket endpoint`) });
    }
    const ana = await joined(app, 'Ana', ROOM);
    expect(ana.welcome.type).toBe('welcome');
  });

  it('lists active rooms busiest first, and filters by ids', async () => {
    expect((await app.inject('/api/v1/rooms')).json()).toEqual({ rooms: [] });
    await joined(app, 'Ana', ROOM);
    await joined(app, 'Ben', OTHER_ROOM);
    await joined(app, 'Cy', OTHER_ROOM);
    const all = await app.inject('/api/v1/rooms');
    expect(all.statusCode).toBe(200);
    expect(all.json().rooms).toEqual([
      { id: OTHER_ROOM, kind: 'post', title: 'Why the sky is blue', members: 2 },
      { id: ROOM, kind: 'news', title: 'Rust 2.0 released', members: 1 },
    ]);
    const some = await app.inject(`/api/v1/rooms?ids=${ROOM},video_3,nope`);
    expect(some.json().rooms.map((r: { id: string }) => r.id)).toEqual([ROOM]);
    const many = Array.from({ length: 101 }, (_, i) => `news_${i}`).join(',');
    const tooMany = await app.inject(`/api/v1/rooms?ids=${many}`);
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.code).toBe('ERR_BAD_REQUEST');
  });

  it('describes a room with its members, a known empty room with none, and refuses unknown ones', async () => {
    const empty = await app.inject(`/api/v1/rooms/${OTHER_ROOM}`);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({
      id: OTHER_ROOM,
      kind: 'post',
      title: 'Why the sky is blue',
      url: 'https://example.com/post_2',
      context: 'Why the sky is blue\n\nAbout post_2',
      members: [],
      memberCount: 0,
      unsettledImports: [],
    });

    const { welcome } = await joined(app, 'Ana', ROOM);
    const live = (await app.inject(`/api/v1/rooms/${ROOM}`)).json();
    expect(live.members).toEqual([{ id: welcome.you.id, name: 'Ana' }]);
    expect(live.memberCount).toBe(1);
    expect(live.context).toBe(welcome.room.context);

    expect((await app.inject('/api/v1/rooms/topic_tech')).json().title).toBe('Topic: Tech');
    for (const id of ['news_404', 'topic_nope', 'whatever']) {
      const res = await app.inject(`/api/v1/rooms/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('ERR_ROOM_NOT_FOUND');
    }
  });

  it('documents both routes in the OpenAPI document', async () => {
    const paths = (await app.inject('/api/v1/openapi.json')).json().paths;
    expect(paths['/api/v1/rooms'].get).toBeDefined();
    expect(paths['/api/v1/rooms/{id}'].get).toBeDefined();
  });
});
