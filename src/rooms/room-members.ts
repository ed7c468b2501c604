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

/** A member connected to other nodes. */
interface RemoteMember {
  member: Member;
  since: number;
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
  /** Their names' keys → userId. */
  private remoteNames = new Map<string, string>();
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
    const next = new Map<string, RemoteMember>();
    for (const e of entries) if (!next.has(e.id)) next.set(e.id, { member: { id: e.id, name: e.name }, since: e.since });
    const changes: PresenceChange[] = [];
    for (const [id, r] of next) {
      if (this.local.has(id)) continue;
      const before = this.remote.get(id);
      if (!before) changes.push({ joined: r.member });
      else if (before.member.name !== r.member.name) changes.push({});
    }
    for (const [id, r] of this.remote) if (!next.has(id) && !this.local.has(id)) changes.push({ left: r.member });
    this.remote = next;
    this.remoteNames = new Map([...next].map(([id, r]) => [nameKey(r.member.name), id]));
    return changes;
  }

  /** The first `max` members of every node, in join order. */
  listed(max: number): Member[] {
    if (this.remote.size) {
      const all: RemoteMember[] = [...this.local.values()];
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
    const taken = (key: string) => this.names.has(key) || (this.remoteNames.get(key) ?? userId) !== userId;
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
