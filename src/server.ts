/** Process entry: load config, build the app, listen, and shut down cleanly on SIGINT/SIGTERM. */
import { randomBytes } from 'node:crypto';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { yieldHelperThreads } from './helper-threads.js';
import { listenUnlessShutDown, shutdownOnce } from './shutdown.js';

/** Errors of `listen` that mean HOST names no interface of this machine (or no address at all). */
const HOST_ERRORS = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);

/**
 * A listen error as the setting it comes from, when it is one: HOST for an address of no interface
 * here, PORT for a port another process holds or one below 1024 without the privilege (those
 * ended start-up with Node's `listen EADDRINUSE: …` and exit code 1, naming no setting).
 */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code && HOST_ERRORS.has(code)) return new ConfigError('HOST', `cannot listen on ${host} (${code}): no interface of this machine has that address`);
  if (code === 'EADDRINUSE') return new ConfigError('PORT', `port ${port} on ${host} is in use (EADDRINUSE): stop what listens there or choose another PORT`);
  if (code === 'EACCES')
    return new ConfigError('PORT', `not allowed to listen on port ${port} (EACCES): a port below 1024 needs privileges; choose another PORT`);
  return err;
}

/**
 * The config with an ADMIN_TOKEN: when it is unset, a random one, written straight to stderr as the
 * bad-configuration message is, so that it is shown whatever LOG_LEVEL says (a warning in the log
 * was the only place it appeared, and LOG_LEVEL=error left the admin routes without a token anyone
 * could know).
 */
function withAdminToken(config: Config): Config {
  if (config.ADMIN_TOKEN) return config;
  const token = randomBytes(24).toString('base64url');
  process.stderr.write(`salon: ADMIN_TOKEN is unset; until this server stops, admin routes accept this generated token: ${token}\n`);
  return Object.freeze({ ...config, ADMIN_TOKEN: token });
}

async function main(): Promise<void> {
  const config = withAdminToken(loadConfig());
  // Before the app starts threads of its own: every other thread now is Node's.
  const helpers = yieldHelperThreads();
  const app = await buildApp(config);
  app.log.debug({ helpers }, "Node's helper threads yield to the event loop");
  const shutdown = shutdownOnce(app);
  // SIGHUP too: the terminal that started it closing (an ssh session dropped) ended the process at
  // once, losing the open memory windows and whatever was still being written.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  // The last resort: every socket and route handler is guarded, so reaching these is a bug. The
  // process state is unknown after it, so the server closes cleanly (sockets get 1001) and exits
  // non-zero for the supervisor to restart it, rather than carrying on half-broken.
  const fatal = (kind: string) => (err: unknown) => {
    app.log.fatal({ err }, `${kind}; shutting down`);
    process.exitCode = 1;
    shutdown(kind);
  };
  process.on('uncaughtException', fatal('uncaughtException'));
  process.on('unhandledRejection', fatal('unhandledRejection'));
  try {
    // A signal during start-up (loading the index may take minutes) stops it before the port is bound.
    await listenUnlessShutDown(app, { port: config.PORT, host: config.HOST }, shutdown);
  } catch (err) {
    throw listenError(err, config.HOST, config.PORT);
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`salon: bad configuration: ${err.message}`);
    process.exit(2);
  }
  console.error(`salon: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
