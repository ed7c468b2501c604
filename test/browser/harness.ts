/**
 * Browser-test harness: Debian's Chromium through playwright-core (never a downloaded browser),
 * a Salon server on 127.0.0.1, a fresh client build when public/ changed, and in-page probes
 * (CSP violations, script-run hooks, a DOM scan through shadow roots).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type AppOverrides } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { blankItem, type ContentItem } from '../../src/content/types.js';
import { ADMIN, tempDir } from '../helpers.js';

/**
 * Debian's old headless shell (package chromium-headless-shell, what playwright itself runs headless)
 * where it is installed, else the full browser: a page costs the shell about half the CPU.
 */
export const CHROMIUM_PATH = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ?? '/usr/bin/chromium-headless-shell';
const ROOT = resolve(__dirname, '../..');
export const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

// A real browser on a shared 2-core machine is slower than vitest's defaults assume.
vi.setConfig({ testTimeout: 90_000, expect: { poll: { timeout: 10_000, interval: 50 } } });

/** Chromium is there, or the run must fail (CI sets SALON_REQUIRE_CHROMIUM=1). */
export const HAVE_CHROMIUM = existsSync(CHROMIUM_PATH);
const REQUIRE_CHROMIUM = process.env.SALON_REQUIRE_CHROMIUM === '1';

/**
 * `describe` for a browser suite: skipped when Chromium is missing, unless SALON_REQUIRE_CHROMIUM=1,
 * in which case a failing test says so.
 */
export function describeBrowser(name: string, body: () => void): void {
  if (!HAVE_CHROMIUM && REQUIRE_CHROMIUM) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`SALON_REQUIRE_CHROMIUM=1 but ${CHROMIUM_PATH} is missing: apt-get install -y chromium-headless-shell`);
      });
    });
    return;
  }
  describe.skipIf(!HAVE_CHROMIUM)(name, body);
}

export async function launchBrowser(): Promise<Browser> {
  // playwright gives every launch its own temporary user-data-dir and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

const SHARED_BROWSER = Symbol.for('salon.test.sharedBrowser');
type WithSharedBrowser = typeof globalThis & { [SHARED_BROWSER]?: Promise<Browser> };

/**
 * The Chromium of this test process, launched at its first call and shared by the browser files the
 * process runs after it (vitest.config.ts: `isolate: false`); kept on globalThis so that a module
 * evaluated again still finds it. Files share no state through it: each test opens contexts of its
 * own and `browserSuite` closes every context at the file's end. A browser that went away (crashed)
 * is launched again at the next call; playwright closes the last one when the process exits.
 */
export function sharedBrowser(): Promise<Browser> {
  const holder = globalThis as WithSharedBrowser;
  const existing = holder[SHARED_BROWSER];
  if (existing) return existing;
  const launched = launchBrowser();
  holder[SHARED_BROWSER] = launched;
  launched.then(
    (browser) => browser.on('disconnected', () => holder[SHARED_BROWSER] === launched && delete holder[SHARED_BROWSER]),
    () => holder[SHARED_BROWSER] === launched && delete holder[SHARED_BROWSER],
  );
  return launched;
}

/** Closes every context a file opened in the shared browser, so the next file starts from none. */
async function closeContexts(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close()));
}

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

