import { wholeNumber } from '../../options.js';

/** a ranks below b: lower score, or the same score and a larger id (so results do not depend on order). */
const below = (sa: number, ia: number, sb: number, ib: number): boolean => sa < sb || (sa === sb && ia > ib);

/** A bounded min-heap keeping the k highest-scoring ids; used by scan workers and to merge their results. */
export class TopK {
  private readonly ids: Int32Array;
  private readonly scores: Float32Array;
  private n = 0;

  constructor(readonly k: number) {
    wholeNumber('TopK', 'k', k, 1);
    this.ids = new Int32Array(k);
    this.scores = new Float32Array(k);
  }

  get size(): number {
    return this.n;
  }

  /** Candidates scoring below this cannot enter (−Infinity until the heap is full). */
  get floor(): number {
    return this.n < this.k ? -Infinity : this.scores[0];
  }

  push(id: number, score: number): void {
    if (this.n < this.k) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!below(score, id, this.scores[parent], this.ids[parent])) break;
        this.ids[i] = this.ids[parent];
        this.scores[i] = this.scores[parent];
        i = parent;
      }
      this.ids[i] = id;
      this.scores[i] = score;
    } else if (below(this.scores[0], this.ids[0], score, id)) {
      this.siftDown(id, score);
    }
  }

  private siftDown(id: number, score: number): void {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const r = l + 1;
      const c = r < this.n && below(this.scores[r], this.ids[r], this.scores[l], this.ids[l]) ? r : l;
      if (!below(this.scores[c], this.ids[c], score, id)) break;
      this.ids[i] = this.ids[c];
      this.scores[i] = this.scores[c];
      i = c;
    }
    this.ids[i] = id;
    this.scores[i] = score;
  }

  /** The kept ids and scores, best first. Ties break by the smaller id, so results are stable. */
  sorted(): { ids: Int32Array; scores: Float32Array } {
    const order = Array.from({ length: this.n }, (_, i) => i).sort((a, b) => this.scores[b] - this.scores[a] || this.ids[a] - this.ids[b]);
    return {
      ids: Int32Array.from(order, (i) => this.ids[i]),
      scores: Float32Array.from(order, (i) => this.scores[i]),
    };
  }
}
