/**
 * Who is in one room: the members connected to this node (a user with several tabs is one member)
 * and, from the shared presence, those connected to other nodes. A user connected to two nodes is
 * one member; names are unique across both (case-insensitively), later comers get `Ana (2)`.
 */
import type { Member } from '../protocol/messages.js';
import { sameNameKey } from '../protocol/names.js';
import { compareJoins, type PresenceEntry } from './types.js';

/** A member connected to this node. */
export interface MemberEntry {
  member: Member;
  connections: number;
  nameKey: string;
  /** The name the user asked for, before any suffix. */
  requested: string;
  /** When they joined (ms): the member list's order across nodes. */
  since: number;
}

/** A member's entry on one other node. */
interface NodeEntry {
  name: string;
  since: number;
}

/** A member connected to other nodes: the entry of each, and the one listed (the earliest join). */
interface RemoteMember {
  member: Member;
  since: number;
  /** node id → that node's entry; the member leaves when the last one goes. */
  nodes: Map<string, NodeEntry>;
}

/** What one other node's presence changed: its members who joined or took a name, and who left it. */
export interface RemoteUpdate {
  joined: { id: string; name: string; since: number }[];
  left: string[];
}

/** A join or leave for a presence frame; empty when only a name changed. */
export type PresenceChange = { joined?: Member; left?: Member };

const nameKey = sameNameKey;

/**
 * Names whose last suffix is remembered, at most (the least recently given goes first). A hint is
 * only a place to start looking, and members choose the names: kept for every name ever asked
 * for twice, a room kept alive could be made to remember a name per hello, for as long as it lived.
 */
export const MAX_SUFFIX_HINTS = 1_000;

export class RoomMembers {
  private readonly local = new Map<string, MemberEntry>();
  private readonly names = new Map<string, string>();
  /** Members on other nodes (userId →), including those also connected here. */
  private remote = new Map<string, RemoteMember>();
  /** Their listed names' keys → the users listed under them (two nodes may both give out a name at once). */
  private remoteNames = new Map<string, Set<string>>();
  /** Name key → the suffix last given to a member asking for that name (uniqueName); least recently given first. */
  private readonly suffixes = new Map<string, number>();
  /** The latest `since` given here: each join gets a later one, so this node's order is never a tie. */
  private lastSince = 0;

  /** Members connected to this node. */
  get size(): number {
    return this.local.size;
  }

  /** Members on every node, each once. */
  get count(): number {
    let n = this.local.size;
    for (const id of this.remote.keys()) if (!this.local.has(id)) n++;
    return n;
  }

  /** Names whose last suffix is remembered (tests). */
  get suffixHints(): number {
    return this.suffixes.size;
  }

  get(userId: string): MemberEntry | undefined {
    return this.local.get(userId);
  }

  /** True when the user is also connected to another node: leaving here is not leaving the room. */
  elsewhere(userId: string): boolean {
    return this.remote.has(userId);
  }

  /**
   * Adds a connection of `userId`. Their first makes them a member, under `name` or, when another
   * member already uses it, `name (2)`, `name (3)`…. A later connection asking for another name
   * renames the member (all their tabs): the last hello wins.
   */
  join(userId: string, name: string, now: number): { member: Member; isNew: boolean; renamed: boolean; since: number } {
    const existing = this.local.get(userId);
    if (existing) {
      existing.connections++;
      if (existing.requested === name) return { member: existing.member, isNew: false, renamed: false, since: existing.since };
      this.names.delete(existing.nameKey);
      existing.requested = name;
      existing.member.name = this.uniqueName(name, userId);
      existing.nameKey = nameKey(existing.member.name);
      this.names.set(existing.nameKey, userId);
      return { member: existing.member, isNew: false, renamed: true, since: existing.since };
    }
    const since = this.remote.get(userId)?.since ?? (this.lastSince = Math.max(now, this.lastSince + 1));
    const unique = this.uniqueName(name, userId);
    const entry = { member: { id: userId, name: unique }, connections: 1, nameKey: nameKey(unique), requested: name, since };
    this.local.set(userId, entry);
    this.names.set(entry.nameKey, userId);
    return { member: entry.member, isNew: true, renamed: false, since };
  }

  /** Removes a connection of `userId`; returns the member when it was their last one here. */
  leave(userId: string): Member | null {
    const entry = this.local.get(userId);
    if (!entry || --entry.connections > 0) return null;
    this.local.delete(userId);
    this.names.delete(entry.nameKey);
    return entry.member;
  }

