/**
 * Vector fusion of two threads' memories (docs/architecture.md, "Threads: merge, split, fusion and
 * bridges"): a hybrid of union and fusion. The working set starts as A's chunks; each chunk w of B
 * takes its nearest chunk of A of the same audience not fused yet (candidates from scratch graphs
 * over sketches of A's vectors, neighbours.ts, scored exactly). When their cosine reaches the
 * threshold **and** their words say the same thing (same-meaning.ts, or the caller's gate), the two
 * become one chunk: vector normalize(nn + w), content `[A]: …\n[B]: …`, lineage of both. Otherwise
 * w is kept as it is. Each chunk of A fuses at most once, so the result has between max(|A|, |B|)
 * and |A| + |B| chunks, and a thread fused with a copy of itself keeps its size. A chunk taken over
 * unchanged names the stored chunk whose vector it copies (`copyOf`), so the store need not write
 * it again.
 *
 * Compaction (consolidate) runs the same loop over one thread's chunks, oldest first, each
 * compared with the ones kept before it.
 */
import { cosine, scaleToUnit, sumInto } from '../../ai/vectors.js';
import { LocalGraph } from '../../search/graph/local-graph.js';
import { Neighbours, type ReadVectors } from './neighbours.js';
import { Turns } from './turns.js';
import type { MemoryChunkAudience, StoredMemoryChunk } from '../../store/types.js';
import type { MemoryLineage, NewMemoryChunk } from '../types.js';
import { saySameThing } from './same-meaning.js';

/** Cosine from which two chunks are candidates for fusion (the fusion plan's default). */
export const DEFAULT_FUSION_THRESHOLD = 0.82;
/** Nearest chunks asked of the graph per chunk (compaction: the first of them in the same scope is the candidate). */
const CANDIDATES = 4;
/** Candidates per chunk of B from the sketch graphs, each scored exactly; more are asked when all of them are fused already. */
const FUSION_CANDIDATES = 8;
/**
 * The scratch graph trades build time for recall it does not need: each candidate is rescored
 * exactly, and a missed neighbour only means a chunk kept rather than fused.
 */
const GRAPH_PARAMS = { m: 12, efConstruction: 64, efSearch: 32, seed: 7 };
/**
 * Near ties the second pass scores exactly against every free chunk of A (~5–20 ms each at
 * 10,000 chunks of 2,048 dimensions): enough for the few a graph misses, bounded where many chunks
 * nearly tie yet say different things.
 */
const SECOND_PASS_MAX = 32;
/** Chunks of B whose first candidates are scored in one call (CosinesMany): ~4,000 dot products, a few ms. */
const SCORE_BLOCK = 512;

/** A chunk with its vector. */
export interface VectorChunk {
  chunk: StoredMemoryChunk;
  /** Its vector (ThreadService gives one that is copied out of the memory index only when read). */
  readonly vector: Float32Array;
}

/**
 * The vectors of stored chunks where they are kept (the memory index): `visit(i, vector)` is called
 * for each of `ids` held, synchronously, with a view valid during the call only; returns how many
 * it visited. A fusion given one sketches and sums vectors in place and copies none of its
 * sources' vectors out (MemoryService.visitIndexedVectors).
 */
export type StoredVectors = (ids: number[], visit: (i: number, vector: Float32Array) => void) => number;

/** A chunk of the result, not stored yet. */
export interface PlannedChunk {
  chunk: NewMemoryChunk;
  vector: Float32Array;
  /** When its sources were last seen (the later of two): retention keeps the most recently seen. */
  updatedAt?: string;
  /** The stored chunk this one copies unchanged (its stored vector is `vector`): the store may refer to that row's vector. */
  copyOf?: number;
  /** The stored chunks a fused pair's text joins, `[A]` first (NewMemoryEntry.linesOf): the store may refer to their lines. */
  linesOf?: [number, number];
}

export interface FusionResult {
  chunks: PlannedChunk[];
  /** Pairs made one. */
  fused: number;
  /** Chunks of B kept as they were. */
  kept: number;
}

/** Decides whether two close chunks say the same thing (the second gate). */
export type SameMeaningGate = (a: string, b: string) => boolean | Promise<boolean>;

/**
 * Exact cosines of a query with stored chunks by id (undefined for a chunk it cannot score), e.g.
 * MemoryService.cosines; `queryId` is the stored chunk whose vector the query is (`query` is then
 * called only if the scorer does not hold it).
 */
