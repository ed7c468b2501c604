/**
 * `POST /api/v1/ingest` (admin: start a job), `GET /api/v1/ingest/:jobId` (its progress) and
 * `DELETE /api/v1/ingest/:jobId` (admin: cancel it).
 */
import type { FastifyInstance } from 'fastify';
import { DEFAULT_MAX_JOBS } from '../content/ingest/ingest.js';
import type { IngestJob } from '../store/types.js';
import { adminSecurity, isAdmin, requireAdmin } from './auth.js';
import { ingestBodySchema, jobParamsSchema, jobSchema } from './content-schemas.js';
import { errorBodySchema } from './error-handler.js';
import { withoutQueries } from './public-urls.js';
import { API_RATE_LIMIT } from './rate-limit.js';

/**
 * A job as anyone holding its id may read it: URLs in its request and failures without their query
 * (a source's poll names a private feed's URL, key included, in its failures; routes/public-urls.ts).
 */
function publicJob(job: IngestJob): IngestJob {
  const strip = (v: unknown): unknown => (typeof v === 'string' ? withoutQueries(v) : Array.isArray(v) ? v.map(strip) : v);
  return {
    ...job,
    request: Object.fromEntries(Object.entries(job.request).map(([k, v]) => [k, strip(v)])),
    failures: job.failures.map((f) => ({ ...f, ref: withoutQueries(f.ref), message: withoutQueries(f.message) })),
  };
}

/** Registers the ingest routes over services.ingest. */
export default async function ingestRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/api/v1/ingest',
    {
      config: { rateLimit: API_RATE_LIMIT },
      onRequest: requireAdmin,
      schema: {
        summary: 'Start an ingest job (admin)',
        description:
          'Exactly one of {url} (an article, or a feed if the URL serves one), {feed}, {youtubeFeed} or {hn} (a story id or "top"), ' +
          'with an optional limit on the number of items. Answers 202 with the job id; poll GET /api/v1/ingest/{jobId}. ' +
          `Refused with ERR_INGEST_BUSY (429) while ${DEFAULT_MAX_JOBS} jobs are running or queued.`,
        tags: ['ingest'],
        security: adminSecurity,
        body: ingestBodySchema,
        response: {
          202: { type: 'object', properties: { jobId: { type: 'string' } }, required: ['jobId'] },
          400: errorBodySchema,
          401: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const job = await app.salon.ingest.submit(request.body);
      reply.status(202);
      return { jobId: job.id };
    },
  );

  app.get<{ Params: { jobId: string } }>(
    '/api/v1/ingest/:jobId',
    {
      schema: {
        summary: 'Progress and per-item failures of an ingest job',
        description:
          'Job ids are unguessable; knowing one is enough to read its progress. URLs in its request and failures are shown without their query and fragment unless the request carries the admin token.',
        tags: ['ingest'],
        params: jobParamsSchema,
        response: { 200: jobSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const job = await app.salon.ingest.getJob(request.params.jobId);
      return isAdmin(request) ? job : publicJob(job);
    },
  );

  app.delete<{ Params: { jobId: string } }>(
    '/api/v1/ingest/:jobId',
    {
      config: { rateLimit: API_RATE_LIMIT },
      onRequest: requireAdmin,
      schema: {
        summary: 'Cancel an ingest job (admin)',
        description:
          'A queued or running job stops at its next step and ends `cancelled`, keeping the items it finished (each item is written whole or not at all). ' +
          'Answers with the job as it ended; a job that already ended is returned unchanged.',
        tags: ['ingest'],
        security: adminSecurity,
        params: jobParamsSchema,
        response: { 200: jobSchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => app.salon.ingest.cancel(request.params.jobId),
  );
}
