/**
 * Full-text search lives in `.cards/search.db` and follows the event log
 * (src/store/sqlite/search-index.ts): writes never touch it, a search first catches it up
 * to the newest event, a server's indexer thread keeps it current, and it is rebuilt
 * whenever it cannot be trusted to follow the database in place.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { appendEntry, createCard, deleteCard, dumpWorkspace, listCards, patchCard, restoreWorkspace, type Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { SearchIndexer } from "../../src/store/sqlite/search-indexer.ts";
import { CardsError } from "../../src/domain/errors.ts";

const ada = { actor: "ada" } as never;
const dbFile = (dir: string) => join(dir, ".cards", "cards.db");
const indexFile = (dir: string) => join(dir, ".cards", "search.db");
const search = async (svc: Service, q: string): Promise<string[]> => (await listCards(svc, { q }, "ada")).items.map((c) => c.id);

/** Documents in the index file for `term`, read straight from the file. */
function indexed(dir: string, term: string): string[] {
  const db = new Database(indexFile(dir), { readonly: true });
  try {
    return (db.query("SELECT d.card_id FROM cards_fts f JOIN docs d ON d.seq = f.rowid WHERE cards_fts MATCH ?").all(term) as Array<{ card_id: string }>).map((r) => r.card_id);
  } finally {
    db.close();
  }
}

async function withService(mode: "serve" | "embedded", fn: (svc: Service, dir: string) => Promise<void>, dir = makeWorkspace()): Promise<void> {
  const svc = await openTestService(dir, mode);
  try {
    await fn(svc, dir);
  } finally {
    svc.close();
  }
}

