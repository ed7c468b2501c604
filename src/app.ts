/**
 * Builds a Salon Fastify app from a Config: the services (src/services.ts, whose seams come from
 * src/parts.ts), then the plugins that serve them, each declaring what it needs. Tests pass doubles
 * in `overrides`.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { HTTP_RESERVE_CONNECTIONS, HTTP_RESERVE_PER_ADDRESS, HTTP_RESERVE_REQUEST_MS, type Config, type TrustProxy } from './config.js';
import aiPlugin from './plugins/ai.js';
import assistantPlugin from './plugins/assistant.js';
import contentPlugin from './plugins/content.js';
import roomsPlugin from './plugins/rooms.js';
import searchPlugin from './plugins/search.js';
import { AdminAuth } from './routes/auth.js';
import { capConnections, trustsPeer } from './routes/connection-cap.js';
import { readEmptyJsonBodyAsNone } from './routes/empty-json-body.js';
import { sharedSchemaCompilers } from './routes/schema-compilers.js';
import { refuseNonFiniteNumbers } from './routes/finite-numbers.js';
import { answerWhileClosing, frameworkErrors, installErrorHandlers, MAX_PATH_PARAM_CHARS } from './routes/error-handler.js';
import healthRoutes from './routes/health.js';
import { loopbackHostCheck, refuseRebinding } from './routes/loopback-host.js';
import { warnOfUntrustedProxy } from './routes/proxy-check.js';
import { cutStalledReaders } from './routes/stalled-readers.js';
import { scrubbedLogging } from './routes/request-log.js';
import apiRateLimit, { API_RATE_LIMIT } from './routes/rate-limit.js';
import webRoutes, { readShell } from './routes/web.js';
import { createServices, type ServiceOverrides } from './services.js';

/** Implementations that replace the ones the config would choose, and test-only settings. */
export interface AppOverrides extends ServiceOverrides {
  /** A folder laid out as fixtures/demo to seed from instead of fixtures/demo. */
  demoDir?: string;
  /** Where the log's lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void };
}

const BODY_LIMIT_BYTES = 1_048_576;
/**
 * How often Node looks for requests past their time limits. Its default, 30 s, with the headers'
 * own default limit of 60 s (Fastify sets only the request's), let a connection that sent nothing
 * or half its headers stay for 60-90 s whatever HTTP_REQUEST_TIMEOUT_MS said: a slow trickle of
 * such connections from anywhere holds the node's file descriptors.
 */
const CONNECTIONS_CHECK_MS = 1_000;
/**
 * How long requests in progress may go on finishing once the app closes (after the rooms closed
 * their sockets and the answers), before every HTTP connection still open is cut. Node's
 * `server.close()` closes only idle connections and stops enforcing request timeouts, and Fastify
 * runs it before every onClose hook: one client that sent half a request held the store and the
 * conversation memory open until the process's grace ran out.
 */
const HTTP_DRAIN_MS = 2_000;

/** TRUST_PROXY as Fastify takes it: a hop count becomes "trust the first n hops". */
function trustProxyOption(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Builds the app; call `listen()` to serve or `inject()` to test, and always `close()`. */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Request URLs are logged by their path (a query holds what people search for, maybe a token),
    // and what outsiders sent is printable: scrubbedLogging.
    logger: {
      level: config.LOG_LEVEL,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      ...scrubbedLogging,
      ...(overrides.logStream && { stream: overrides.logStream }),
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // Limits count the client's address: behind a proxy, only the proxies named here may tell it.
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // A client that trickles its request (slowloris) is cut off; idle keep-alives outlive a proxy's.
    // Node checks headersTimeout <= requestTimeout when it creates the server, before Fastify sets
    // requestTimeout: both go in at creation, or any value past Node's default (300 s) fails there.
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    http: {
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    // Fastify's default (10 s) bounds each plugin and onReady hook: loading the index of a large
    // store takes longer than that, and the server would refuse to start with its data.
    pluginTimeout: config.STARTUP_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
    // A path parameter as long as the longest valid id (`news_` + 128) reaches its route, whose
    // schema bounds it; the router's own refusals (a bad %-escape) answer in the error contract.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_CHARS },
    frameworkErrors,
    // Requests that arrive while the app closes are answered by answerWhileClosing, in the error contract.
    return503OnClosing: false,
    // The routes' schemas compiled once per process, not once per app (the tests build hundreds).
    schemaController: { compilersFactory: sharedSchemaCompilers },
  });

  const services = createServices(config, app.log, overrides);
  capConnections(app, {
    perAddress: config.HTTP_MAX_CONNECTIONS_PER_IP,
    total: config.HTTP_MAX_CONNECTIONS,
    reserve: HTTP_RESERVE_CONNECTIONS,
    reservePerAddress: HTTP_RESERVE_PER_ADDRESS,
    reserveRequestMs: HTTP_RESERVE_REQUEST_MS,
    trusted: trustsPeer(config.TRUST_PROXY),
    onRefused: (limit) => services.metrics.connectionRefused(limit),
  });
  cutStalledReaders(app, config.HTTP_REQUEST_TIMEOUT_MS);
  app.decorate('salon', services);
  app.decorate('adminAuth', new AdminAuth(services.adminToken));
  app.addHook('onClose', async () => {
    await services.store.close();
  });

  installErrorHandlers(app, { notFoundPage: () => readShell() });
  answerWhileClosing(app);
  warnOfUntrustedProxy(app, config.TRUST_PROXY);
  refuseRebinding(app, loopbackHostCheck(config.HOST, config.TRUST_PROXY));
  readEmptyJsonBodyAsNone(app);
  refuseNonFiniteNumbers(app);
  await app.register(apiRateLimit, { perMinute: config.API_RATE_LIMIT_PER_MINUTE });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Salon API', version: '1' },
      components: { securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
    },
  });
  await app.register(healthRoutes);
  // The browser client and the security headers of every response.
  await app.register(webRoutes);
  await app.register(aiPlugin);
  await app.register(searchPlugin);
  await app.register(contentPlugin, { demoDir: overrides.demoDir });
  await app.register(roomsPlugin);
  await app.register(assistantPlugin);
  // The document is fixed once the routes are: serialised once (~66 KB), then sent as it is.
  let openApi: string | undefined;
  app.get('/api/v1/openapi.json', { schema: { hide: true }, config: { rateLimit: API_RATE_LIMIT } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send((openApi ??= JSON.stringify(app.swagger()))),
  );
  // Registered last, so it runs after every other preClose hook (the rooms' among them).
  app.addHook('preClose', async () => cutConnectionsAfter(app.server, HTTP_DRAIN_MS));
  return app;
}

/** Closes every connection `server` still has `ms` from now, unless it has closed by then. */
function cutConnectionsAfter(server: FastifyInstance['server'], ms: number): void {
  const timer = setTimeout(() => server.closeAllConnections(), ms);
  timer.unref();
  server.once('close', () => clearTimeout(timer));
}
