/**
 * Per-address request limits on the HTTP API (@fastify/rate-limit): the routes that cost work —
 * ask, search, ingest, content, the room listings, metrics and the OpenAPI document — opt in with
 * `config: { rateLimit: API_RATE_LIMIT }`; health checks, pages and static files do not. Addresses are counted by key (IPv6 by /64, src/rooms/address.ts),
 * and behind a proxy by the address TRUST_PROXY lets it report. Past the limit: 429 with
 * ERR_RATE_LIMITED and Retry-After.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../errors.js';
import { addressKey } from '../rooms/address.js';

/** A route's `config.rateLimit` to be limited with the API's per-address budget (each route has its own). */
export const API_RATE_LIMIT = {};

async function apiRateLimit(app: FastifyInstance, options: { perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: options.perMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => addressKey(request.ip),
    errorResponseBuilder: (_request, context) =>
      new errors.ERR_RATE_LIMITED(`at most ${context.max} API requests a minute from one address; retry in ${context.after}`),
  });
}

export default fp(apiRateLimit, { name: 'salon-api-rate-limit' });