describe("the search index follows the event log", () => {
  test("writes never touch the index: a one-shot process that only writes creates no index file", () => withService("embedded", async (svc, dir) => {
    const c = await createCard(svc, { type_id: "task", title: "quiet walrusian" }, ada);
    await patchCard(svc, c.id, { version: 1, title: "louder walrusian" }, ada);
    expect(existsSync(indexFile(dir))).toBe(false);
    // the first search builds it, from the log
    expect(await search(svc, "walrusian")).toEqual([c.id]);
    expect(await search(svc, "louder")).toEqual([c.id]);
    expect(await search(svc, "quiet")).toEqual([]);
    expect(existsSync(indexFile(dir))).toBe(true);
  }));

  test("writes sharing one group commit are all found; a dry run rolled back in the same commit leaves no trace", () => withService("serve", async (svc, dir) => {
    const [, bravo, charlie] = await Promise.all([
      createCard(svc, { type_id: "task", title: "alpha zebrafoo", dry_run: true }, ada),
      createCard(svc, { type_id: "task", title: "bravo quuxbar" }, ada),
      createCard(svc, { type_id: "task", title: "charlie quuxbar" }, ada),
    ]);
    expect((await search(svc, "quuxbar")).sort()).toEqual([bravo.id, charlie.id].sort());
    expect(await search(svc, "zebrafoo")).toEqual([]);
    expect(indexed(dir, "zebrafoo")).toEqual([]);
  }));

  test("a seq SQLite reuses after a delete never answers for the deleted card, even from an index that is behind", () => withService("embedded", async (svc, dir) => {
    await createCard(svc, { type_id: "task", title: "first card" }, ada);
    const last = await createCard(svc, { type_id: "task", title: "vanishing okapish" }, ada);
    expect(await search(svc, "okapish")).toEqual([last.id]); // indexed under its seq
    const seqOf = (id: string): number => {
      const db = new Database(dbFile(dir), { readonly: true });
      try { return (db.query("SELECT seq FROM cards WHERE id = ?").get(id) as { seq: number }).seq; } finally { db.close(); }
    };
    const lastSeq = seqOf(last.id);
    await deleteCard(svc, last.id, undefined, ada);
    const next = await createCard(svc, { type_id: "task", title: "newcomer gibbonish" }, ada);
    expect(seqOf(next.id)).toBe(lastSeq); // SQLite reused the largest rowid

    // an index that missed both events but believes it is current still holds the
    // deleted card's words under that seq: they must not find the new card
    const idx = new Database(indexFile(dir));
    const main = new Database(dbFile(dir), { readonly: true });
    const head = main.query("SELECT seq, at, type, card_id FROM events ORDER BY seq DESC LIMIT 1").get() as { seq: number; at: string; type: string; card_id: string };
    main.close();
    idx.query("UPDATE state SET value = ? WHERE key = 'mark'").run(`${head.seq}|${head.at}|${head.type}|${head.card_id}`);
    idx.query("UPDATE state SET value = ? WHERE key = 'applied'").run(String(head.seq));
    idx.close();
    expect(indexed(dir, "okapish")).toEqual([last.id]);
    expect(await search(svc, "okapish")).toEqual([]);
  }));

  test("deleting and re-creating at a reused seq, caught up in order, moves the document", () => withService("embedded", async (svc) => {
    const last = await createCard(svc, { type_id: "task", title: "vanishing dingoish" }, ada);
    expect(await search(svc, "dingoish")).toEqual([last.id]);
    await deleteCard(svc, last.id, undefined, ada);
    const next = await createCard(svc, { type_id: "task", title: "newcomer wombatish" }, ada);
    expect(await search(svc, "dingoish")).toEqual([]);
    expect(await search(svc, "wombatish")).toEqual([next.id]);
  }));

  test("a write after a search does not take the search index's lock (one connection: the index is detached first)", () => withService("embedded", async (svc, dir) => {
    const a = await createCard(svc, { type_id: "task", title: "before search" }, ada);
    expect(await search(svc, "before")).toEqual([a.id]);
    const other = new Database(indexFile(dir));
    other.exec("BEGIN IMMEDIATE"); // another process holds the index's write lock
    try {
      const started = Date.now();
      const b = await createCard(svc, { type_id: "task", title: "after search" }, ada);
      expect(b.title).toBe("after search");
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(await search(svc, "after")).toHaveLength(1);
  }));

  test("a server finds what another process wrote a moment ago, and its indexer thread keeps the index current with no search", async () => {
    const dir = makeWorkspace();
    const server = await openTestService(dir, "serve");
    try {
      const other = await openTestService(dir, "embedded");
      const fromOther = await createCard(other, { type_id: "task", title: "elsewhere capybarish" }, ada);
      other.close();
      expect(await search(server, "capybarish")).toEqual([fromOther.id]);

      const own = await createCard(server, { type_id: "task", title: "background tapirish" }, ada);
      const deadline = Date.now() + 3000;
      while (indexed(dir, "tapirish").length === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(indexed(dir, "tapirish")).toEqual([own.id]);
    } finally {
      server.close();
    }
  });

  test("after the indexer idled, a search right after a write finds it, and a write is still indexed unasked", async () => {
    const dir = makeWorkspace();
    const server = await openTestService(dir, "serve");
    try {
      await Bun.sleep(1500); // idle: the tick has stretched to its longest
      const own = await createCard(server, { type_id: "task", title: "sleepy okapish" }, ada);
      expect(await search(server, "okapish")).toEqual([own.id]); // the search wakes it
      const later = await createCard(server, { type_id: "task", title: "unasked quaggaish" }, ada);
      const start = Date.now();
      while (indexed(dir, "quaggaish").length === 0 && Date.now() - start < 3000) await Bun.sleep(10);
      expect(indexed(dir, "quaggaish")).toEqual([later.id]);
    } finally {
      server.close();
    }
  });

  test("an idle indexer thread stretches its tick: a few passes a second, not one every 25 ms", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    await createCard(svc, { type_id: "task", title: "one" }, ada);
    svc.close();
    const indexer = new SearchIndexer(dbFile(dir), join(dir, ".cards", "search.db"), [], 25);
    try {
      await Bun.sleep(1500); // idle since the first pass: the tick has stretched to its longest
      const before = indexer.passes();
      await Bun.sleep(1000);
      // 400 ms at most between idle passes: 2-3 in a second (before: ~40)
      expect(indexer.passes() - before).toBeLessThanOrEqual(5);
      expect(indexer.passes()).toBeGreaterThan(0);
    } finally {
      indexer.stop();
    }
  });

  test("another database put in place (a backup copied back) is never answered from the old index", () => withService("embedded", async (svc, dir) => {
    const kept = await createCard(svc, { type_id: "task", title: "kept lemurish" }, ada);
    expect(await search(svc, "lemurish")).toEqual([kept.id]);
    svc.close();
    const backup = join(dir, "backup.db");
    copyFileSync(dbFile(dir), backup);
    let again = await openTestService(dir, "embedded");
    const later = await createCard(again, { type_id: "task", title: "later marmotish" }, ada);
    expect(await search(again, "marmotish")).toEqual([later.id]);
    again.close();
    // the backup goes back in place: same event count or fewer, other events at the top
    for (const s of ["", "-wal", "-shm"]) rmSync(dbFile(dir) + s, { force: true });
    copyFileSync(backup, dbFile(dir));
    again = await openTestService(dir, "embedded");
    try {
      const other = await createCard(again, { type_id: "task", title: "other newtish" }, ada); // the same seq `later` had
      expect(await search(again, "marmotish")).toEqual([]);
      expect(await search(again, "newtish")).toEqual([other.id]);
      expect(await search(again, "lemurish")).toEqual([kept.id]);
    } finally {
      again.close();
    }
  }));

  test("damage in the workspace database met while indexing is reported as the database's, not the index's", async () => {
    const dir = makeWorkspace();
    await withService("embedded", async (svc) => {
      for (let i = 0; i < 40; i++) await createCard(svc, { type_id: "task", title: `page filler ${i} ${"lorem ".repeat(150)}` }, ada);
    }, dir);
    const db = new Database(dbFile(dir));
    const root = Number((db.query("SELECT rootpage FROM sqlite_master WHERE name = 'cards'").get() as { rootpage: number }).rootpage);
    db.close();
    const fd = openSync(dbFile(dir), "r+");
    writeSync(fd, Buffer.alloc(4096, 0xde), 0, 4096, (root - 1) * 4096); // the cards table's root page
    closeSync(fd);
    await withService("embedded", async (svc) => {
      const err = await search(svc, "filler").then(() => null, (e) => e);
      expect(err?.code).toBe("unavailable");
      expect(err?.message).toContain("the workspace database is damaged");
      expect(err?.message).not.toContain("full-text index"); // before: "delete search.db", which changed nothing
    }, dir);
  });

  test("an index file that is not a database is made anew", async () => {
    const dir = makeWorkspace();
    await withService("embedded", async (svc) => {
      await createCard(svc, { type_id: "task", title: "survivor ocelotish" }, ada);
      expect(await search(svc, "ocelotish")).toHaveLength(1);
    }, dir);
    for (const s of ["-wal", "-shm"]) rmSync(indexFile(dir) + s, { force: true });
    await Bun.write(indexFile(dir), "this is not a database, just some text long enough to have a header ".repeat(100));
    await withService("embedded", async (svc) => {
      expect(await search(svc, "ocelotish")).toHaveLength(1);
    }, dir);
  });

  test("a restored dump is searchable: the cards are indexed anew, not from their log", async () => {
    const lines: string[] = [];
    await withService("embedded", async (svc) => {
      const c = await createCard(svc, { type_id: "task", title: "dumped quokkaish" }, ada);
      await patchCard(svc, c.id, { version: 1, title: "renamed quokkaish" }, ada);
      dumpWorkspace(svc, (l) => lines.push(l));
    });
    // take the title out of the card's events: only the card row carries it now
    const stripped = lines.map((l) => (l.includes('"record":"event"') ? l.replaceAll("quokkaish", "elsewhere").replaceAll("renamed", "other") : l));
    expect(stripped.join("\n").match(/quokkaish/g)).toHaveLength(1);
    await withService("embedded", async (svc) => {
      expect(await search(svc, "quokkaish")).toEqual([]); // an index built before the restore
      await restoreWorkspace(svc, (async function* () { yield* stripped; })());
      expect(await search(svc, "renamed")).toHaveLength(1);
    });
  });

  test("a restore into a workspace searched while empty rebuilds the index whole, even for a card whose events never touch its text", async () => {
    const lines: string[] = [];
    await withService("embedded", async (svc) => {
      await createCard(svc, { type_id: "task", title: "moved okapiesque" }, ada);
      dumpWorkspace(svc, (l) => lines.push(l));
    });
    // a hand-made dump (docs/migrating.md): the card's one event is a status change, which
    // never changes what a card says, so following the log alone would skip the card
    const edited = lines.map((l) => (l.includes('"record":"event"') ? l.replace(/"type":"card_created"/, '"type":"status_changed"') : l));
    expect(edited.join("\n")).toContain('"type":"status_changed"');
    await withService("embedded", async (svc) => {
      expect(await search(svc, "okapiesque")).toEqual([]); // the index now follows the empty log
      await restoreWorkspace(svc, (async function* () { yield* edited; })());
      expect(await search(svc, "okapiesque")).toHaveLength(1);
    });
  });
  test("the index's WAL is left empty on close, so the next one-shot search neither recovers nor copies it again", async () => {
    const dir = makeWorkspace();
    const wal = indexFile(dir) + "-wal";
    await withService("embedded", async (svc) => {
      for (let i = 0; i < 300; i++) await createCard(svc, { type_id: "task", title: `walrusian ${i} ${"lorem ipsum dolor ".repeat(20)}` }, ada);
    }, dir);
    // a server builds the index (its thread's connection and the attached one both write it)
    await withService("serve", async (svc) => {
      expect((await search(svc, "walrusian")).length).toBe(50);
    }, dir);
    expect(statSync(wal).size).toBe(0);
    // one-shot searches: each is the last connection to close the index it attached
    for (let i = 0; i < 2; i++) {
      await withService("embedded", async (svc) => {
        await createCard(svc, { type_id: "task", title: `walrusian late ${i}` }, ada);
        expect((await search(svc, "late")).length).toBe(i + 1);
      }, dir);
      expect(statSync(wal).size).toBe(0);
    }
  });
});

describe("what a search matches", () => {
  test("the last word of a query is a prefix, the words before it whole words", () => withService("embedded", async (svc) => {
    const c = await createCard(svc, { type_id: "task", title: "ship the release today" }, ada);
    expect(await search(svc, "release tod")).toEqual([c.id]);
    expect(await search(svc, "rel today")).toEqual([]);
  }));

  test("emoji and other symbols are words: q=🚀 finds the card that says 🚀, and words beside them still match", () => withService("embedded", async (svc) => {
    const rocket = await createCard(svc, { type_id: "task", title: "ship it 🚀 today" }, ada);
    const check = await createCard(svc, { type_id: "task", title: "tests ✅ green", fields: { description: "deployed 👍🏽 by ada" } }, ada);
    await createCard(svc, { type_id: "task", title: "plain words only" }, ada);
    expect(await search(svc, "🚀")).toEqual([rocket.id]);
    expect(await search(svc, "✅")).toEqual([check.id]);
    expect(await search(svc, "👍")).toEqual([check.id]); // the skin tone is a modifier, not part of the word
    expect(await search(svc, "ship today")).toEqual([rocket.id]);
    expect(await search(svc, "green ✅")).toEqual([check.id]);
  }));

  test("an index built under the previous tokenizer is rebuilt, so symbols become searchable in old cards too", async () => {
    const dir = makeWorkspace();
    let id = "";
    await withService("embedded", async (svc) => {
      id = (await createCard(svc, { type_id: "task", title: "legacy 🚀 card" }, ada)).id;
      expect(await search(svc, "legacy")).toEqual([id]);
    }, dir);
    // the file as an older build left it: schema version 1, whose tokenizer dropped symbols
    const db = new Database(indexFile(dir));
    db.exec("DROP TABLE cards_fts");
    db.exec("CREATE VIRTUAL TABLE cards_fts USING fts5(title, body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')");
    db.exec("PRAGMA user_version = 1");
    db.close();
    await withService("embedded", async (svc) => {
      expect(await search(svc, "🚀")).toEqual([id]);
    }, dir);
  });
});

/**
 * Makes a card with this title, then leaves its index entry as an older build did: the
 * title indexed as `indexedAs` (untouched text), under search schema `version`.
 */
async function indexedByOlderBuild(title: string, indexedAs: string, version: number): Promise<{ dir: string; id: string }> {
  const dir = makeWorkspace();
  let id = "";
  await withService("embedded", async (svc) => {
    id = (await createCard(svc, { type_id: "task", title }, ada)).id;
    await search(svc, "anything"); // the index caught up, the card in it
  }, dir);
  const main = new Database(dbFile(dir), { readonly: true });
  const seq = (main.query("SELECT seq FROM cards WHERE id = ?").get(id) as { seq: number }).seq;
  main.close();
  const db = new Database(indexFile(dir));
  db.query("DELETE FROM cards_fts WHERE rowid = ?").run(seq);
  db.query("INSERT INTO cards_fts (rowid, title, body) VALUES (?, ?, '')").run(seq, indexedAs);
  db.exec(`PRAGMA user_version = ${version}`);
  db.close();
  return { dir, id };
}

describe("decomposed text (NFD)", () => {
  const nfd = (s: string) => s.normalize("NFD");

  test("a decomposed query finds a composed title and the other way round, Hangul too (before: nothing found)", () => withService("embedded", async (svc) => {
    const resume = await createCard(svc, { type_id: "task", title: "naïve résumé" }, ada);
    const cafe = await createCard(svc, { type_id: "task", title: nfd("café crème décomposé"), fields: { description: nfd("über alles") } }, ada);
    const hangulNfc = await createCard(svc, { type_id: "task", title: "한글 테스트" }, ada);
    const hangulNfd = await createCard(svc, { type_id: "task", title: nfd("한국어 검색") }, ada);
    expect(nfd("résumé")).not.toBe("résumé");
    expect(await search(svc, nfd("résumé"))).toEqual([resume.id]);
    expect(await search(svc, nfd("naïve résumé"))).toEqual([resume.id]);
    expect(await search(svc, "café crème")).toEqual([cafe.id]);
    expect(await search(svc, nfd("café crème"))).toEqual([cafe.id]);
    expect(await search(svc, "über")).toEqual([cafe.id]);
    expect(await search(svc, nfd("한글"))).toEqual([hangulNfc.id]);
    expect(await search(svc, "한국어")).toEqual([hangulNfd.id]);
    expect(await search(svc, "검색")).toEqual([hangulNfd.id]);
    expect(await search(svc, "\u0301")).toEqual([]); // a lone mark is no word, and no error
  }));

  test("an index built before text was composed is rebuilt, so old decomposed titles are found", async () => {
    // the file as schema 2 left it: the title indexed as stored
    const { dir, id } = await indexedByOlderBuild(nfd("한국어 검색"), nfd("한국어 검색"), 2);
    await withService("embedded", async (svc) => {
      expect(await search(svc, "한국어")).toEqual([id]);
    }, dir);
  });
});

describe("scripts written without spaces, and vowel signs", () => {
  test("a word inside a run of Chinese, Japanese or Thai is found, as those characters in a row (before: only a run's start)", () => withService("embedded", async (svc) => {
    const ja = await createCard(svc, { type_id: "task", title: "ユーザーがログインできない問題" }, ada);
    const zh = await createCard(svc, { type_id: "task", title: "中文搜索测试没有空格" }, ada);
    const th = await createCard(svc, { type_id: "task", title: "ภาษาไทย ทดสอบ" }, ada);
    const apart = await createCard(svc, { type_id: "task", title: "ログとイン" }, ada);
    expect(await search(svc, "ログイン")).toEqual([ja.id]); // not "ログとイン": the characters must be in a row
    expect((await search(svc, "ログ")).sort()).toEqual([ja.id, apart.id].sort());
    expect(await search(svc, "搜索")).toEqual([zh.id]);
    expect(await search(svc, "没有")).toEqual([zh.id]);
    expect(await search(svc, "ไทย")).toEqual([th.id]);
    expect(await search(svc, "中文 测试")).toEqual([zh.id]);
    expect(await search(svc, "搜测")).toEqual([]);
  }));

  test("a word inside a run of Katakana, Hiragana or Lao, or of Chinese in a searchable field, is found; a query starting with a vowel sign finds nothing (the sign is its letter's)", () => withService("embedded", async (svc) => {
    const kana = await createCard(svc, { type_id: "task", title: "パスワードリセット" }, ada);
    const hira = await createCard(svc, { type_id: "task", title: "ひらがなのテスト" }, ada);
    const lao = await createCard(svc, { type_id: "task", title: "ພາສາລາວ" }, ada);
    const th = await createCard(svc, { type_id: "task", title: "ผู้ใช้" }, ada);
    const body = await createCard(svc, { type_id: "task", title: "plain", fields: { description: "中文搜索测试没有空格" } }, ada);
    expect(await search(svc, "リセット")).toEqual([kana.id]);
    expect(await search(svc, "がな")).toEqual([hira.id]);
    expect(await search(svc, "ລາວ")).toEqual([lao.id]);
    expect(await search(svc, "ใช้")).toEqual([th.id]);
    expect(await search(svc, "\u0e39\u0e49ใช้")).toEqual([]); // "ู้ใช้": the signs of ผู้ without it
    expect(await search(svc, "搜索")).toEqual([body.id]);
  }));

  test("an index built before marks joined their words and runs were split (schema 3) is rebuilt", async () => {
    // the file as schema 3 left it: the run indexed as one word
    const { dir, id } = await indexedByOlderBuild("中文搜索测试", "中文搜索测试", 3);
    await withService("embedded", async (svc) => {
      expect(await search(svc, "搜索")).toEqual([id]);
    }, dir);
  });

  test("a vowel sign is part of its word: \"हो\" does not find \"हिन्दी\" (before: the signs split it, and the first letter matched)", () => withService("embedded", async (svc) => {
    const hi = await createCard(svc, { type_id: "task", title: "हिन्दी भाषा" }, ada);
    expect(await search(svc, "हो")).toEqual([]);
    expect(await search(svc, "हिन्दी")).toEqual([hi.id]);
    expect(await search(svc, "हिन")).toEqual([hi.id]); // a prefix of the word
  }));
});

describe("marks that do not change the word", () => {
  test("an emoji with or without its variation selector or keycap is one word (before 5: \"❤\" missed \"I ❤️ it\")", () => withService("embedded", async (svc) => {
    const heart = await createCard(svc, { type_id: "task", title: "I \u2764\uFE0F it" }, ada);
    const plain = await createCard(svc, { type_id: "task", title: "plain \u263A smile" }, ada);
    const keycap = await createCard(svc, { type_id: "task", title: "1\uFE0F\u20E3 one" }, ada);
    expect(await search(svc, "\u2764 it")).toEqual([heart.id]);
    expect(await search(svc, "\u263A\uFE0F smile")).toEqual([plain.id]);
    expect(await search(svc, "1 one")).toEqual([keycap.id]);
  }));

  test("Arabic and Hebrew vowel points and Greek accents are ignored, in the text and in the query", () => withService("embedded", async (svc) => {
    const ar = await createCard(svc, { type_id: "task", title: "\u0643\u064E\u062A\u064E\u0628\u064E" }, ada); // كَتَبَ
    const he = await createCard(svc, { type_id: "task", title: "\u05E9\u05B8\u05C1\u05DC\u05D5\u05B9\u05DD" }, ada); // שָׁלוֹם
    const el = await createCard(svc, { type_id: "task", title: "\u039F\u03B4\u03CC\u03C2 \u03AC\u03BB\u03C6\u03B1" }, ada); // Οδός άλφα
    expect(await search(svc, "\u0643\u062A\u0628")).toEqual([ar.id]);
    expect(await search(svc, "\u05E9\u05DC\u05D5\u05DD")).toEqual([he.id]);
    expect(await search(svc, "\u03BF\u03B4\u03BF\u03C2")).toEqual([el.id]); // οδος
    expect(await search(svc, "\u039F\u0394\u039F\u03A3")).toEqual([el.id]); // ΟΔΟΣ
    expect(await search(svc, "\u03B1\u03BB\u03C6\u03B1")).toEqual([el.id]); // αλφα
    const ru = await createCard(svc, { type_id: "task", title: "\u0401\u043B\u043A\u0430 \u0438 \u0451\u0436" }, ada); // Ёлка и ёж
    expect(await search(svc, "\u0435\u043B\u043A\u0430")).toEqual([ru.id]); // елка
    expect(await search(svc, "\u0451\u0436")).toEqual([ru.id]); // ёж, as written
  }));

  test("a word of marks or underscores alone is no word: it finds nothing, not every card", () => withService("embedded", async (svc) => {
    await createCard(svc, { type_id: "task", title: "anything" }, ada);
    expect(await search(svc, "_\u0301")).toEqual([]);
    expect(await search(svc, "\uFE0F")).toEqual([]);
  }));

  test("each character of a run of Chinese counts toward q's 32 words: a longer run is refused, not searched for seconds", () => withService("embedded", async (svc) => {
    expect(await search(svc, "\u4E2D".repeat(32))).toEqual([]);
    const e = await Promise.resolve().then(() => listCards(svc, { q: "\u4E2D".repeat(33) }, "ada")).then(() => undefined, (err) => err);
    expect(e?.code).toBe("bad_request");
    expect(e?.message).toContain("a character of Chinese, Japanese or Thai is one");
  }));
});

describe("edits after the index caught up", () => {
  test("a field or title edit and an appended entry are found by their new words, not their old ones", () => withService("embedded", async (svc) => {
    const c = await createCard(svc, { type_id: "task", title: "plain start", fields: { branch: "alpha" } }, ada);
    expect(await search(svc, "alpha")).toEqual([c.id]); // the index is current
    const edited = await patchCard(svc, c.id, { version: c.version, title: "quokka title", fields: { branch: "zulu" } }, ada);
    expect(await search(svc, "zulu")).toEqual([c.id]);
    expect(await search(svc, "quokka")).toEqual([c.id]);
    expect(await search(svc, "alpha")).toEqual([]);
    await appendEntry(svc, c.id, "evidence", { version: edited.version, entry: { note: "wombat sighting" } }, ada);
    expect(await search(svc, "wombat")).toEqual([c.id]);
  }));
});

describe("what a type without searchable_fields indexes", () => {
  const withLog = () => makeWorkspace((f) => {
    (f["definitions/workspace.json"] as { settings: { strict_fields: boolean } }).settings.strict_fields = false; // a boolean is stored only as an undeclared key
    f["definitions/card-types/log.json"] = {
      id: "log", name: "Log",
      fields: [
        { id: "count", type: "number" },
        { id: "lines", type: "repeating", item_fields: [{ id: "text", type: "string" }] },
      ],
    };
  });

  test("number and boolean values (a boolean in an undeclared key) are words of the card; entry ids are not", () => withService("embedded", async (svc) => {
    const c = await createCard(svc, { type_id: "log", title: "a log card", fields: { count: 4242421, flag: true } }, ada);
    const other = await createCard(svc, { type_id: "log", title: "another log card", fields: { flag: false } }, ada);
    const { entry_id: entryId } = await appendEntry(svc, c.id, "lines", { version: c.version, entry: { text: "walrusine line" } }, ada);
    expect(await search(svc, "4242421")).toEqual([c.id]);
    expect(await search(svc, "true")).toEqual([c.id]);
    expect(await search(svc, "false")).toEqual([other.id]);
    expect(await search(svc, "walrusine")).toEqual([c.id]);
    expect(entryId.length).toBeGreaterThan(4);
    expect(await search(svc, entryId)).toEqual([]);
  }, withLog()));
});

test("a search waiting for the indexer thread gives up 10 s on by the monotonic clock, however the wall clock reads", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "embedded");
  await createCard(svc, { type_id: "task", title: "one" }, ada);
  svc.close();
  const indexer = new SearchIndexer(dbFile(dir), indexFile(dir), [], 25);
  const real = performance.now;
  let calls = 0;
  // every reading after the first is 11 s on; an event the index can never cover
  performance.now = () => real.call(performance) + (calls++ > 0 ? 11_000 : 0);
  try {
    const outcome = await Promise.race([indexer.waitFor(1_000_000).then(() => "covered", (e: Error) => e.message), Bun.sleep(3000).then(() => "still waiting after 3 s")]);
    expect(outcome).toBe("the full-text index is still catching up with the newest writes");
  } finally {
    performance.now = real;
    indexer.stop();
  }
});

