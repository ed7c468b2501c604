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
 *
 * A body past PARSE_OFF_LOOP_BYTES (the routes that raise the app's limit take up to 32 MiB) is
 * decoded and parsed on a worker instead, read the same way (src/json-body.ts): one JSON.parse of
 * it held the event loop, every room's messages waiting, for about half a second.
 */
import { errorCodes, type FastifyInstance } from 'fastify';
import { SURROGATE_ESCAPE } from '../json-body.js';
import { wellFormedValues } from '../text.js';
import { JsonBodyPool, PARSE_OFF_LOOP_BYTES } from './json-body-pool.js';

/** Installs the JSON parser on `app`, for every route registered after it. */
export function readEmptyJsonBodyAsNone(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Started with the first large body: most apps (and tests) never see one.
  let bodies: JsonBodyPool | undefined;
  app.addHook('onClose', async () => bodies?.close());
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw: Buffer, done) => {
    if (raw.length === 0) {
      done(null, undefined);
      return;
    }
    if (raw.length > PARSE_OFF_LOOP_BYTES) {
      (bodies ??= new JsonBodyPool()).parse(raw).then(
        (result) => (result.ok ? done(null, result.value) : done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined)),
        (err: Error) => done(err, undefined),
      );
      return;
    }
    const body = raw.toString();
    if (!SURROGATE_ESCAPE.test(body)) return parseJson(request, body, done);
    parseJson(request, body, (err, value) => (err ? done(err) : done(null, wellFormedValues(value))));
  });
}