export type Cosines = (query: () => Float32Array, ids: number[], queryId?: number) => (number | undefined)[];

/**
 * Exact cosines of many stored chunks with many (e.g. MemoryService.cosinesOfChunks): for each of
 * `queryIds`, one score per chunk of `candidateIds[i]` (undefined for a pair it cannot score);
 * null when it cannot score them at once.
 */
export type CosinesMany = (queryIds: number[], candidateIds: number[][]) => (number | undefined)[][] | null;

export interface FusionOptions {
  /** The thread the result belongs to. */
  target: { threadId: string; roomId: string };
  threshold?: number;
  gate?: SameMeaningGate;
  /** Scores a chunk of B's candidates (default: a cosine loop over the vectors given). */
  cosines?: Cosines;
  /** Scores B's first candidates a block of B at a time, before `cosines` is asked (one kernel call per block instead of one per chunk). */
  cosinesMany?: CosinesMany;
  /** Where the chunks' vectors are read in place (default: each chunk's `vector`). */
  stored?: StoredVectors;
  /** A's scratch graphs begun before A's rows were read (startNeighbours): taken if A is still those chunks. */
  early?: EarlyNeighbours;
}

/**
 * A's scratch graphs begun from its chunks' ids and audiences and the vectors where they are
 * stored, before A's rows are read (startNeighbours). The plan takes them only when A's rows are
 * those chunks in that order and of those audiences (the graphs' labels are positions in A);
 * otherwise a chunk came or went in between, and it builds them again from the rows. A vector
 * changed in between only makes a graph propose other candidates: each is scored exactly.
 */
export interface EarlyNeighbours {
  ids: number[];
  audiences: string[];
  /** Null when they could not be built so (a vector the store does not hold, a failed build). */
  neighbours: Promise<Neighbours | null>;
}

/** A chunk of A known by id only, its vector read where it is stored (startNeighbours). */
class StoredItem {
  constructor(
    readonly id: number,
    readonly label: number,
    readonly audience: string,
  ) {}

  get vector(): Float32Array {
    throw new Error(`chunk ${this.id}: its vector is read where it is stored`);
  }
}

/**
 * Starts A's scratch graphs (Neighbours.of, sketched between event-loop turns and built on other
 * threads) from `chunks`, A's ids and audiences in id order, and `stored`, so that the build runs
 * while A's rows are read (docs/architecture.md, "Threads: merge, split, fusion and bridges").
 */
export function startNeighbours(chunks: MemoryChunkAudience[], stored: StoredVectors): EarlyNeighbours {
  const items = chunks.map((c, label) => new StoredItem(c.id, label, audienceOf(c)));
  const build = async (): Promise<Neighbours | null> => {
    if (!items.length) return null;
    let dimensions = 0;
    stored([items[0].id], (_, v) => (dimensions = v.length));
    if (!dimensions) return null;
    let missing = false;
    const read: ReadVectors = (slice, visit) => {
      if (
        stored(
          slice.map((it) => it.id!),
          visit,
        ) < slice.length
      )
        missing = true;
    };
    const neighbours = await Neighbours.of(items, dimensions, read);
    if (!missing) return neighbours;
    neighbours.close();
    return null;
  };
  return { ids: items.map((it) => it.id), audiences: items.map((it) => it.audience), neighbours: build().catch(() => null) };
}

/** Whether `early` was begun from `a`'s chunks, in a's order and of a's audiences. */
function sameChunks(early: EarlyNeighbours, a: VectorChunk[]): boolean {
  return early.ids.length === a.length && a.every((c, i) => c.chunk.id === early.ids[i] && audienceOf(c.chunk) === early.audiences[i]);
}

/**
 * Fuses B's chunks into A's; see the module comment. Yields to the event loop as it goes. B may
 * still be on its way (being read from the store): A's graphs are built off the event loop
 * meanwhile.
 */
