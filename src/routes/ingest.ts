/** `POST /api/v1/ingest` (admin: start a job) and `GET /api/v1/ingest/:jobId` (its progress). */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { adminSecurity, requireAdmin } from './auth.js';
import { ingestBodySchema, jobParamsSchema, jobSchema } from './content-schemas.js';
import { errorBodySchema } from './error-handler.js';

/** Registers the ingest routes over services.ingest. */
export default async function ingestRoutes(app: FastifyInstance): Promise<void> {
  function service() {
    const ingest = app.salon.ingest;
    if (!ingest) throw new errors.ERR_NOT_READY('ingestion is not configured');
    return ingest;
  }

  app.post(
    '/api/v1/ingest',
    {
      onRequest: requireAdmin,
      schema: {
        summary: 'Start an ingest job (admin)',
        description:
          'Exactly one of {url} (an article, or a feed if the URL serves one), {feed}, {youtubeFeed} or {hn} (a story id or "top"), ' +
          'with an optional limit on the number of items. Answers 202 with the job id; poll GET /api/v1/ingest/{jobId}.',
        tags: ['ingest'],
        security: adminSecurity,
        body: ingestBodySchema,
        response: {
          202: { type: 'object', properties: { jobId: { type: 'string' } }, required: ['jobId'] },
          400: errorBodySchema,
          401: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const job = await service().submit(request.body);
      reply.status(202);
      return { jobId: job.id };
    },
  );

  app.get<{ Params: { jobId: string } }>(
    '/api/v1/ingest/:jobId',
    {
      schema: {
        summary: 'Progress and per-item failures of an ingest job',
        description: 'Job ids are unguessable; knowing one is enough to read its progress.',
        tags: ['ingest'],
        params: jobParamsSchema,
        response: { 200: jobSchema, 404: errorBodySchema },
      },
    },
    async (request) => service().getJob(request.params.jobId),
  );
}