/** A new search index file that another process holds locked (BEGIN EXCLUSIVE) for `ms`, once it says so. */
async function lockedIndexFile(ms: number): Promise<{ path: string; holder: ReturnType<typeof Bun.spawn> }> {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const path = join(mkdtempSync(join(tmpdir(), "cards-search-")), "search.db");
  const holder = Bun.spawn([process.execPath, "-e", `
    const { Database } = require("bun:sqlite");
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN EXCLUSIVE; CREATE TABLE t (x)");
    console.log("locked");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});
  `], { stdout: "pipe" });
  const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain("locked");
  return { path, holder };
}

test("opening the index waits out another process's lock on the monotonic clock: a wall clock stepped forward meanwhile does not give up at once", async () => {
  const { openSearchDb } = await import("../../src/store/sqlite/search-index.ts");
  const { path, holder } = await lockedIndexFile(400);
  const realNow = Date.now;
  let calls = 0;
  // every reading after the first is 10 s on: a step forward while it waits
  Date.now = () => realNow() + (calls++ > 0 ? 10_000 : 0);
  try {
    const db = openSearchDb(path, 0);
    db.close();
  } finally {
    Date.now = realNow;
    await holder.exited;
  }
});

test("opening the index gives up once another process has held it locked past the deadline (5 s on the monotonic clock): it does not wait on for the lock", async () => {
  const { openSearchDb } = await import("../../src/store/sqlite/search-index.ts");
  const { path, holder } = await lockedIndexFile(8000);
  try {
    const started = performance.now();
    let error: unknown;
    try {
      openSearchDb(path, 0).close();
    } catch (e) {
      error = e;
    }
    const waited = performance.now() - started;
    expect(String((error as { code?: string } | undefined)?.code)).toStartWith("SQLITE_BUSY");
    expect(waited).toBeGreaterThan(4500);
    expect(waited).toBeLessThan(7500);
  } finally {
    holder.kill();
    await holder.exited;
  }
}, 20_000);

