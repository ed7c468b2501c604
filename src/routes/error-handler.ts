/**
 * Turns every error into `{error: {code, message}}`. Catalogued SalonErrors keep their status;
 * Fastify's own 4xx errors are mapped to catalogue codes; anything else is a 500 whose details are
 * logged and never sent.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { SalonError, errors } from '../errors.js';

function toSalonError(err: FastifyError): SalonError {
  if (err instanceof SalonError) return err;
  if (err.validation) return new errors.ERR_BAD_REQUEST(err.message);
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new errors.ERR_PAYLOAD_TOO_LARGE();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new errors.ERR_UNSUPPORTED_MEDIA_TYPE(err.message.replace(/^Unsupported Media Type:\s*/, ''));
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return new errors.ERR_BAD_REQUEST(err.message);
      }
      return new errors.ERR_INTERNAL();
  }
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const salonError = toSalonError(err);
    if (salonError.statusCode >= 500) request.log.error({ err }, 'request failed');
    reply.status(salonError.statusCode).send({ error: { code: salonError.code, message: salonError.message } });
  });
  app.setNotFoundHandler((request, reply) => {
    const e = new errors.ERR_NOT_FOUND(`${request.method} ${request.url.split('?')[0]}`);
    reply.status(404).send({ error: { code: e.code, message: e.message } });
  });
}

/** JSON schema of the error body, for route schemas and the OpenAPI document. */
export const errorBodySchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
} as const;
