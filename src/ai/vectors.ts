/** Checks and normalises vectors from remote embedders; dimensions of well-known models; their cosine. */
import { errors } from '../errors.js';

/** Output sizes of common embedding models, so the index knows its dimension before the first call. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'snowflake-arctic-embed': 1024,
  'bge-m3': 1024,
  'bge-large': 1024,
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** The dimension of `model` (an Ollama tag like `nomic-embed-text:latest` works), if well known. */
export function knownDimensions(model: string): number | undefined {
  const name = model.replace(/:latest$/, '');
  return Object.hasOwn(KNOWN_DIMENSIONS, name) ? KNOWN_DIMENSIONS[name] : undefined;
}

/**
 * Most dimensions an embedding may have: the widest embedding models give 4,096 (a chat model's
 * hidden state through Ollama's /api/embed up to 16,384). A server whose first answer held a
 * vector of millions set the embedder's dimension to it: the embedding cache kept megabytes per
 * text, and the index, which cannot be built that wide, refused every ingest with a RangeError.
 */
export const MAX_EMBEDDING_DIMENSIONS = 16_384;

/**
 * Float32 unit vectors from a server's answer; ERR_AI_BAD_RESPONSE when the count, the lengths or
 * the numbers are wrong. `where` names the endpoint in the message.
 */
export function toUnitVectors(raw: unknown, expected: number, where: string): Float32Array[] {
  if (!Array.isArray(raw) || raw.length !== expected) {
    throw new errors.ERR_AI_BAD_RESPONSE(`${where} returned ${Array.isArray(raw) ? raw.length : 'no'} vectors for ${expected} texts`);
  }
  const dim = Array.isArray(raw[0]) ? raw[0].length : 0;
  if (dim > MAX_EMBEDDING_DIMENSIONS)
    throw new errors.ERR_AI_BAD_RESPONSE(`${where} returned vectors of ${dim} dimensions, more than ${MAX_EMBEDDING_DIMENSIONS}`);
  return raw.map((v: unknown) => {
    if (!Array.isArray(v) || v.length !== dim || dim === 0) throw new errors.ERR_AI_BAD_RESPONSE(`${where} returned vectors of differing or zero length`);
    // Scaled by the largest magnitude first, in float64: a finite 1e39 is Infinity as a float32
    // and 1e200 squared is Infinity as a float64, and either made the whole vector NaN.
    let max = 0;
    for (let i = 0; i < dim; i++) {
      const x = v[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new errors.ERR_AI_BAD_RESPONSE(`${where} returned a vector with a non-number`);
      max = Math.max(max, Math.abs(x));
    }
    const out = new Float32Array(dim);
    if (max === 0) return out;
    let norm = 0;
    for (let i = 0; i < dim; i++) {
      const x = v[i] / max;
      norm += x * x;
    }
    const length = Math.sqrt(norm);
    for (let i = 0; i < dim; i++) out[i] = v[i] / max / length;
    return out;
  });
}

/**
 * The dimension of `vectors` (an answer's), which must be `expected` once that is known (from the
 * model's name or an earlier answer): a server that changes it mid-run (another model behind the
 * same name) would hand the index and the embedding cache vectors they cannot hold.
 */
export function answeredDimensions(vectors: Float32Array[], expected: number, where: string): number {
  const dim = vectors[0]?.length ?? expected;
  if (expected > 0 && dim !== expected) throw new errors.ERR_AI_BAD_RESPONSE(`${where} returned vectors of ${dim} dimensions; the model gives ${expected}`);
  return dim;
}

/** The cosine of two unit vectors (an Embedder's output): their dot product. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** sum += v, element by element; returns the sum of the new elements' squares. */
export function sumInto(sum: Float32Array, v: Float32Array): number {
  let squares = 0;
  for (let i = 0; i < sum.length; i++) {
    sum[i] += v[i];
    const s = sum[i];
    squares += s * s;
  }
  return squares;
}

/** `v` divided in place by the root of `squares` (its elements' squares summed; a zero vector stays zero). */
export function scaleToUnit(v: Float32Array, squares: number): Float32Array {
  const norm = Math.sqrt(squares) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