export async function fuseMemories(a: VectorChunk[], pendingB: VectorChunk[] | Promise<VectorChunk[]>, options: FusionOptions): Promise<FusionResult> {
  const threshold = options.threshold ?? DEFAULT_FUSION_THRESHOLD;
  const gate = options.gate ?? saySameThing;
  const { target } = options;
  const { stored } = options;
  const read = stored ? readStored(stored) : undefined;
  const turns = new Turns();
  const out: PlannedChunk[] = [];
  for (const c of a) {
    if (turns.due()) await turns.next();
    out.push(planCopy(c, copyOf(c.chunk, target)));
  }
  const item = (c: VectorChunk, label: number) => new ChunkItem(c, label);
  const { early } = options;
  const begun = early && sameChunks(early, a) ? early.neighbours : null;
  // Begun from other chunks than A's rows: dropped, once built.
  if (early && !begun) void early.neighbours.then((n) => n?.close());
  const building = (async () => (await begun) ?? Neighbours.of(a.map(item), dimensionsOf(a, stored), read))();
  // Both at once: the graphs are built on other threads while B is read here.
  const [neighbours, b] = await Promise.all([building, pendingB]);
  // Every chunk of B's first candidates, looked up in one batch (on two threads); which of them are
  // free depends on the pairs made before, so the choice is still made one chunk at a time.
  const candidates = await neighbours.nearestEach(b.map(item), FUSION_CANDIDATES, read);
  const firstScores = new FirstScores(a, b, candidates, options.cosinesMany);
  const taken = new Uint8Array(a.length);
  let fused = 0;
  const fuse = (label: number, w: VectorChunk) => {
    const x = a[label];
    out[label] = { ...fusedPair(x, w, target, ['A', 'B'], stored), updatedAt: later(x.chunk.updatedAt, w.chunk.updatedAt) };
    taken[label] = 1;
    fused++;
  };
  /** Where each kept chunk of B went in `out` (by position in b), and those kept although a candidate reached the threshold. */
  const keptAt = new Map<number, number>();
  const refused: number[] = [];
  for (const [i, w] of b.entries()) {
    if (turns.due()) await turns.next();
    const nn = nearestFree(neighbours, a, w, taken, candidates[i], options.cosines, firstScores.of(i));
    if (nn !== null && nn.score >= threshold && (await gate(a[nn.label].chunk.text, w.chunk.text))) fuse(nn.label, w);
    else {
      // Planned here, between the loop's turns: after the loop, 7,000 copies ran in one stretch with the
      // store's first transaction (bench:fusion's longest stall went from ~72 to ~96 ms).
      keptAt.set(i, out.push(planCopy(w, { ...copyOf(w.chunk, target), fusion: 'kept' })) - 1);
      if (nn !== null && nn.score >= threshold) refused.push(i);
    }
  }
  neighbours.close();
  const late = await secondPass(a, b, refused, taken, threshold, gate, options.cosines, turns);
  if (!late.size) return { chunks: out, fused, kept: keptAt.size };
  const dropped = new Set<number>();
  for (const [i, label] of late) {
    fuse(label, b[i]);
    dropped.add(keptAt.get(i)!);
  }
  return { chunks: out.filter((_, k) => !dropped.has(k)), fused, kept: keptAt.size - late.size };
}

/**
 * The greedy pass's near ties, looked at again (at most SECOND_PASS_MAX of them, in B's order): a
 * chunk of B whose best free candidate reached the threshold but said something else may have its
 * true counterpart outside its candidates (a graph built on two threads now and then leaves a
 * chunk of A that many others nearly tie with unreachable: bench:fusion fused 2,998 or 2,999 of
 * its 3,000 pairs in some runs). Each is scored exactly against every chunk of A of its audience
 * still free, and takes the best one if it passes both gates, as the first pass would have.
 * Returns the pairs made, by position in b.
 */
async function secondPass(
  a: VectorChunk[],
  b: VectorChunk[],
  refused: number[],
  taken: Uint8Array,
  threshold: number,
  gate: SameMeaningGate,
  cosines: Cosines | undefined,
  turns: Turns,
): Promise<Map<number, number>> {
  const made = new Map<number, number>();
  for (const i of refused.slice(0, SECOND_PASS_MAX)) {
    if (turns.due()) await turns.next();
    const w = b[i];
    const audience = audienceOf(w.chunk);
    const free = a.flatMap((x, label) => (!taken[label] && audienceOf(x.chunk) === audience ? [label] : []));
    const nn = closest(a, w, free, cosines);
    if (nn !== null && nn.score >= threshold && (await gate(a[nn.label].chunk.text, w.chunk.text))) {
      taken[nn.label] = 1;
      made.set(i, nn.label);
    }
  }
  return made;
}

