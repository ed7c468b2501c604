/** Members across nodes (RoomMembers) and the seqs a room already delivered (SeqWindow). */
import { describe, expect, it } from 'vitest';
import { MAX_SUFFIX_HINTS, RoomMembers } from '../../src/rooms/room-members.js';
import { REOPENED_RUNS_KEPT, SeqWindow } from '../../src/rooms/seq-window.js';

const entry = (id: string, name: string, since: number, node = 'other') => ({ node, id, name, since });

describe('RoomMembers', () => {
  it('lists this node’s and other nodes’ members once each, in join order', () => {
    const m = new RoomMembers();
    m.join('u1', 'Ana', 10);
    expect(m.setRemote([entry('u0', 'Zoe', 5), entry('u1', 'Ana', 10), entry('u2', 'Ben', 20)])).toEqual([
      { joined: { id: 'u0', name: 'Zoe' } },
      { joined: { id: 'u2', name: 'Ben' } },
    ]);
    expect(m.listed(10).map((x) => x.name)).toEqual(['Zoe', 'Ana', 'Ben']);
    expect(m.listed(2).map((x) => x.name)).toEqual(['Zoe', 'Ana']);
    expect([m.size, m.count]).toEqual([1, 3]);
  });

  it('reports leaves and renames on other nodes, but not for a member still connected here', () => {
    const m = new RoomMembers();
    m.join('u1', 'Ana', 10);
    m.setRemote([entry('u1', 'Ana', 10), entry('u2', 'Ben', 20)]);
    expect(m.setRemote([entry('u2', 'Benny', 20)])).toEqual([{}]);
    expect(m.elsewhere('u1')).toBe(false);
    expect(m.setRemote([])).toEqual([{ left: { id: 'u2', name: 'Benny' } }]);
    expect(m.count).toBe(1);
  });

  it('keeps names unique across nodes, except for the same user', () => {
    const m = new RoomMembers();
    m.setRemote([entry('u1', 'Ana', 10)]);
    expect(m.join('u2', 'ana', 20).member.name).toBe('ana (2)');
    const same = m.join('u1', 'Ana', 30);
    expect(same).toMatchObject({ member: { name: 'Ana' }, isNew: true, since: 10 });
    expect(m.count).toBe(2);
    expect(m.leave('u1')).toEqual({ id: 'u1', name: 'Ana' });
    expect(m.elsewhere('u1')).toBe(true);
  });

  it('takes a name in lookalike letters or with a variation selector for the name it imitates', () => {
    const m = new RoomMembers();
    m.join('u1', 'Ana', 10);
    expect(m.join('u2', '\u0410n\u0430', 20).member.name).toBe('\u0410n\u0430 (2)');
    m.join('u3', 'Kim \u2764', 30);
    expect(m.join('u4', 'Kim \u2764\uFE0F', 40).member.name).toBe('Kim \u2764\uFE0F (2)');
    // Punctuation and digits still tell names apart.
    expect(m.join('u5', 'Ana.', 50).member.name).toBe('Ana.');
    expect(m.join('u6', 'Ana2', 60).member.name).toBe('Ana2');
  });

  it('names thousands of members asking for one name apart in work proportional to their number', () => {
    const m = new RoomMembers();
    const normalize = String.prototype.normalize;
    let keys = 0;
    String.prototype.normalize = function (this: string, ...args: unknown[]) {
      keys++;
      return (normalize as (...a: unknown[]) => string).apply(this, args);
    } as typeof normalize;
    const names: string[] = [];
    try {
      for (let i = 0; i < 3000; i++) names.push(m.join(`u${i}`, 'Ana', i).member.name);
    } finally {
      String.prototype.normalize = normalize;
    }
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(3000);
    expect(names.slice(0, 3)).toEqual(['Ana', 'Ana (2)', 'Ana (3)']);
    // Each join checks the name, one or two suffixes, and keys the name it keeps: not 3,000 × 3,000 / 2.
    expect(keys).toBeLessThan(3000 * 5);
    // Suffixes go on from the last one given; one freed by a leave below it is not looked for again.
    m.leave('u1');
    expect(m.join('u_new', 'Ana', 5000).member.name).toBe('Ana (3001)');
  });

  it('remembers suffixes for a bounded number of names, however many names members take in turn', () => {
    const m = new RoomMembers();
    // Two members keep taking one new name after the other (a hello each: any client can).
    for (let i = 0; i < 3 * MAX_SUFFIX_HINTS; i++) {
      m.join('u_a', `Name ${i}`, i);
      expect(m.join('u_b', `Name ${i}`, i).member.name).toBe(`Name ${i} (2)`);
    }
    expect(m.suffixHints).toBe(MAX_SUFFIX_HINTS);
    // Names still come out apart, whether their hint is kept or was let go.
    const last = `Name ${3 * MAX_SUFFIX_HINTS - 1}`;
    for (const name of ['Name 0', last]) {
      const given = ['u_c', 'u_d', 'u_e'].map((id) => m.join(id, name, 0).member.name);
      expect(new Set([...given, last, `${last} (2)`]).size).toBe(5);
      for (const id of ['u_c', 'u_d', 'u_e']) m.leave(id);
    }
    expect(m.suffixHints).toBe(MAX_SUFFIX_HINTS);
  });

  it('never gives two joins here the same time, and orders equal times on two nodes by id alike everywhere', () => {
    const m = new RoomMembers();
    const cy = m.join('u_z', 'Cy', 50);
    const dan = m.join('u_a', 'Dan', 50);
    expect(dan.since).toBeGreaterThan(cy.since);
    // A Redis restore rewrites them together; the list keeps the order they joined in.
    const other = new RoomMembers();
    other.setRemote([entry('u_a', 'Dan', dan.since), entry('u_z', 'Cy', cy.since)]);
    expect(other.listed(10).map((x) => x.name)).toEqual(['Cy', 'Dan']);
    // Two nodes can still give the same millisecond: then the id decides, on every node.
    const tie = new RoomMembers();
    tie.join('u_m', 'Mo', 5);
    tie.setRemote([entry('u_z', 'Zed', 5), entry('u_b', 'Bo', 5)]);
    expect(tie.listed(10).map((x) => x.name)).toEqual(['Bo', 'Mo', 'Zed']);
  });

  it('applies another node’s changes: a member on two nodes leaves when the last one does, listed under their earliest join', () => {
    const m = new RoomMembers();
    m.join('u1', 'Ana', 10);
    expect(m.applyRemote('x', { joined: [{ id: 'u2', name: 'Ben', since: 20 }], left: [] })).toEqual([{ joined: { id: 'u2', name: 'Ben' } }]);
    expect(m.applyRemote('y', { joined: [{ id: 'u2', name: 'Benny', since: 30 }], left: [] })).toEqual([]);
    expect(m.listed(10).map((x) => x.name)).toEqual(['Ana', 'Ben']);
    // Ben's earliest entry goes: he is listed under the other node's, a rename.
    expect(m.applyRemote('x', { joined: [], left: ['u2'] })).toEqual([{}]);
    expect(m.listed(10).map((x) => x.name)).toEqual(['Ana', 'Benny']);
    expect(m.join('u3', 'Ben', 40).member.name).toBe('Ben');
    expect(m.join('u4', 'Benny', 50).member.name).toBe('Benny (2)');
    expect(m.applyRemote('y', { joined: [], left: ['u2', 'u9'] })).toEqual([{ left: { id: 'u2', name: 'Benny' } }]);
    expect(m.count).toBe(3);
    // A member also connected here is neither announced joining nor leaving from another node.
    expect(m.applyRemote('x', { joined: [{ id: 'u1', name: 'Ana', since: 10 }], left: [] })).toEqual([]);
    expect(m.elsewhere('u1')).toBe(true);
    expect(m.applyRemote('x', { joined: [], left: ['u1'] })).toEqual([]);
    expect(m.elsewhere('u1')).toBe(false);
  });

  it('keeps a name taken while two members on other nodes hold it and one leaves', () => {
    const m = new RoomMembers();
    m.setRemote([entry('u1', 'Ana', 10, 'x'), entry('u2', 'Ana', 11, 'y')]);
    m.applyRemote('x', { joined: [], left: ['u1'] });
    expect(m.join('u3', 'Ana', 20).member.name).toBe('Ana (2)');
  });
});

