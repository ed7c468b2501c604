/** The walk through the store's word on threads a cut list leaves out (no browser needed: the fetch is a stub). */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../public/src/lib/api.js';
import type { ThreadView } from '../../public/src/lib/threads-api.js';
import { lookUpUnlisted, MAX_MERGE_HOPS } from '../../public/src/lib/unlisted-thread.js';

function view(id: string, mergedInto: string | null = null): ThreadView {
  return { id, title: id, status: mergedInto ? 'archived' : 'active', mergedInto } as ThreadView;
}

/** A store holding `threads`: fetching any other is ERR_THREAD_NOT_FOUND; `asked` records each fetch. */
function store(threads: ThreadView[]) {
  const asked: string[] = [];
  const fetch = (id: string) => {
    asked.push(id);
    const t = threads.find((x) => x.id === id);
    return t ? Promise.resolve(t) : Promise.reject(new ApiError('ERR_THREAD_NOT_FOUND', 'no such thread', 404));
  };
  return { asked, fetch };
}

const notListed = () => undefined;

describe('lookUpUnlisted', () => {
  it('follows merges of merges, taking listed threads from the list and fetching the others', async () => {
    const listed = view('t_c', 't_d');
    const { asked, fetch } = store([view('t_a', 't_b'), view('t_b', 't_c'), view('t_d')]);
    const found = await lookUpUnlisted('t_a', (id) => (id === 't_c' ? listed : undefined), fetch);
    expect(found).toEqual({ kind: 'found', chain: [view('t_a', 't_b'), view('t_b', 't_c'), listed, view('t_d')] });
    expect(asked).toEqual(['t_a', 't_b', 't_d']);
  });

  it('says gone only for the thread asked about; a deleted survivor ends the walk on the merged thread', async () => {
    const { fetch } = store([view('t_a', 't_gone')]);
    expect(await lookUpUnlisted('t_none', notListed, fetch)).toEqual({ kind: 'gone' });
    expect(await lookUpUnlisted('t_a', notListed, fetch)).toEqual({ kind: 'found', chain: [view('t_a', 't_gone')] });
  });

  it('says unknown, without throwing, when the store cannot answer, first or midway', async () => {
    const offline = () => Promise.reject(new ApiError('ERR_NETWORK', 'The server cannot be reached.', 0));
    expect(await lookUpUnlisted('t_a', notListed, offline)).toEqual({ kind: 'unknown' });
    const { fetch } = store([view('t_a', 't_b')]);
    const midway = (id: string) => (id === 't_b' ? Promise.reject(new TypeError('Failed to fetch')) : fetch(id));
    expect(await lookUpUnlisted('t_a', notListed, midway)).toEqual({ kind: 'unknown' });
  });

  it('asks about at most MAX_MERGE_HOPS threads, and each once', async () => {
    const long = Array.from({ length: 30 }, (_, i) => view(`t_${i}`, `t_${i + 1}`));
    const chain = store(long);
    const found = await lookUpUnlisted('t_0', notListed, chain.fetch);
    expect(chain.asked).toHaveLength(MAX_MERGE_HOPS);
    expect(found.kind === 'found' && found.chain.map((t) => t.id)).toEqual(chain.asked);

    const cycle = store([view('t_x', 't_y'), view('t_y', 't_x')]);
    expect(await lookUpUnlisted('t_x', notListed, cycle.fetch)).toEqual({ kind: 'found', chain: [view('t_x', 't_y'), view('t_y', 't_x')] });
    expect(cycle.asked).toEqual(['t_x', 't_y']);
  });
});