async function withLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(dir);
      break;
    } catch {
      if (Date.now() > deadline) rmSync(dir, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds dist/public when it is missing or older than public/ or the build step (parallel test files wait for one build). */
export async function ensureClientBuilt(): Promise<void> {
  const marker = join(ROOT, 'dist/public/.built');
  const stale = () =>
    !existsSync(marker) ||
    statSync(marker).mtimeMs < Math.max(newestMtime(join(ROOT, 'public')), statSync(join(ROOT, 'scripts/build-steps/30-client.mjs')).mtimeMs);
  if (!stale()) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  await withLock(join(ROOT, 'dist/.client-build.lock'), async () => {
    if (!stale()) return;
    const step = (await import(pathToFileURL(join(ROOT, 'scripts/build-steps/30-client.mjs')).href)) as {
      buildClient(opts: { root: string; typecheck?: boolean }): Promise<void>;
    };
    await step.buildClient({ root: ROOT, typecheck: false });
  });
}

export interface TestServer {
  app: FastifyInstance;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** What `startServer` takes besides the data directory. */
export interface ServerOptions {
  port?: number;
  env?: Parameters<typeof testConfig>[0];
  overrides?: AppOverrides;
}

/** A Salon server on 127.0.0.1 (port 0 unless given) over `dataDir`. */
export async function startServer(dataDir: string, options: ServerOptions = {}): Promise<TestServer> {
  const config = testConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 'test-admin-token', ...options.env });
  const app = await buildApp(config, options.overrides);
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, port, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** What `browserSuite` sets up besides the client build, a temporary directory and Chromium. */
export interface BrowserSuiteOptions {
  /** Starts a Salon server over the suite's temporary directory: `true`, or startServer's options. Left out, the suite starts its own. */
  server?: true | ServerOptions;
  /** Creates ARTIFACTS, where the suite saves its screenshots. */
  artifacts?: boolean;
  /** Closes what the suite started itself (a server started in a test): after the browser, before the suite's server and directory. */
  teardown?: () => unknown;
}

/** What a browser suite's tests read once its setup has run. */
export interface BrowserSuite {
  readonly browser: Browser;
  /** The server the suite asked for with `server`. */
  readonly server: TestServer;
  /** The suite's temporary directory: the server's DATA_DIR. */
  readonly dataDir: string;
}

/**
 * Registers the setup and teardown every browser suite shares; call it in `describeBrowser`'s body,
 * before the suite's own hooks. `beforeAll`: the client build, a temporary directory, the process's
 * shared Chromium, the server if asked for, the artifacts directory if asked for. `afterAll`: closes
 * the contexts the file opened in the browser, then `teardown`, then the server, then removes the
 * directory, each step even when an earlier one (or the setup) failed. A suite seeds its server in its own `beforeAll`, registered after this call:
 * vitest runs beforeAll hooks in order, and none after one that failed. The handle's getters throw
 * when read before the setup has made what they return.
 */
export function browserSuite(options: BrowserSuiteOptions = {}): BrowserSuite {
  let dir: { dir: string; cleanup: () => void } | undefined;
  let browser: Browser | undefined;
  let server: TestServer | undefined;

  beforeAll(async () => {
    await ensureClientBuilt();
    dir = tempDir();
    browser = await sharedBrowser();
    if (options.server) server = await startServer(dir.dir, options.server === true ? {} : options.server);
    if (options.artifacts) mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    const errors: unknown[] = [];
    for (const step of [() => browser && closeContexts(browser), options.teardown, () => server?.close(), () => dir?.cleanup()]) {
      try {
        await step?.();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'browserSuite: the teardown failed in several steps');
  });

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`browserSuite: ${what} is read before the suite's beforeAll made it (or after that beforeAll failed)`);
    return value;
  };
  return {
    get browser() {
      return ready(browser, 'the browser');
    },
    get server() {
      if (!options.server) throw new Error('browserSuite: this suite asked for no server (pass `server: true` or its options)');
      return ready(server, 'the server');
    },
    get dataDir() {
      return ready(dir?.dir, 'the data directory');
    },
  };
}

/** A content item with sensible defaults, for tests that put items straight into the store. */
export function item(id: string, fields: Partial<ContentItem> = {}): ContentItem {
  return blankItem(id, {
    title: `Item ${id}`,
    url: `https://example.org/${id}`,
    description: `About ${id}. More words follow here.`,
    body: `The body of ${id}.`,
    category: 'Tech',
    publishedAt: '2026-01-10T09:00:00.000Z',
    ...fields,
  });
}

/** A person in a browser: their own context (own localStorage, so their own identity) with probes installed. */
/** POSTs `body` as JSON to `path` on `server` with the admin token; expects 200 and returns the answer. */
export async function adminPost<T>(server: TestServer, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (await res.json()) as T;
}

/** A new thread of `roomId` titled `title`, made through the API; its id. */
export async function newThread(server: TestServer, roomId: string, title: string): Promise<string> {
  return (await adminPost<{ thread: { id: string } }>(server, `/api/v1/rooms/${roomId}/threads`, { title })).thread.id;
}

export interface Person {
  context: BrowserContext;
  page: Page;
}

/** Opens a person's window, named `name` in rooms; the viewport is Playwright's default unless given. */
export async function openAs(browser: Browser, name: string, viewport?: { width: number; height: number }): Promise<Person> {
  const context = await browser.newContext(viewport ? { viewport } : {});
  await instrument(context);
  await context.addInitScript((n) => localStorage.setItem('salon.name', n), name);
  return { context, page: await context.newPage() };
}

/** Types `text` into the room's composer and sends it with Enter. */
/**
 * The `assistant.done` of a private answer to an `ask` frame caught on a routed socket (a private
 * answer is never stored, so a test that holds the server back answers it itself).
 */
export function privateAnswerFrame(ask: { clientId?: string; threadId?: string }, roomId: string, mainThreadId: string): string {
  const answer = {
    id: `private_${ask.clientId}`,
    seq: 0,
    roomId,
    threadId: ask.threadId ?? mainThreadId,
    author: { id: 'assistant', name: 'Assistant', kind: 'assistant' },
    text: 'A private answer.',
    ts: new Date().toISOString(),
  };
  return JSON.stringify({ type: 'assistant.done', message: { ...answer, clientId: 'ans_private' } });
}

/** The thread list's button for the thread titled `title`. */
export function threadButton(page: Page, title: string): Locator {
  return page.locator('salon-thread-list button.thread', { has: page.locator('.title', { hasText: title }) });
}

/** The message `text` as the page shows it: its state, and its failure's words and buttons. */
export async function shownMessage(page: Page, text: string): Promise<{ state: string | null; status: string; buttons: string[] }> {
  const el = page.locator('salon-message-item', { hasText: text });
  if ((await el.count()) !== 1) return { state: `${await el.count()} items`, status: '', buttons: [] };
  return el.evaluate((node) => ({
    state: node.getAttribute('state'),
    status: node.shadowRoot?.querySelector('.status')?.textContent?.replace(/\s+/g, ' ').trim() ?? '',
    buttons: Array.from(node.shadowRoot?.querySelectorAll('button') ?? []).map((b) => b.textContent?.trim() ?? ''),
  }));
}

export async function say(page: Page, text: string): Promise<void> {
  const box = page.locator('salon-composer textarea');
  await box.fill(text);
  await box.press('Enter');
}

/**
 * Installs in every page of `context`, before any page script: hooks on alert/confirm/prompt and a
 * global flag any injected script would trip, and a record of CSP violations.
 */
export async function instrument(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const w = window as unknown as Record<string, unknown>;
    w.__salonProbe = { alerts: [] as string[], violations: [] as string[] };
    const probe = w.__salonProbe as { alerts: string[]; violations: string[] };
    for (const name of ['alert', 'confirm', 'prompt', 'print']) {
      w[name] = (msg?: unknown) => {
        probe.alerts.push(`${name}:${String(msg)}`);
      };
    }
    document.addEventListener('securitypolicyviolation', (e) => {
      probe.violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
    });
  });
}

