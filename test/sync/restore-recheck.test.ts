/**
 * A store restored from a backup under running nodes: the rows the restore removed are named by no
 * entry left in the change log, so a node that sees its log go back re-checks the rows its indexes
 * hold against the store and drops those that are gone, in slices, without a restart; rows the
 * restore brought back (deleted after the backup) are looked for in the store and indexed again.
 * Two nodes on one store (SQLite file, PostgreSQL schema): one writes, the other follows.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeFeed } from '../../src/sync/change-feed.js';
import { IndexSync, RECHECK_SLICE, type ChangeApplier } from '../../src/sync/index-sync.js';
import { silentLogger } from '../../src/logger.js';
import { PostgresStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/types.js';
import { storesOnOneFile } from '../helpers.js';
import { until } from '../rooms/helpers.js';
import { item } from '../store/contract.js';
import { POSTGRES_URL, describePostgres, dropSchema, schemaName, urlWithSchema } from '../store/postgres-harness.js';

/** One bus between the nodes: what one publishes every node hears (its own echo included). */
class SharedFeed implements ChangeFeed {
  readonly shared = true;
  private handlers: ((notice: string) => void)[] = [];
  private changeHandlers: ((connected: boolean) => void)[] = [];
  async publish(notice: string): Promise<void> {
    for (const h of this.handlers) h(notice);
  }
  subscribe(handler: (notice: string) => void): void {
    this.handlers.push(handler);
  }
  onConnectionChange(handler: (connected: boolean) => void): void {
    this.changeHandlers.push(handler);
  }
  close(): void {}
  /** The feed is back: every node catches up from the log. */
  connected(): void {
    for (const h of this.changeHandlers) h(true);
  }
}

/** A node's documents index as a set of row ids, following the store as Indexer.applyStored does. */
function setIndex(store: Store): ChangeApplier & { held: Set<number> } {
  const held = new Set<number>();
  return {
    held,
    applyStored: async (ids) => {
      const found = new Set((await store.getChunks(ids)).map((c) => c.rowId));
      for (const id of ids) found.has(id) ? held.add(id) : held.delete(id);
    },
    indexedRowIds: () => Int32Array.from(held),
  };
}

interface TwoNodes {
  writer: Store;
  follower: Store;
  /** Copies the chunks of `items` aside, as a backup holds them (restore puts them back). */
  backup(items: string[]): Promise<void>;
  /**
   * Puts the store back to what it held through log entry `seq` (its sequence included), without
   * the chunks of `items`, with those backed up; `pruned`: a backup older than the log's retention,
   * whose entries through `seq` are gone too.
   */
  restore(seq: number, items: string[], pruned?: boolean): Promise<void>;
  close(): Promise<void>;
}

function droppedAfterRestore(kind: string, open: () => Promise<TwoNodes>) {
  describe(`a restored store under running nodes (${kind})`, () => {
    let nodes: TwoNodes;
    let feed: SharedFeed;
    let syncs: IndexSync[];
    let index: ReturnType<typeof setIndex>;
    let errors: string[];

    beforeEach(async () => {
      nodes = await open();
      feed = new SharedFeed();
      errors = [];
      index = setIndex(nodes.follower);
      const log = { ...silentLogger, error: (_: object, message: string) => void errors.push(message) };
      const none = { applyStored: async () => {} };
      syncs = [
        new IndexSync({ store: nodes.writer, feed, nodeId: 'writer', targets: { documents: none, memory: none }, resyncMs: 3_600_000 }),
        new IndexSync({ store: nodes.follower, feed, nodeId: 'follower', targets: { documents: index, memory: none }, log, resyncMs: 3_600_000 }),
      ];
      for (const sync of syncs) await sync.begin();
      for (const sync of syncs) sync.start();
    });
    afterEach(async () => {
      for (const sync of syncs ?? []) await sync.close();
      await nodes?.close();
    });

    /** The writer stores an item of `chunks` chunks and tells the follower; its row ids. */
    async function put(id: string, chunks: number): Promise<number[]> {
      await nodes.writer.upsertItem(item(id));
      const { added } = await nodes.writer.replaceChunks(
        id,
        Array.from({ length: chunks }, (_, ord) => ({ ord, part: 'body' as const, text: `${id} part ${ord}` })),
      );
      const rows = added.map((c) => c.rowId);
      await syncs[0].record('documents', rows);
      await until(() => rows.every((r) => index.held.has(r)));
      return rows;
    }

    it('drops from the follower’s index the rows the restore removed, across more than one slice', async () => {
      const kept = await put('news_kept', 3);
      const backupSeq = await nodes.writer.lastIndexChange();
      // More rows than one slice of the re-check, all gone with the restore.
      const lost = [...(await put('news_lost', RECHECK_SLICE + 20)), ...(await put('news_also_lost', 2))];
      await nodes.restore(backupSeq, ['news_lost', 'news_also_lost']);
      expect(await nodes.follower.getChunks(lost.slice(0, 5))).toEqual([]);

      feed.connected();
      await until(() => lost.every((r) => !index.held.has(r)), 10_000);
      expect([...index.held].sort((a, b) => a - b)).toEqual(kept);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/went back/);

      // What is stored after the restore (under ids the restore freed, on PostgreSQL's reset identity too) is followed as before.
      const after = await put('news_after', 2);
      expect([...index.held].sort((a, b) => a - b)).toEqual([...kept, ...after].sort((a, b) => a - b));
    });

    it('indexes again the rows the restore brought back, deleted after the backup', async () => {
      const kept = await put('news_kept', 3);
      const back = await put('news_back', RECHECK_SLICE + 20);
      await nodes.backup(['news_back']);
      const backupSeq = await nodes.writer.lastIndexChange();
      // Deleted after the backup: the follower drops them.
      await nodes.writer.replaceChunks('news_back', []);
      await syncs[0].record('documents', back);
      await until(() => back.every((r) => !index.held.has(r)));

      // The entries that added them are past the log's retention: no entry names them.
      await nodes.restore(backupSeq, [], true);
      expect((await nodes.follower.getChunks(back.slice(0, 5))).map((c) => c.rowId)).toEqual(back.slice(0, 5));
      feed.connected();
      await until(() => back.every((r) => index.held.has(r)), 10_000);
      expect([...index.held].sort((a, b) => a - b)).toEqual([...kept, ...back].sort((a, b) => a - b));
    });
  });
}

