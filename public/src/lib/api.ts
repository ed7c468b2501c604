/** Small typed wrappers around the HTTP API (docs/api.md). Errors carry the server's code. */
import type { ItemSummary, StoredItem } from '../../../src/protocol/content.js';
import type { SearchHit as ProtocolSearchHit } from '../../../src/protocol/search.js';
import { parseUntrustedJson } from './untrusted-json.js';

/** A content item as lists show it (the server's own type; a type-only import, so no server code is bundled). */
export type ContentSummary = ItemSummary;
/** One content item as `GET /api/v1/content/:id` returns it. */
export type ContentDetail = Omit<StoredItem, 'hash'>;

export interface ContentPage {
  items: ContentSummary[];
  nextCursor: string | null;
}

export interface ActiveRoom {
  id: string;
  kind: string;
  title: string;
  members: number;
}

/** An HTTP API failure: the `{error: {code, message}}` body, or a network problem. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
  }

  /** `err` as an ApiError: itself, or ERR_NETWORK carrying its text (a failure before any answer). */
  static from(err: unknown): ApiError {
    return err instanceof ApiError ? err : new ApiError('ERR_NETWORK', String(err), 0);
  }
}

/** GETs JSON from the API; throws ApiError with the server's code, or ERR_NETWORK. */
export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { accept: 'application/json' }, signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('ERR_NETWORK', 'The server cannot be reached. Check your connection and try again.', 0);
  }
  const body = (await res
    .text()
    .then(parseUntrustedJson)
    .catch((err: unknown) => {
      // Aborted while the body came: the caller's abort (a newer search), not an answer this page
      // cannot read, which the caller would show for a request it gave up.
      if (signal?.aborted) throw (err as Error)?.name === 'AbortError' ? err : new DOMException('The operation was aborted.', 'AbortError');
      return null;
    })) as { error?: { code?: string; message?: string } } | null;
  if (!res.ok) {
    throw new ApiError(body?.error?.code ?? `HTTP_${res.status}`, body?.error?.message ?? `The server answered ${res.status}.`, res.status);
  }
  // Every answer of the API is a JSON object. Anything else (a proxy's or a portal's page, a cut
  // body) came back as null, and each caller failed reading it with a TypeError shown as its reason.
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('ERR_BAD_RESPONSE', 'The server sent an answer this page cannot read. Try again.', res.status);
  }
  return body as T;
}

export interface ContentQuery {
  kind?: string;
  category?: string;
  limit?: number;
  cursor?: string;
}

export function listContent(query: ContentQuery, signal?: AbortSignal): Promise<ContentPage> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  return getJson<ContentPage>(`/api/v1/content?${params}`, signal);
}

export function getContent(id: string, signal?: AbortSignal): Promise<ContentDetail> {
  return getJson<ContentDetail>(`/api/v1/content/${encodeURIComponent(id)}`, signal);
}

export async function listRooms(signal?: AbortSignal): Promise<ActiveRoom[]> {
  return (await getJson<{ rooms: ActiveRoom[] }>('/api/v1/rooms', signal)).rooms;
}

/** One hit of `GET /api/v1/search` (the server's own type). */
export type SearchHit = ProtocolSearchHit;

/** What the search box asks: the words and its filters ('' or undefined for none). */
export interface SearchQuery {
  q: string;
  k?: number;
  kind?: string;
  category?: string;
  /** ISO date: published at or after. */
  since?: string;
  /** A site's host name. */
  source?: string;
}

export async function searchContent(query: SearchQuery, signal?: AbortSignal): Promise<SearchHit[]> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  return (await getJson<{ hits: SearchHit[] }>(`/api/v1/search?${params}`, signal)).hits;
}
