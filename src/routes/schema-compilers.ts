/**
 * Fastify's schema compilers, shared by every app the process builds: a route's validator and
 * serializer are compiled once per distinct schema and options, not once per app. A server builds
 * one app; the tests build hundreds in a process, and compiling the routes' schemas (Ajv and
 * fast-json-stringify generate and compile code) was a third of each app's start.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** What Fastify passes a validator or serializer builder for one route part. */
interface RouteSchema {
  schema: unknown;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
}
type Compile = (route: RouteSchema) => unknown;
type Builder = (externalSchemas: Record<string, unknown>, options: unknown) => Compile;

// Fastify's own default compilers (its dependencies), wrapped rather than re-implemented.
const require = createRequire(import.meta.url);
const defaultValidatorBuilder = (require('@fastify/ajv-compiler') as () => Builder)();
const defaultSerializerBuilder = (require('@fastify/fast-json-stringify-compiler') as () => Builder)();

/**
 * A builder whose compilers answer a schema compiled before (with the same shared schemas and
 * options) from a cache. Schemas are keyed by their JSON, so the routes' schema objects, made
 * afresh by every app, hit. The compiled functions keep no state between calls.
 */
function memoized(build: Builder): Builder {
  const compilers = new Map<string, Map<string, unknown>>();
  return (externalSchemas, options) => {
    const key = JSON.stringify([externalSchemas, options]);
    let compiled = compilers.get(key);
    if (!compiled) {
      compiled = new Map();
      compilers.set(key, compiled);
    }
    const cache = compiled;
    const compile = build(externalSchemas, options);
    return (route) => {
      // Fastify lower-cases a headers schema's keys only for its default compiler, not a custom one:
      // no route has one, and one added must not be checked case-sensitively unnoticed.
      if (route.httpPart === 'headers') throw new Error('headers schemas are not supported by the shared schema compilers (src/routes/schema-compilers.ts)');
      const schemaKey = JSON.stringify(route.schema);
      let fn = cache.get(schemaKey);
      if (fn === undefined) {
        fn = compile(route);
        cache.set(schemaKey, fn);
      }
      return fn;
    };
  };
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** Fastify's `schemaController.compilersFactory`, the same for every app of the process. */
export const sharedSchemaCompilers = {
  buildValidator: memoized(defaultValidatorBuilder),
  buildSerializer: memoized(defaultSerializerBuilder),
} as unknown as CompilersFactory;