/** A chunk as the neighbour graphs take it; its vector is read only when asked for (a class: 20,000 object literals with a getter each cost ~25 ms). */
class ChunkItem {
  readonly id: number;
  readonly audience: string;

  constructor(
    private readonly c: VectorChunk,
    readonly label: number,
  ) {
    this.id = c.chunk.id;
    this.audience = audienceOf(c.chunk);
  }

  get vector(): Float32Array {
    return this.c.vector;
  }
}

/** `c` taken over unchanged as `chunk`: its vector is read only if someone asks (the store needs it only to write the copy in full). */
function planCopy(c: VectorChunk, chunk: NewMemoryChunk): PlannedChunk {
  return {
    chunk,
    get vector() {
      return c.vector;
    },
    updatedAt: c.chunk.updatedAt,
    copyOf: c.chunk.id,
  };
}

/** ReadVectors over `stored`, by chunk id; items it does not hold are read from their own `vector`. */
function readStored(stored: StoredVectors): ReadVectors {
  return (items, visit) => {
    const seen = new Uint8Array(items.length);
    const visited = stored(
      items.map((it) => it.id ?? -1),
      (j, v) => {
        seen[j] = 1;
        visit(j, v);
      },
    );
    if (visited < items.length) items.forEach((it, j) => seen[j] || visit(j, it.vector));
  };
}

/**
 * Exact cosines of each chunk of B with its first candidates (`candidates[i]`, labels in A),
 * scored through `many` a block of B at a time as the loop reaches it: a block is one kernel call,
 * where scoring each chunk alone cost ~30 µs of calls around its eight dot products.
 */
class FirstScores {
  private readonly scores: ((number | undefined)[] | undefined)[] = [];

  constructor(
    private readonly a: VectorChunk[],
    private readonly b: VectorChunk[],
    private readonly candidates: number[][],
    private readonly many?: CosinesMany,
  ) {}

  /** The scores of chunk i of B with its candidates, in their order (undefined: not scored at once). */
  of(i: number): (number | undefined)[] | undefined {
    if (!this.many) return undefined;
    if (i % SCORE_BLOCK === 0 && this.scores[i] === undefined) {
      const block = this.b.slice(i, i + SCORE_BLOCK);
      const scored = this.many(
        block.map((w) => w.chunk.id),
        block.map((_, j) => this.candidates[i + j].map((label) => this.a[label].chunk.id)),
      );
      if (scored) scored.forEach((s, j) => (this.scores[i + j] = s));
    }
    return this.scores[i];
  }
}

/**
 * The chunk of A nearest to `w` (exact cosine) among the sketch graph's candidates of its audience
 * that are not fused yet (`first`: its FUSION_CANDIDATES nearest, found beforehand, with their
 * cosines when scored already), with that cosine; when every candidate is fused, more are asked
 * for. Null when none is left.
 */
function nearestFree(
  neighbours: Neighbours,
  a: VectorChunk[],
  w: VectorChunk,
  taken: Uint8Array,
  first: number[],
  cosines?: Cosines,
  firstScores?: (number | undefined)[],
): { label: number; score: number } | null {
  const audience = audienceOf(w.chunk);
  const size = neighbours.size(audience);
  const scoredFirst = firstScores?.every((s) => s !== undefined) ? (label: number) => firstScores[first.indexOf(label)]! : undefined;
  for (let k = FUSION_CANDIDATES; ; k *= 4) {
    const found = k === FUSION_CANDIDATES ? first : neighbours.nearest(neighbours.query(w.vector), audience, k);
    const best = closest(
      a,
      w,
      found.filter((label) => !taken[label]),
      cosines,
      k === FUSION_CANDIDATES ? scoredFirst : undefined,
    );
    if (best !== null || k >= size) return best;
  }
}

/**
 * Of the chunks of A labelled `labels`, the one nearest to `w` by exact cosine, with that cosine;
 * null for none. `scored` gives every label's cosine when it is known already.
 */
function closest(
  a: VectorChunk[],
  w: VectorChunk,
  labels: number[],
  cosines?: Cosines,
  scored?: (label: number) => number,
): { label: number; score: number } | null {
  const scores = scored
    ? labels.map(scored)
    : cosines?.(
        () => w.vector,
        labels.map((label) => a[label].chunk.id),
        w.chunk.id,
      );
  let best: { label: number; score: number } | null = null;
  labels.forEach((label, i) => {
    const score = scores?.[i] ?? cosine(a[label].vector, w.vector);
    if (!best || score > best.score) best = { label, score };
  });
  return best;
}

