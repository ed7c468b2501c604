/**
 * The demo content's images at `/demo/img/<file>` (fixtures/demo/img), served by @fastify/static.
 * Only plain file names with an image extension are served; SVGs get a CSP that forbids scripts,
 * so opening one directly cannot run code on this origin.
 */
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

export const DEMO_IMG_PREFIX = '/demo/img/';
/** `/name.ext` with a safe name and an image extension; nothing else is served. */
const SAFE_FILE = /^\/[A-Za-z0-9][A-Za-z0-9_-]{0,100}\.(svg|png|jpe?g|webp|gif|avif)$/;
const IMAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
const CACHE_SECONDS = 3600;

export interface DemoAssetsOptions {
  /** Folder of images (fixtures/demo/img). */
  dir: string;
}

/** Serves `options.dir` at /demo/img/ (nothing when the folder is missing). */
export default async function demoAssets(app: FastifyInstance, options: DemoAssetsOptions): Promise<void> {
  if (!existsSync(options.dir)) {
    app.log.warn(`demo images folder ${options.dir} is missing; /demo/img/ will answer 404`);
    return;
  }
  await app.register(fastifyStatic, {
    root: options.dir,
    prefix: DEMO_IMG_PREFIX,
    decorateReply: false,
    index: false,
    list: false,
    dotfiles: 'deny',
    maxAge: CACHE_SECONDS * 1000,
    allowedPath: (pathName: string) => SAFE_FILE.test(pathName),
    setHeaders: (response) => {
      response.setHeader('content-security-policy', IMAGE_CSP);
      response.setHeader('x-content-type-options', 'nosniff');
    },
  });
}
