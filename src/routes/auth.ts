import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * onRequest hook for admin routes: needs `Authorization: Bearer <ADMIN_TOKEN>`. It runs before the
 * body is read and validated, so an unauthenticated caller learns nothing about the schema and
 * cannot make the server parse a large body.
 */
export async function requireAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!isAdmin(request)) throw new errors.ERR_UNAUTHORIZED();
}

/** Whether the request carries `Authorization: Bearer <ADMIN_TOKEN>` (for routes that show admins more). */
export function isAdmin(request: FastifyRequest): boolean {
  const header = request.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header);
  return m !== null && sameSecret(m[1].trim(), request.server.salon.adminToken);
}

/** Security scheme for admin routes in the OpenAPI document. */
export const adminSecurity = [{ adminToken: [] as string[] }];