  /**
   * Replaces what is known of other nodes' members (`entries`: theirs only, oldest first) and
   * returns the joins and leaves this makes to the member list.
   */
  setRemote(entries: PresenceEntry[]): PresenceChange[] {
    const before = this.remote;
    this.remote = new Map();
    this.remoteNames = new Map();
    for (const e of entries) this.place(e.node, e);
    const changes: PresenceChange[] = [];
    for (const [id, r] of this.remote) {
      if (this.local.has(id)) continue;
      const was = before.get(id);
      if (!was) changes.push({ joined: r.member });
      else if (was.member.name !== r.member.name) changes.push({});
    }
    for (const [id, r] of before) if (!this.remote.has(id) && !this.local.has(id)) changes.push({ left: r.member });
    return changes;
  }

  /**
   * Applies what one other node said changed, without reading the whole presence: the cost is the
   * update's size, not the room's. A member on several nodes leaves when the last of them does.
   * Returns the joins, renames and leaves this makes to the member list, as setRemote does.
   */
  applyRemote(node: string, update: RemoteUpdate): PresenceChange[] {
    const changes: PresenceChange[] = [];
    for (const e of update.joined) {
      const wasName = this.remote.get(e.id)?.member.name;
      const r = this.place(node, e);
      if (this.local.has(e.id)) continue;
      if (wasName === undefined) changes.push({ joined: r.member });
      else if (wasName !== r.member.name) changes.push({});
    }
    for (const id of update.left) {
      const r = this.remote.get(id);
      if (!r?.nodes.delete(node)) continue;
      const wasName = r.member.name;
      if (r.nodes.size) {
        this.show(id, r);
        if (!this.local.has(id) && wasName !== r.member.name) changes.push({});
        continue;
      }
      this.remote.delete(id);
      this.unname(wasName, id);
      if (!this.local.has(id)) changes.push({ left: r.member });
    }
    return changes;
  }

  /** Records `node`'s entry of a member and lists them under their earliest one. */
  private place(node: string, e: { id: string; name: string; since: number }): RemoteMember {
    let r = this.remote.get(e.id);
    if (!r) this.remote.set(e.id, (r = { member: { id: e.id, name: '' }, since: e.since, nodes: new Map() }));
    r.nodes.set(node, { name: e.name, since: e.since });
    this.show(e.id, r);
    return r;
  }

  /** Lists a member on other nodes under the entry of their earliest join (ties: the lower node id). */
  private show(id: string, r: RemoteMember): void {
    let first: [string, NodeEntry] | undefined;
    for (const n of r.nodes) if (!first || n[1].since < first[1].since || (n[1].since === first[1].since && n[0] < first[0])) first = n;
    const { name, since } = first![1];
    r.since = since;
    if (r.member.name === name) return;
    if (r.member.name) this.unname(r.member.name, id);
    // A new object: a change already handed out keeps the name it announced.
    r.member = { id, name };
    const key = nameKey(name);
    const users = this.remoteNames.get(key);
    if (users) users.add(id);
    else this.remoteNames.set(key, new Set([id]));
  }

  private unname(name: string, id: string): void {
    const key = nameKey(name);
    const users = this.remoteNames.get(key);
    if (users?.delete(id) && !users.size) this.remoteNames.delete(key);
  }

  /** The first `max` members of every node, in join order. */
  listed(max: number): Member[] {
    if (this.remote.size) {
      const all: { member: Member; since: number }[] = [...this.local.values()];
      for (const [id, r] of this.remote) if (!this.local.has(id)) all.push(r);
      return all
        .sort((a, b) => compareJoins(a.since, a.member.id, b.since, b.member.id))
        .slice(0, max)
        .map((e) => e.member);
    }
    const out: Member[] = [];
    for (const e of this.local.values()) {
      if (out.length >= max) break;
      out.push(e.member);
    }
    return out;
  }

  /**
   * The name `userId` asking for `name` goes by here now without joining (an HTTP asker): `name`,
   * or `name (2)`… when another member uses it, as a joining member would get.
   */
  nameFor(userId: string, name: string): string {
    return this.uniqueName(name, userId);
  }

  private uniqueName(name: string, userId: string): string {
    const taken = (key: string) => {
      if (this.names.has(key)) return true;
      const users = this.remoteNames.get(key);
      return users !== undefined && (users.size > 1 || !users.has(userId));
    };
    const key = nameKey(name);
    if (!taken(key)) return name;
    // Suffixes are tried from the last one given for this name, not from 2: with thousands of
    // members called Ana, trying every suffix again made each join cost as much as all before it.
    let n = Math.max(2, this.suffixes.get(key) ?? 2);
    while (taken(nameKey(`${name} (${n})`))) n++;
    this.suffixes.delete(key);
    this.suffixes.set(key, n);
    if (this.suffixes.size > MAX_SUFFIX_HINTS) this.suffixes.delete(this.suffixes.keys().next().value!);
    return `${name} (${n})`;
  }
}
