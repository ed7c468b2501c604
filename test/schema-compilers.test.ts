/** The routes' schema compilers, shared by every app of the process (src/routes/schema-compilers.ts). */
import { describe, expect, it } from 'vitest';
import { sharedSchemaCompilers } from '../src/routes/schema-compilers.js';
import { testApp } from './helpers.js';

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
type Serialize = (data: unknown) => string;

const AJV_OPTIONS = { customOptions: { coerceTypes: 'array', removeAdditional: false } };
const params = () => ({ type: 'object', properties: { id: { type: 'string', maxLength: 3 } }, required: ['id'] });

function validator(schema: unknown, options: unknown = AJV_OPTIONS): Validate {
  const build = sharedSchemaCompilers.buildValidator as unknown as (ext: object, opts: unknown) => (route: object) => Validate;
  return build({}, options)({ schema, method: 'GET', url: '/x/:id', httpPart: 'params' });
}

describe('shared schema compilers', () => {
  it('compile an equal schema once, however many objects spell it, and still validate', () => {
    const first = validator(params());
    expect(validator(params())).toBe(first);
    expect(first({ id: 'abc' })).toBe(true);
    expect(first({ id: 'abcd' })).toBe(false);
    expect(first({})).toBe(false);
  });

  it('compile a different schema, or the same one under other options, apart', () => {
    const first = validator(params());
    const longer = validator({ ...params(), properties: { id: { type: 'string', maxLength: 4 } } });
    expect(longer).not.toBe(first);
    expect(longer({ id: 'abcd' })).toBe(true);
    const strict = validator(params(), { customOptions: { coerceTypes: false } });
    expect(strict).not.toBe(first);
    expect(first({ id: 12 })).toBe(true);
    expect(strict({ id: 12 })).toBe(false);
  });

  it('share serializers the same way', () => {
    const build = sharedSchemaCompilers.buildSerializer as unknown as (ext: object, opts: unknown) => (route: object) => Serialize;
    const schema = () => ({ type: 'object', properties: { n: { type: 'integer' } } });
    const first = build({}, {})({ schema: schema(), method: 'GET', url: '/x', httpStatus: '200' });
    expect(build({}, {})({ schema: schema(), method: 'GET', url: '/x', httpStatus: '200' })).toBe(first);
    expect(first({ n: 2, secret: 'kept out' })).toBe('{"n":2}');
  });

  it('refuse a headers schema, whose keys Fastify lower-cases only for its default compiler', () => {
    const build = sharedSchemaCompilers.buildValidator as unknown as (ext: object, opts: unknown) => (route: object) => Validate;
    expect(() => build({}, AJV_OPTIONS)({ schema: params(), method: 'GET', url: '/x', httpPart: 'headers' })).toThrow(/headers schemas/);
  });

  it('leave each of two apps in a process validating its requests', async () => {
    for (let i = 0; i < 2; i++) {
      const { app, close } = await testApp();
      try {
        const res = await app.inject({ url: '/api/v1/rooms/news_1/messages?limit=many' });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.message).toContain('limit');
      } finally {
        await close();
      }
    }
  });
});