describe('SeqWindow', () => {
  it('remembers the seqs of its window and counts older ones as delivered', () => {
    const w = new SeqWindow(64);
    for (const s of [1, 2, 5]) w.add(s);
    expect([1, 2, 3, 4, 5, 6].map((s) => w.has(s))).toEqual([true, true, false, false, true, false]);
    w.add(100);
    expect([36, 37, 99, 100, 101].map((s) => w.has(s))).toEqual([true, false, false, true, false]);
    w.add(40);
    expect(w.has(40)).toBe(true);
    w.add(1000);
    expect([100, 999, 1000].map((s) => w.has(s))).toEqual([true, false, true]);
  });

  it('counts every seq up to one as delivered at once, older than its window or not, and goes on from there', () => {
    const fresh = new SeqWindow(64);
    fresh.addThrough(100);
    expect([1, 36, 37, 99, 100, 101].map((s) => fresh.has(s))).toEqual([true, true, true, true, true, false]);
    fresh.add(103);
    expect([100, 101, 102, 103].map((s) => fresh.has(s))).toEqual([true, false, false, true]);
    // Below its top: the seqs up to it are added, those above are as they were.
    const w = new SeqWindow(64);
    for (const s of [50, 52, 90]) w.add(s);
    w.addThrough(60);
    expect([27, 40, 51, 59, 60, 61, 89, 90].map((s) => w.has(s))).toEqual([true, true, true, true, true, false, false, true]);
    w.addThrough(0);
    expect(w.has(61)).toBe(false);
  });

  it('counts a reopened run as not delivered, older than its window or counted by addThrough, once', () => {
    const w = new SeqWindow(64);
    w.addThrough(30);
    for (let s = 31; s <= 200; s++) if (s !== 180) w.add(s);
    // 1–10: older than the window; 20–25: counted by addThrough; 170–185: in the window, 180 never added.
    for (const [from, to] of [
      [1, 10],
      [20, 25],
      [170, 185],
    ])
      w.reopen(from, to);
    expect([1, 10, 11, 20, 25, 26, 170, 179, 180, 181].map((s) => w.has(s))).toEqual([false, false, true, false, false, true, true, true, false, true]);
    for (const s of [1, 5, 20, 180]) w.add(s);
    expect([1, 2, 5, 20, 21, 180].map((s) => w.has(s))).toEqual([true, false, true, true, false, true]);
    // The same notice again: what was delivered stays delivered.
    w.reopen(1, 10);
    w.reopen(20, 25);
    expect([1, 2, 5, 20, 21].map((s) => w.has(s))).toEqual([true, false, true, true, false]);
    // The window moving on does not forget them.
    w.add(10_000);
    expect([1, 2, 20, 21, 9_000].map((s) => w.has(s))).toEqual([true, false, true, false, true]);
    // The newest REOPENED_RUNS_KEPT runs are kept: an older one counts as the window says again.
    for (let k = 0; k < REOPENED_RUNS_KEPT; k++) w.reopen(1_000 + 2 * k, 1_000 + 2 * k);
    expect([2, 21, 1_000].map((s) => w.has(s))).toEqual([true, true, false]);
    for (const bad of [
      [0, 5],
      [5, 4],
      [1, Infinity],
    ])
      w.reopen(bad[0], bad[1]);
    expect([3, 4, 9_000].map((s) => w.has(s))).toEqual([true, true, true]);
  });

  it('counts a seq that is no whole number ≥ 1 as delivered, and never takes it as its top', () => {
    const w = new SeqWindow(64);
    w.add(5);
    for (const bad of [Infinity, NaN, 0, -3, 2.5, 2 ** 53]) {
      w.add(bad);
      expect(w.has(bad), String(bad)).toBe(true);
    }
    expect([5, 6, 7].map((s) => w.has(s))).toEqual([true, false, false]);
  });
});