/**
 * A seeded property test of what search promises (docs/filters.md "Search (q)"): cards
 * whose titles are random words of many scripts, written composed or decomposed, in either
 * case, with or without the marks the docs say are ignored; then, for each card, queries
 * built from its title must find it, and no query finds a card that lacks its words.
 *
 * "Lacks its words" is judged loosely, independent of src: both texts are compatibility-
 * decomposed, stripped of every mark and lower-cased (meant to be coarser than the index's
 * own folding), and each word of the query must then stand somewhere in the title. A card
 * the index answers without that is a wrong answer whatever the folding rules are. Every
 * search is checked against every card this way.
 *
 * Left out by design (docs/filters.md): ß against ss, width, and case mappings that are
 * another spelling (see `upper`).
 */
describe("search, property-based (seeded): titles of many scripts", () => {
  const SEED = 0x5EA2C4;
  /** mulberry32: a small deterministic PRNG (the same cases on every run). */
  function prng(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  type Rand = () => number;
  const int = (r: Rand, n: number): number => Math.floor(r() * n);
  const pick = <T,>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;
  const chars = (s: string): string[] => [...s];
  const graphemes = (s: string): string[] => [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s)].map((g) => g.segment);
  const times = (r: Rand, lo: number, hi: number, f: () => string): string => Array.from({ length: lo + int(r, hi - lo + 1) }, f).join("");

  /**
   * One word of a title. `run`: the part written without spaces (Chinese, Japanese, Thai)
   * whose every stretch of characters is a query of its own; `cased`: a script with case;
   * `bare`: the word without the marks the docs say are ignored (accents, Greek tonos,
   * Arabic and Hebrew points, variation selectors), when it has any.
   */
  interface Word { text: string; kind: string; run?: string; cased?: boolean; bare?: string }

  const LATIN_C = chars("bcdfghjklmnprstvwz");
  const LATIN_V = chars("aeiouyéèêëáàâäåãíìîïóòôöõúùûüýÿ");
  // marks with no composed form beside their letter too ("x\u0301\u0301", Yoruba "ẹ́"), and
  // marks whose Script_Extensions name Thai or Katakana ("g̃" of Guaraní, "x̱"): before
  // search schema 6 those were set apart as a character of an unspaced script, and
  // `g̃uahẽ` missed "g̃uahẽ"
  const LATIN_EXTRA = [...chars("çñßøæœłıİđħǘṩệǖ"), "e\u0323\u0302", "e\u0302\u0323", "a\u1DC4", "x\u0301\u0301", "\u1EB9\u0301", "o\u0328\u0301", "g\u0303", "x\u0331", "a\u0305", "b\u0323"];
  const GREEK = chars("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰἀἁὰῆῶᾳῥὀἔϐϑϕ");
  const CYRILLIC = chars("абвгдеёжзийклмнопрстуфхцчшщъыьэюя");
  const ARABIC = chars("كتبسلمعرفدنهويقحج");
  const HARAKAT = chars("\u064E\u064F\u0650\u0651\u0652\u064B");
  const HEBREW = chars("שלומבתדרכאיעפצקגזחטנס");
  const NIQQUD = chars("\u05B0\u05B4\u05B5\u05B6\u05B7\u05B8\u05B9\u05BB\u05BC");
  const DEVA_C = chars("कखगघचजटडतदनपबमयरलवशसह\u0958\u095B");
  const DEVA_SIGNS = ["", "", "\u093E", "\u093F", "\u0940", "\u0941", "\u0942", "\u0947", "\u0948", "\u094B", "\u094C", "\u0902", "\u094D"];
  const THAI_C = chars("กขคงจฉชซญดตถทธนบปผพฟภมยรลวสหอ");
  const THAI_PRE = ["", "", "", "เ", "แ", "โ", "ใ", "ไ"];
  const THAI_ABOVE = ["", "", "\u0E31", "\u0E34", "\u0E35", "\u0E36", "\u0E37", "\u0E38", "\u0E39"];
  const THAI_TONE = ["", "", "\u0E48", "\u0E49", "\u0E4A", "\u0E4B"];
  const THAI_AFTER = ["", "", "า", "ำ", "ย"];
  const HANZI = chars("中文搜索测试没有空格问题用户登录数据库服务器日本語東京大学电脑网络系统开发时间新旧");
  const KANA = chars("アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロワンガギグゲゴパピプペポあいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほがぎぐげござじずぜぞ");
  const EMOJI = ["🚀", "✅", "🎉", "🔥", "🐛", "💡", "📦", "⭐", "🇯🇵", "🇩🇪", "👨\u200D👩\u200D👧", "👩\u200D💻", "🏳\uFE0F\u200D🌈"];
  const EMOJI_TEXT_STYLE = ["\u2764", "\u263A", "\u2714", "\u2600", "\u2708", "\u26A0"]; // with or without VS16
  const SKIN = ["\u{1F3FB}", "\u{1F3FC}", "\u{1F3FD}", "\u{1F3FE}", "\u{1F3FF}"];
  const SKIN_BASE = ["👍", "👋", "✌", "🙌"];

  /**
   * Upper case, leaving the letters whose case mapping is another spelling rather than
   * the same letter (case folding, as unicode61 does it, does not bring them back): "ß"
   * is "SS" (docs: ß is not folded), "ᾳ" is "ΑΙ", dotless "ı" is the "I" of "i".
   */
  const sameLetter = (c: string): boolean => c.toUpperCase().toLowerCase().normalize("NFC") === c.toLowerCase().normalize("NFC").replace(/ς/u, "σ");
  const upper = (s: string): string => chars(s).map((c) => (sameLetter(c) ? c.toUpperCase() : c)).join("");
  const caseOf = (r: Rand, w: string): string => {
    const k = int(r, 3);
    return k === 0 ? w : k === 1 ? upper(w.slice(0, 1)) + w.slice(1) : upper(w);
  };
  const finalSigma = (w: string) => w.replace(/σ$/u, "ς");
  const stripAccents = (s: string) => s.normalize("NFD").replace(/[\u0300-\u036F]/gu, "").normalize("NFC");

  function word(r: Rand): Word {
    switch (int(r, 16)) {
      case 0: case 1: {
        const w = times(r, 1, 3, () => pick(r, LATIN_C) + pick(r, LATIN_V) + (r() < 0.2 ? pick(r, LATIN_EXTRA) : ""));
        const text = caseOf(r, w);
        return { text, kind: "latin", cased: true, bare: stripAccents(text) };
      }
      case 2: {
        const w = finalSigma(times(r, 2, 5, () => pick(r, GREEK)));
        const text = caseOf(r, w);
        return { text, kind: "greek", cased: true, bare: stripAccents(text) };
      }
      case 3: {
        const text = caseOf(r, times(r, 2, 6, () => pick(r, CYRILLIC)));
        return { text, kind: "cyrillic", cased: true };
      }
      case 4: {
        const letters = Array.from({ length: 2 + int(r, 4) }, () => pick(r, ARABIC));
        const pointed = letters.map((c) => c + (r() < 0.6 ? pick(r, HARAKAT) : "")).join("");
        return r() < 0.5 ? { text: pointed, kind: "arabic", bare: letters.join("") } : { text: letters.join(""), kind: "arabic", bare: pointed };
      }
      case 5: {
        const letters = Array.from({ length: 2 + int(r, 4) }, () => pick(r, HEBREW));
        const pointed = letters.map((c) => c + (r() < 0.6 ? pick(r, NIQQUD) : "")).join("");
        return r() < 0.5 ? { text: pointed, kind: "hebrew", bare: letters.join("") } : { text: letters.join(""), kind: "hebrew", bare: pointed };
      }
      case 6:
        return { text: times(r, 1, 4, () => pick(r, DEVA_C) + pick(r, DEVA_SIGNS)), kind: "devanagari" };
      case 7: {
        const text = times(r, 1, 3, () => pick(r, THAI_PRE) + pick(r, THAI_C) + pick(r, THAI_ABOVE) + pick(r, THAI_TONE) + pick(r, THAI_AFTER));
        return { text, kind: "thai", run: text };
      }
      case 8: {
        const text = times(r, 1, 6, () => pick(r, HANZI));
        return { text, kind: "chinese", run: text };
      }
      case 9: {
        const text = times(r, 1, 6, () => pick(r, KANA) + (r() < 0.2 ? "ー" : ""));
        return { text, kind: "kana", run: text };
      }
      case 10:
        return { text: times(r, 1, 3, () => String.fromCodePoint(0xAC00 + int(r, 11172))), kind: "hangul" };
      case 11: {
        if (r() < 0.5) return { text: pick(r, EMOJI), kind: "emoji" };
        const base = pick(r, EMOJI_TEXT_STYLE);
        return r() < 0.5 ? { text: base + "\uFE0F", kind: "emoji", bare: base } : { text: base, kind: "emoji", bare: base + "\uFE0F" };
      }
      case 12: {
        const k = int(r, 3);
        if (k === 0) return { text: pick(r, SKIN_BASE) + pick(r, SKIN), kind: "skin tone" };
        if (k === 1) return { text: pick(r, ["👩", "🧑", "👨"]) + pick(r, SKIN) + "\u200D" + pick(r, ["💻", "🚀", "🔬"]), kind: "skin tone zwj" };
        const digit = String(int(r, 10));
        return { text: `${digit}\uFE0F\u20E3`, kind: "keycap", bare: digit };
      }
      case 13:
        return { text: String(int(r, 100000)), kind: "digits" };
      case 14: {
        const latin = times(r, 2, 4, () => pick(r, chars("abcdefghijklmnopqrstuvwxyz")));
        const run = times(r, 1, 3, () => pick(r, HANZI));
        return r() < 0.5 ? { text: latin + run, kind: "mixed", run } : { text: run + latin, kind: "mixed", run };
      }
      default: {
        // "deploy🚀": a symbol written against a word is part of it (docs)
        const latin = times(r, 2, 4, () => pick(r, chars("abcdefghijklmnopqrstuvwxyz")));
        return { text: latin + pick(r, ["🚀", "✅", "🎉"]), kind: "word+emoji" };
      }
    }
  }

  /** The word as written in the title: composed or decomposed (then every query uses the other form too). */
  const written = (r: Rand, w: Word): Word => (r() < 0.4 ? { ...w, text: w.text.normalize("NFD"), ...(w.run ? { run: w.run.normalize("NFD") } : {}) } : w);
  const otherForm = (s: string): string => (s === s.normalize("NFC") ? s.normalize("NFD") : s.normalize("NFC"));

  // --- the loose, independent judge of "the card holds the query's words" ---
  const UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
  const loose = (s: string): string => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/ς/gu, "σ");
  /** The title loosely, separators next to a character of an unspaced script dropped (a query's run may span them). */
  const looseTitle = (title: string): string => {
    const t = loose(title);
    const parts = t.split(/([^\p{L}\p{N}\p{So}\p{Co}]+)/u);
    return parts.map((p, i) => (i % 2 === 1 && (UNSPACED.test(parts[i - 1]!.slice(-2)) || UNSPACED.test(parts[i + 1]?.slice(0, 2) ?? "")) ? "" : p)).join("");
  };
  const queryPieces = (q: string): string[] => loose(q).split(/[^\p{L}\p{N}\p{So}\p{Co}]+/u).filter((p) => p !== "");
  const looseTitles = new Map<string, string>();
  /** Whether the title loosely holds every word of a query (`pieces`: queryPieces(q)). */
  const holds = (pieces: string[], title: string): boolean => {
    let t = looseTitles.get(title);
    if (t === undefined) looseTitles.set(title, (t = looseTitle(title)));
    return pieces.length > 0 && pieces.every((p) => t.includes(p));
  };
  const mayMatch = (q: string, title: string): boolean => holds(queryPieces(q), title);
  const idLike = (q: string): boolean => /^(card_)?[0-9a-f]{8}$|^card_[0-9a-f]{16}$/.test(q.trim().toLowerCase());

  test("every word, either normal form, either case, a whole-unit prefix, a stretch of a run, and the marks the docs ignore find the card; no card is found without the query's words", async () => {
    const r = prng(SEED);
    const started = performance.now();
    await withService("embedded", async (svc) => {
      const cards: Array<{ id: string; title: string; words: Word[] }> = [];
      for (let i = 0; i < 180; i++) {
        const words = Array.from({ length: 2 + int(r, 4) }, () => written(r, word(r)));
        const title = words.map((w) => w.text).join(" ");
        const c = await createCard(svc, { type_id: "task", title }, ada);
        expect(c.title).toBe(title);
        cards.push({ id: c.id, title, words });
      }
      const failures: string[] = [];
      let searches = 0;
      let negatives = 0;
      const run = async (q: string, card: (typeof cards)[number] | undefined, why: string): Promise<void> => {
        searches++;
        let ids: Set<string>;
        try {
          ids = new Set((await Promise.resolve().then(() => listCards(svc, { q, limit: "200" }, "ada"))).items.map((c) => c.id));
        } catch (e) {
          failures.push(`${why}: q=${JSON.stringify(q)} threw ${(e as { code?: string }).code}: ${(e as Error).message}`);
          return;
        }
        // every card that lacks the query's words must be absent (a negative case each)
        const pieces = queryPieces(q);
        for (const c of cards) {
          if (holds(pieces, c.title) || idLike(q)) continue;
          negatives++;
          if (ids.has(c.id)) failures.push(`${why}: q=${JSON.stringify(q)} found ${JSON.stringify(c.title)}, which lacks its words`);
        }
        // (a skin tone inside the query: before search schema 6, a word character to SQLite
        // and a separator to the query, so "👍🏽 deployed" missed "deployed 👍🏽")
        if (card && !ids.has(card.id)) failures.push(`${why}: q=${JSON.stringify(q)} missed ${JSON.stringify(card.title)}`);
      };
      for (const card of cards) {
        const { words } = card;
        const w = pick(r, words);
        await run(w.text, card, `a whole word (${w.kind})`);
        await run(otherForm(w.text), card, `the other normal form (${w.kind})`);
        const g = graphemes(w.text);
        const prefix = g.slice(0, 1 + int(r, g.length)).join("");
        await run(prefix, card, `a prefix (${w.kind})`);
        const before = pick(r, words);
        await run(`${before.text} ${prefix}`, card, `a word, then a prefix (${before.kind}, ${w.kind})`);
        if (w.run) {
          const u = graphemes(w.run);
          const from = int(r, u.length);
          await run(u.slice(from, from + 1 + int(r, u.length - from)).join(""), card, `a stretch of a run (${w.kind})`);
        }
        if (w.cased) await run(r() < 0.5 ? w.text.toLowerCase() : upper(w.text), card, `the other case (${w.kind})`);
        if (w.bare !== undefined) await run(w.bare, card, `without the marks the docs ignore, or with them (${w.kind})`);
        await run(words.map((x) => x.text).join(" "), card, "the whole title");
        // a fresh word: found only where the card loosely holds it (checked for every card above)
        await run(word(r).text, undefined, "a fresh word");
      }
      console.log(`${cards.length} cards, ${searches} searches, ${negatives} cards rightly not found, ${failures.length} failures, ${Math.round(performance.now() - started)} ms`);
      expect(failures).toEqual([]);
    });
  }, 60_000);

  test("no query string, however it mixes words, FTS5 syntax, lone marks, underscores and control characters, throws but a bad_request past q's limits; one with no word finds no card", async () => {
    const r = prng(SEED + 1);
    const started = performance.now();
    const SYNTAX = ['"', '""', "'", "*", "^", "NEAR(", "NEAR", ")", "(", ":", "-", "+", "_", "__", "AND", "OR", "NOT", "title:", "body:", "{title body}:", "\\", ".", ",", "/", "|", "&", "#", "@", "%", "~", "`", "[", "]", "<", ">", "=", "?", "!", ";", "…", "—", "「", "」", "、", "。", "·"];
    // marks alone, joiners, selectors and skin tones: none is a word of its own
    const MARKS = ["\u0301", "\u0308", "\u0303", "\u0323", "\u0345", "\u1DC4", "\u20D7", "\uFE20", "\u0483", "\u064E", "\u0651", "\u05B8", "\u05BC", "\u093F", "\u094D", "\u0E49", "\u0E31", "\u3099", "\u20E3", "\uFE0F", "\uFE0E", "\u200D", "\u{1F3FD}", "\u{E0100}"];
    const CONTROLS = ["\u0000", "\u0001", "\u0008", "\t", "\n", "\r", "\u001B", "\u007F", "\u0085", "\u009B", "\u200B", "\u200E", "\u2028", "\u2066", "\uFEFF", "\uD800", "\uDFFF"];
    const SEPARATORS = [" ", " ", " ", "", "  ", "\u00A0", "\u3000", "\t"];
    const noWord = (): string => {
      const k = int(r, 4);
      return k === 0 ? pick(r, SYNTAX) : k === 1 ? pick(r, MARKS) : k === 2 ? pick(r, CONTROLS) : "_" + pick(r, MARKS) + pick(r, MARKS);
    };
    const someWord = (): string => {
      const w = graphemes(word(r).text);
      return w.slice(0, 1 + int(r, w.length)).join("");
    };
    const query = (): string => {
      const wordless = r() < 0.4;
      const n = r() < 0.03 ? 33 + int(r, 10) : 1 + int(r, 7);
      let q = Array.from({ length: n }, () => (wordless || r() < 0.5 ? noWord() : someWord())).join(pick(r, SEPARATORS));
      if (r() < 0.02) q = q.repeat(Math.ceil(1001 / Math.max(1, q.length)));
      return q;
    };
    /** Past q's limits (docs: 32 words, a character of Chinese, Japanese or Thai one; 1,000 characters): at most this many terms. */
    const overLimits = (q: string): boolean => q.length > 1000 || q.trim().split(/\s+/).length > 32 || (q.match(/[\p{L}\p{M}\p{N}\p{So}\p{Co}]/gu) ?? []).length > 32;

    await withService("embedded", async (svc) => {
      const titles = [
        ...Array.from({ length: 60 }, () => Array.from({ length: 2 + int(r, 4) }, () => written(r, word(r)).text).join(" ")),
        'say "hello" NEAR(x y) -not', "snake_case col:umn ^caret *star", "AND OR NOT", "title: body:",
      ];
      const byId = new Map<string, string>();
      for (const title of titles) byId.set((await createCard(svc, { type_id: "task", title }, ada)).id, title);
      const failures: string[] = [];
      let refused = 0;
      let wordless = 0;
      for (let i = 0; i < 400; i++) {
        const q = query();
        let ids: string[];
        try {
          ids = (await Promise.resolve().then(() => listCards(svc, { q, limit: "200" }, "ada"))).items.map((c) => c.id);
        } catch (e) {
          refused++;
          if (!(e instanceof CardsError) || e.code !== "bad_request" || !e.message) failures.push(`q=${JSON.stringify(q)} threw ${String(e)}`);
          else if (!overLimits(q)) failures.push(`q=${JSON.stringify(q)} refused within q's limits: ${e.message}`);
          continue;
        }
        // by design a blank q (JS whitespace, U+FEFF among it) is no q, of any length: it lists
        // every card (tests/http/api.test.ts "a blank q lists as if no q were given")
        if (q.trim() === "") continue;
        if (q.length > 1000) failures.push(`q=${JSON.stringify(q.slice(0, 40))}... of ${q.length} characters was searched`);
        if (queryPieces(q).length === 0) {
          wordless++;
          if (ids.length > 0) failures.push(`q=${JSON.stringify(q)} has no word and found ${ids.length} of ${titles.length} cards`);
        } else {
          for (const id of ids) if (!mayMatch(q, byId.get(id)!) && !idLike(q)) failures.push(`q=${JSON.stringify(q)} found ${JSON.stringify(byId.get(id))}, which lacks its words`);
        }
      }
      console.log(`400 queries (${wordless} with no word, ${refused} refused), ${failures.length} failures, ${Math.round(performance.now() - started)} ms`);
      expect(failures).toEqual([]);
    });
  }, 60_000);
});