/** What the probes saw in `page`. */
export async function probeResults(page: Page): Promise<{ alerts: string[]; violations: string[]; xss: unknown }> {
  return page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    const probe = w.__salonProbe as { alerts: string[]; violations: string[] };
    return { alerts: probe.alerts, violations: probe.violations, xss: w.__xss };
  });
}

/**
 * Scans the whole DOM, shadow roots included, for anything that could run script: script
 * elements other than the app bundle, inline event handler attributes, javascript:/vbscript:/
 * data:text URLs, embedding elements. Returns descriptions of what it found.
 */
export async function scanDom(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const urlAttrs = ['href', 'src', 'action', 'formaction', 'xlink:href', 'srcdoc', 'data', 'poster', 'background'];
    // Message content lives in salon-markdown's shadow root: there not even inline styles may appear.
    const visit = (root: Document | ShadowRoot, content = false) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        const tag = el.tagName.toLowerCase();
        if (tag === 'script' && !(el as HTMLScriptElement).src.includes('/assets/app-')) found.push(`script: ${el.outerHTML.slice(0, 120)}`);
        if (['iframe', 'object', 'embed', 'frame', 'base'].includes(tag)) found.push(`element: ${tag}`);
        for (const attr of Array.from(el.attributes)) {
          const name = attr.name.toLowerCase();
          if (name.startsWith('on')) found.push(`handler: <${tag} ${name}="${attr.value.slice(0, 60)}">`);
          if (content && name === 'style') found.push(`style attribute in a message: <${tag}>`);
          const value = attr.value.replace(/[\s\u0000-\u001f]+/g, '').toLowerCase();
          if (urlAttrs.includes(name) && /^(javascript|vbscript|data:text|data:application)/.test(value)) {
            found.push(`url: <${tag} ${name}="${attr.value.slice(0, 60)}">`);
          }
        }
        if (el.shadowRoot) visit(el.shadowRoot, content || tag === 'salon-markdown');
      }
    };
    visit(document);
    return found;
  });
}

/** The text inside an element's shadow root (Playwright's textContent reads only light DOM). */
export async function shadowText(locator: Locator): Promise<string> {
  return locator.evaluate((el) => el.shadowRoot?.textContent ?? el.textContent ?? '');
}

/** The texts of the messages a page shows, in order (each `<salon-message-item>`'s text). */
export async function messageTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walk = (root: Document | ShadowRoot) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-MESSAGE-ITEM') out.push((el as unknown as { text: string }).text);
        else if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  });
}
