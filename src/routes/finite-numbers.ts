/**
 * Ajv coerces a query or path value such as `Infinity` or `1e999` into a number and then skips
 * `minimum`/`maximum` for it (it only bounds finite numbers), so `?limit=Infinity` reached the
 * stores as a number that is no SQL integer. This hook, run after validation, refuses any
 * non-finite number in the coerced query and params with ERR_BAD_REQUEST. JSON bodies need no
 * such check: Ajv refuses a non-finite number there.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';

/** The name of a non-finite number among `values` (one level down in arrays), or null. */
function nonFinite(values: unknown): string | null {
  if (!values || typeof values !== 'object') return null;
  for (const [name, value] of Object.entries(values)) {
    const list = Array.isArray(value) ? value : [value];
    if (list.some((v) => typeof v === 'number' && !Number.isFinite(v))) return name;
  }
  return null;
}

/** Installs the check on every route of `app` registered after it. */
export function refuseNonFiniteNumbers(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    const name = nonFinite(request.query) ?? nonFinite(request.params);
    if (name !== null) throw new errors.ERR_BAD_REQUEST(`${name} must be a finite number`);
  });
}
