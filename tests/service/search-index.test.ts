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
