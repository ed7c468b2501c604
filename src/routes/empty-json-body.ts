/**
 * A request that sends `Content-Type: application/json` and no body at all (`Content-Length: 0`)
 * is read as a request without a body. Generic JSON clients set that header on every call, also on
 * the routes that take no body (`DELETE /api/v1/threads/:id`, `POST /api/v1/threads/:id/unlock`,
 * `POST /api/v1/sources/:id/refresh`), and Fastify's own parser refused those with 400 ("Body
 * cannot be empty"). A route that needs a body still refuses the missing one through its schema.
 * Any other text goes to Fastify's own JSON parser, with its defence against prototype poisoning.
 */
import type { FastifyInstance } from 'fastify';

/** Installs the JSON parser on `app`, for every route registered after it. */
export function readEmptyJsonBodyAsNone(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    parseJson(request, body, done);
  });
}