droppedAfterRestore('SQLite', async () => {
  const { stores, file, close } = storesOnOneFile({ writer: {}, follower: {} });
  return {
    writer: stores.writer,
    follower: stores.follower,
    backup: async (items) => {
      const raw = new Database(file);
      raw.exec('CREATE TABLE IF NOT EXISTS backup_chunks AS SELECT * FROM chunks WHERE 0');
      for (const id of items) raw.prepare('INSERT INTO backup_chunks SELECT * FROM chunks WHERE item_id = ?').run(id);
      raw.close();
    },
    restore: async (seq, items, pruned) => {
      const raw = new Database(file);
      for (const id of items) raw.prepare('DELETE FROM chunks WHERE item_id = ?').run(id);
      if (raw.prepare("SELECT 1 FROM sqlite_master WHERE name = 'backup_chunks'").get()) raw.exec('INSERT INTO chunks SELECT * FROM backup_chunks');
      raw.prepare('DELETE FROM index_changes WHERE seq > ? OR ?').run(seq, pruned ? 1 : 0);
      raw.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'index_changes'").run(seq);
      raw.close();
    },
    close,
  };
});

describePostgres('IndexSync on PostgreSQL: restore', () =>
  droppedAfterRestore('PostgreSQL', async () => {
    const schema = schemaName();
    const writer = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    const follower = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    const admin = async (work: (client: pg.Client) => Promise<unknown>) => {
      const client = new pg.Client({ connectionString: urlWithSchema(schema) });
      await client.connect();
      try {
        await work(client);
      } finally {
        await client.end();
      }
    };
    return {
      writer,
      follower,
      backup: (items) =>
        admin(async (client) => {
          await client.query('CREATE TABLE IF NOT EXISTS backup_chunks AS SELECT * FROM chunks WHERE false');
          await client.query('INSERT INTO backup_chunks SELECT * FROM chunks WHERE item_id = ANY($1)', [items]);
        }),
      restore: async (seq, items, pruned) => {
        const admin = new pg.Client({ connectionString: urlWithSchema(schema) });
        await admin.connect();
        try {
          await admin.query('DELETE FROM chunks WHERE item_id = ANY($1)', [items]);
          if ((await admin.query("SELECT to_regclass('backup_chunks') IS NOT NULL AS there")).rows[0].there)
            await admin.query('INSERT INTO chunks OVERRIDING SYSTEM VALUE SELECT * FROM backup_chunks');
          await admin.query('DELETE FROM index_changes WHERE seq > $1 OR $2', [seq, pruned === true]);
          await admin.query("SELECT setval(pg_get_serial_sequence('index_changes', 'seq'), $1)", [seq]);
        } finally {
          await admin.end();
        }
      },
      close: async () => {
        await follower.close();
        await writer.close();
        await dropSchema(schema);
      },
    };
  }),
);

describePostgres('IndexSync on PostgreSQL: a restore under a seq the store skipped', () => {
  it('reads what was logged after the restore when the seq at its position was skipped (a rolled-back insert)', async () => {
    const schema = schemaName();
    const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    const admin = new pg.Client({ connectionString: urlWithSchema(schema) });
    const feed = new SharedFeed();
    const ids: number[] = [];
    const none = { applyStored: async () => {} };
    const documents = { applyStored: async (changed: number[]) => void ids.push(...changed) };
    const sync = new IndexSync({ store, feed, nodeId: 'me', targets: { documents, memory: none }, resyncMs: 3_600_000 });
    try {
      await sync.begin();
      sync.start();
      await admin.connect();
      const seqs: number[] = [];
      for (let i = 1; i <= 5; i++) seqs.push(await store.logIndexChange('documents', [i]));
      feed.connected();
      await until(() => ids.length === 5);
      // A backup taken after the second entry, restored: its rows and its sequence.
      await admin.query('DELETE FROM index_changes WHERE seq > $1', [seqs[1]]);
      await admin.query("SELECT setval(pg_get_serial_sequence('index_changes', 'seq'), $1)", [seqs[1]]);
      // Logged anew under the third and fourth seqs; the fifth, the node's position, taken by an insert rolled back.
      for (const id of [30, 40]) await store.logIndexChange('documents', [id]);
      await admin.query('BEGIN');
      await admin.query("INSERT INTO index_changes (target, ids) VALUES ('documents', '[50]')");
      await admin.query('ROLLBACK');
      await store.logIndexChange('documents', [60]);
      feed.connected();
      await until(() => ids.includes(60));
      await until(() => ids.includes(30) && ids.includes(40));
      expect(ids).not.toContain(50);
    } finally {
      await admin.end().catch(() => undefined);
      await sync.close();
      await store.close();
      await dropSchema(schema);
    }
  });
});
