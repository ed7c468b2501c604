/** Errors crossing a worker boundary keep their catalogue code, status, message and cause. */
import { describe, expect, it } from 'vitest';
import { SalonError, errors } from '../src/errors.js';
import { fromWorkerError, toWorkerError } from '../src/worker-errors.js';

/** What structured cloning through postMessage does to a value. */
const acrossThreads = <T>(value: T): T => structuredClone(value);

describe('worker errors', () => {
  it('rebuild a catalogued error with its code, status and cause', () => {
    const thrown = new errors.ERR_EXTRACTION_FAILED('https://x.example/', 'no article', new RangeError('depth 400 exceeded'));
    const rebuilt = fromWorkerError(acrossThreads(toWorkerError(thrown)));
    expect(rebuilt).toBeInstanceOf(SalonError);
    expect(rebuilt).toMatchObject({ code: 'ERR_EXTRACTION_FAILED', statusCode: 422, message: thrown.message });
    expect(rebuilt.cause).toMatchObject({ name: 'RangeError', message: 'depth 400 exceeded' });
  });

  it('rebuild other errors by their name', () => {
    expect(fromWorkerError(acrossThreads(toWorkerError(new TypeError('maxChars must be positive'))))).toBeInstanceOf(TypeError);
    const odd = fromWorkerError(acrossThreads(toWorkerError(Object.assign(new Error('boom'), { name: 'ParseError' }))));
    expect(odd).toMatchObject({ name: 'ParseError', message: 'boom' });
    expect(odd.cause).toBeUndefined();
    expect(fromWorkerError(toWorkerError('a string'))).toMatchObject({ message: 'a string' });
  });
});