export interface Consolidation {
  /** Chunks replaced: each group of near-duplicates becomes its first chunk's replacement. */
  replaced: { ids: number[]; into: PlannedChunk }[];
  /** Pairs made one. */
  fused: number;
}

/**
 * Near-duplicates inside one thread's memory (compaction): each chunk, oldest first, is compared
 * with the nearest chunk kept before it; a pair that passes both gates is made one.
 */
export async function consolidate(chunks: VectorChunk[], options: Omit<FusionOptions, 'target'>): Promise<Consolidation> {
  const threshold = options.threshold ?? DEFAULT_FUSION_THRESHOLD;
  const gate = options.gate ?? saySameThing;
  const working = new WorkingSet(dimensionsOf(chunks));
  /** Group of each kept chunk's index: the ids merged into it and its current form. */
  const groups = new Map<number, { ids: number[]; current: VectorChunk }>();
  let fused = 0;
  const turns = new Turns();
  for (let i = 0; i < chunks.length; i++) {
    if (turns.due()) await turns.next();
    const c = chunks[i];
    const audience = audienceOf(c.chunk);
    const nn = working.nearest(c.vector, (label) => audienceOf(chunks[label].chunk) === audience);
    const group = nn === null ? undefined : groups.get(nn);
    if (group && cosine(group.current.vector, c.vector) >= threshold && (await gate(group.current.chunk.text, c.chunk.text))) {
      const target = { threadId: c.chunk.threadId, roomId: c.chunk.roomId };
      const joined = fusedPair(group.current, c, target, null);
      group.ids.push(c.chunk.id);
      group.current = {
        chunk: { ...group.current.chunk, ...joined.chunk, updatedAt: later(group.current.chunk.updatedAt, c.chunk.updatedAt) },
        vector: joined.vector,
      };
      fused++;
      continue;
    }
    groups.set(i, { ids: [c.chunk.id], current: c });
    await working.add([{ label: i, vector: c.vector }]);
  }
  working.close();
  const replaced = [...groups.values()]
    .filter((g) => g.ids.length > 1)
    .map((g) => ({ ids: g.ids, into: { chunk: newChunkOf(g.current.chunk), vector: g.current.vector, updatedAt: g.current.chunk.updatedAt } }));
  return { replaced, fused };
}

/** A scratch HNSW graph over labelled vectors, for nearest-neighbour lookups while a plan is built. */
class WorkingSet {
  private graph: LocalGraph | null = null;

  constructor(private readonly dimensions: number) {}

  async add(items: { label: number; vector: Float32Array }[]): Promise<void> {
    if (!items.length || !this.dimensions) return;
    this.graph ??= LocalGraph.empty(this.dimensions, GRAPH_PARAMS);
    const packed = new Float32Array(items.length * this.dimensions);
    items.forEach((it, i) => packed.set(it.vector, i * this.dimensions));
    await this.graph.add(
      items.map((it) => it.label),
      packed,
    );
  }

  async remove(label: number): Promise<void> {
    await this.graph?.remove([label]);
  }

  /** The nearest label passing `accept`, or null. */
  nearest(vector: Float32Array, accept: (label: number) => boolean): number | null {
    for (const hit of this.graph?.search(vector, CANDIDATES) ?? []) if (accept(hit.rowId)) return hit.rowId;
    return null;
  }

  close(): void {
    this.graph = null;
  }
}

/** Who may read a chunk: everyone, or one owner's private asks. Only chunks of one audience are made one. */
function audienceOf(c: Pick<NewMemoryChunk, 'privileged' | 'owner'>): string {
  return c.privileged ? `private:${c.owner ?? ''}` : 'public';
}

function dimensionsOf(chunks: VectorChunk[], stored?: StoredVectors): number {
  const first = chunks[0];
  if (!first) return 0;
  let d: number | undefined;
  stored?.([first.chunk.id], (_, v) => (d = v.length));
  return d ?? first.vector.length;
}

