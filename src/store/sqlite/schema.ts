/**
 * Versioned schema migrations for the SQLite driver. `PRAGMA user_version` records the
 * applied version; the pending steps run together in one transaction (connection.ts
 * `migrate`), so a process killed midway leaves the old version whole. Append steps, never edit one,
 * and raise SCHEMA_VERSION (schema-version.ts) with each.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: cards, links, comments, events, users, idempotency, full-text search
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE cards (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    type_id TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    fields TEXT NOT NULL,
    owner TEXT,
    tags TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status_since TEXT NOT NULL,
    created_by TEXT NOT NULL
  );
  CREATE INDEX cards_by_updated ON cards(updated_at DESC, id DESC);
  CREATE INDEX cards_by_status ON cards(status, updated_at DESC, id DESC);
  CREATE INDEX cards_by_type ON cards(type_id, updated_at DESC, id DESC);
  CREATE INDEX cards_by_owner ON cards(owner, updated_at DESC, id DESC);
  CREATE INDEX cards_unowned ON cards(updated_at, id) WHERE owner IS NULL;
  CREATE INDEX cards_by_created ON cards(created_at DESC, id DESC);
  CREATE TABLE links (
    card_id TEXT NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
    type_id TEXT NOT NULL,
    target TEXT NOT NULL,
    note TEXT,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (card_id, type_id, target)
  ) WITHOUT ROWID;
  CREATE INDEX links_by_target ON links(target, type_id);
  CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    card_id TEXT NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    edited_at TEXT
  );
  CREATE INDEX comments_by_card ON comments(card_id, created_at, id);
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    actor TEXT NOT NULL,
    at TEXT NOT NULL,
    card_id TEXT,
    scope TEXT NOT NULL,
    board_id TEXT,
    diff TEXT NOT NULL
  );
  CREATE INDEX events_by_card ON events(card_id, seq);
  CREATE INDEX events_by_type ON events(type, seq);
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    display_name TEXT,
    created_at TEXT NOT NULL
  );
  CREATE TABLE idempotency (
    key TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX idempotency_by_created ON idempotency(created_at);
  CREATE VIRTUAL TABLE cards_fts USING fts5(
    title, body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
  );
  `,
  // 2: condition signals (ephemeral, shared across processes, pruned) and once-only keys
  `
  CREATE TABLE signals (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    actor TEXT NOT NULL,
    at TEXT NOT NULL,
    card_id TEXT,
    scope TEXT NOT NULL,
    board_id TEXT,
    diff TEXT NOT NULL
  );
  CREATE INDEX signals_by_at ON signals(at);
  CREATE TABLE once_keys (key TEXT PRIMARY KEY, at TEXT NOT NULL);
  `,
  // 3: fewer indexes on the write path (each costs a WAL page per commit): sort by
  // created_at scans (custom sorts return one page), owner lists use a partial index
  `
  DROP INDEX cards_by_created;
  DROP INDEX cards_by_owner;
  CREATE INDEX cards_by_owner ON cards(owner, updated_at DESC, id DESC) WHERE owner IS NOT NULL;
  `,
  // 4: the event log keeps one secondary index (per card); type filters page through by id
  `
  DROP INDEX events_by_type;
  `,
  // 5: the list indexes ascending. A new card has the newest updated_at: in a descending
  // index it lands on the leftmost leaf, which SQLite splits by rebalancing siblings; in
  // an ascending one it appends on the rightmost leaf. Measured at ~19 creates per group
  // commit: 16.5 -> 12.1 WAL pages of these three indexes per commit. Lists read them
  // backwards, with the same plans.
  `
  DROP INDEX cards_by_updated;
  DROP INDEX cards_by_status;
  DROP INDEX cards_by_type;
  DROP INDEX cards_by_owner;
  CREATE INDEX cards_by_updated ON cards(updated_at, id);
  CREATE INDEX cards_by_status ON cards(status, updated_at, id);
  CREATE INDEX cards_by_type ON cards(type_id, updated_at, id);
  CREATE INDEX cards_by_owner ON cards(owner, updated_at, id) WHERE owner IS NOT NULL;
  `,
  // 6: full-text search moved to its own file, following the event log (search-index.ts).
  // The old table stays, emptied: an older binary still running against this file writes
  // to it before each commit, and would fail every write without it.
  `
  INSERT INTO cards_fts (cards_fts) VALUES ('delete-all');
  DELETE FROM meta WHERE key = 'search_config';
  `,
  // 7: take-next's candidate query answered from the unowned index alone (type scope,
  // status, id; owner for the planner), without reading each candidate's row page
  `
  DROP INDEX cards_unowned;
  CREATE INDEX cards_unowned ON cards(updated_at, id, type_id, status, owner) WHERE owner IS NULL;
  `,
  // 8: a signal records the newest event id when it was written, so a process reading
  // the log publishes signals and events in commit order (events/feed.ts). An older
  // binary leaves it NULL: such a signal goes out ahead of the events read with it.
  `
  ALTER TABLE signals ADD COLUMN after_seq INTEGER;
  `,
  // 9: pruning once-keys (one per hook run and timed condition) reads by age, not the whole table
  `
  CREATE INDEX once_keys_by_at ON once_keys(at);
  `,
  // 10: a board's lane counts (GET /boards/{id}/counts) from an index alone: the type
  // scope and GROUP BY status over 100,000 cards read every row (160 ms) without it, 8 ms
  // with it. Claims do not touch it (owner and updated_at are not in it).
  `
  CREATE INDEX cards_by_status_type ON cards(status, type_id);
  `,
  // 11: a board's event feed keeps its deleted cards' events, whose type only their
  // card_deleted tombstone still holds: this index lists the tombstones alone (without
  // it, every GET /events?board_id= page read the whole log: ~100 ms at 500,000 events).
  // Only card_deleted rows enter it, so other writes do not touch it.
  `
  CREATE INDEX events_deleted ON events(card_id) WHERE type = 'card_deleted';
  `,
  // 12: take-next scoped to one card type walks that type's unowned cards only. Through
  // cards_by_type it walked every owned card of the type older than the oldest unowned one
  // (a workspace's history: 12 ms behind 38,000 owned tasks, against 1 ms by board scope).
  // Only unowned cards enter it, so a claim removes an entry rather than adding one.
  `
  CREATE INDEX cards_unowned_by_type ON cards(type_id, updated_at, id, status, owner) WHERE owner IS NULL;
  `,
];
