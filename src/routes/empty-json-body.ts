/**
 * A request that sends `Content-Type: application/json` and no body at all (`Content-Length: 0`)
 * is read as a request without a body. Generic JSON clients set that header on every call, also on
 * the routes that take no body (`DELETE /api/v1/threads/:id`, `POST /api/v1/threads/:id/unlock`,
 * `POST /api/v1/sources/:id/refresh`), and Fastify's own parser refused those with 400 ("Body
 * cannot be empty"). A route that needs a body still refuses the missing one through its schema.
 * Any other text goes to Fastify's own JSON parser, with its defence against prototype poisoning.
 * A body that escapes half of a surrogate pair (`"\ud800"`, invalid in UTF-8) has every such half
 * in its strings made U+FFFD, as the room protocol's frames do: what a route echoes, compares and
 * stores is then the same string (the stores kept U+FFFD, or three of them).
 */
import type { FastifyInstance } from 'fastify';
import { wellFormedValues } from '../text.js';

/** A `\uD800`–`\uDFFF` escape: only through one can JSON text carry a lone surrogate (raw UTF-8 cannot). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Installs the JSON parser on `app`, for every route registered after it. */
export function readEmptyJsonBodyAsNone(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    if (!SURROGATE_ESCAPE.test(body)) return parseJson(request, body, done);
    parseJson(request, body, (err, value) => (err ? done(err) : done(null, wellFormedValues(value))));
  });
}