/** A chunk as a new chunk of `target`, tracing back to where it came from. */
function copyOf(c: StoredMemoryChunk | NewMemoryChunk, target: { threadId: string; roomId: string }): NewMemoryChunk {
  const lineage = c.lineage ?? ('id' in c ? lineageOf(c) : undefined);
  // newChunkOf's object completed in place, not spread into another (a fusion copies ~14,000).
  const chunk = newChunkOf(c);
  chunk.threadId = target.threadId;
  chunk.roomId = target.roomId;
  if (lineage) chunk.lineage = lineage;
  return chunk;
}

/**
 * Two chunks made one: vector normalize(x + y), both texts (marked `[A]`/`[B]` when `marks` are
 * given), both lineages. With `stored`, both vectors are summed where they are kept.
 */
function fusedPair(
  x: VectorChunk,
  y: VectorChunk,
  target: { threadId: string; roomId: string },
  marks: [string, string] | null,
  stored?: StoredVectors,
): PlannedChunk {
  let sum: Float32Array | undefined;
  let norm = 0;
  // The first vector copied, the second added with the squares summed in the same sweep (the
  // float32 sums as before: 0 + x is x).
  const add = (v: Float32Array) => {
    if (sum === undefined) {
      sum = new Float32Array(v);
      return;
    }
    norm = sumInto(sum, v);
  };
  if (!stored || stored([x.chunk.id, y.chunk.id], (_, v) => add(v)) < 2) {
    sum = undefined;
    add(x.vector);
    add(y.vector);
  }
  const vector = scaleToUnit(sum!, norm);
  const lx = x.chunk.lineage ?? lineageOf(x.chunk);
  const ly = y.chunk.lineage ?? lineageOf(y.chunk);
  // Rooms only when both lineages name theirs: a lineage from before they did leaves its source's
  // room to its threads, which /forget private reads while they stand and, once one is gone, takes
  // as from any room (MemoryService.forgetPrivate); the other side's rooms alone would hide that.
  const roomIds = lx.roomIds && ly.roomIds ? [...new Set([...lx.roomIds, ...ly.roomIds])] : [];
  const text = marks ? `[${marks[0]}]: ${x.chunk.text}\n[${marks[1]}]: ${y.chunk.text}` : longer(x.chunk.text, y.chunk.text);
  return {
    chunk: {
      ...newChunkOf(x.chunk),
      threadId: target.threadId,
      roomId: target.roomId,
      text,
      messageIds: [...new Set([...x.chunk.messageIds, ...y.chunk.messageIds])],
      authors: [...new Set([...x.chunk.authors, ...y.chunk.authors])],
      firstTs: x.chunk.firstTs < y.chunk.firstTs ? x.chunk.firstTs : y.chunk.firstTs,
      lastTs: x.chunk.lastTs > y.chunk.lastTs ? x.chunk.lastTs : y.chunk.lastTs,
      fusion: 'fused',
      lineage: {
        chunkIds: [...new Set([...lx.chunkIds, ...ly.chunkIds])],
        threadIds: [...new Set([...lx.threadIds, ...ly.threadIds])],
        ...(roomIds.length ? { roomIds } : {}),
      },
    },
    vector,
    ...(marks ? { linesOf: [x.chunk.id, y.chunk.id] as [number, number] } : {}),
  };
}

/** The lineage of a stored chunk that has none yet: itself, its thread and its room. */
export function lineageOf(c: Pick<StoredMemoryChunk, 'id' | 'threadId' | 'roomId'>): MemoryLineage {
  return { chunkIds: [c.id], threadIds: [c.threadId], roomIds: [c.roomId] };
}

/** The later of two ISO times. */
function later(a: string, b: string): string {
  return a > b ? a : b;
}

/** Of two tellings of one thing, the fuller. */
function longer(a: string, b: string): string {
  return b.length > a.length ? b : a;
}

/** The fields of a new chunk (without the stored row's id, times and vector). */
export function newChunkOf(c: StoredMemoryChunk | NewMemoryChunk): NewMemoryChunk {
  const { threadId, roomId, kind, text, messageIds, authors, firstTs, lastTs, privileged, owner, fusion, lineage } = c;
  return {
    threadId,
    roomId,
    kind,
    text,
    messageIds,
    authors,
    firstTs,
    lastTs,
    privileged,
    owner,
    ...(fusion ? { fusion } : {}),
    ...(lineage ? { lineage } : {}),
  };
}
