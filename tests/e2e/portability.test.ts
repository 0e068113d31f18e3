/** dump / restore through the compiled binary: format, round trip, refusals that name the line. */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { assertBinary, cleanEnv, run } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";

let src: string;
let dumpText: string;

/** A workspace that uses every field type, links, comments, entries, an artifact and a user. */
function populate(dir: string): void {
  const c = (args: string[], input?: string) => {
    const r = run(args, { cwd: dir, input });
    if (r.code !== 0) throw new Error(`${args.join(" ")}: ${r.stderr}`);
    return r.json;
  };
  c(["users", "add", "bot-9", "--kind", "agent", "--display-name", "Bot Nine"]);
  const parent = c(["cards", "create", "--type", "task", "--title", "parent"]);
  const task = c(["cards", "create", "--type", "task", "--title", "everything", "--tags", "backend,docs", "--fields", JSON.stringify({
    priority: "high", description: "**md**", components: ["api", "cli"], estimate_hours: 2.5, due: "2027-01-02T03:04:05Z", branch: "feat/x", parent: parent.id,
  })]);
  c(["cards", "entries", "append", task.id, "evidence", '{"note":"tried it","at":"2026-11-22T00:00:00Z","by":"agent-1"}', "--version", String(task.version)]);
  c(["cards", "artifacts", "put", task.id, "output", "-"], "artifact bytes");
  c(["cards", "links", "add", task.id, "depends-on", parent.id, "--note", "first"]);
  c(["cards", "comments", "add", task.id, "handoff"]);
  const bug = c(["cards", "create", "--type", "bug", "--title", "bug", "--fields", JSON.stringify({
    steps: "1. run", environment: "linux", areas: ["infra"], reported_by: "ada", found_in: task.id, resolution: "fixed", logs: { uri: "https://ci.example/1" },
  })]);
  c(["cards", "claim", bug.id, "--version", "1", "--actor", "agent-2"]);
  const review = c(["cards", "create", "--type", "review", "--title", "review", "--fields", JSON.stringify({ reviewers: ["ada", "agent-1"], subject: task.id })]);
  c(["cards", "entries", "append", review.id, "findings", '{"summary":"nit","level":"nit"}', "--version", String(review.version)]);
  c(["cards", "upgrade-schema", task.id]);
  c(["cards", "delete", parent.id]);
}

beforeAll(() => {
  assertBinary();
  src = makeWorkspace();
  populate(src);
  const r = run(["dump"], { cwd: src });
  expect(r.code).toBe(0);
  dumpText = r.stdout;
});

describe("cards dump", () => {
  test("header first, then users, cards with comments and links, then events in id order", () => {
    const lines = dumpText.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ record: "header", format: "cards-dump", format_version: 1, workspace_id: "agent-queue" });
    expect(lines[0].dumped_at).toBeString();
    const kinds = lines.slice(1).map((l) => l.record);
    expect(kinds).toEqual([...kinds].sort((a, b) => ["user", "card", "event"].indexOf(a) - ["user", "card", "event"].indexOf(b)));
    expect(lines.filter((l) => l.record === "user").map((l) => l.user.id)).toEqual(["ada", "agent-1", "agent-2", "bot-9"]);
    const task = lines.find((l) => l.record === "card" && l.card.title === "everything").card;
    expect(task.comments[0].body).toBe("handoff");
    expect(task.links[0]).toMatchObject({ type_id: "depends-on", note: "first" });
    const ids = lines.filter((l) => l.record === "event").map((l) => Number(l.event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(lines.some((l) => l.record === "event" && l.event.type === "card_deleted")).toBe(true);
  });

  test("--out writes the same lines to a file", () => {
    const out = join(src, "dump.jsonl");
    const r = run(["dump", "--out", out], { cwd: src });
    expect(r.json).toMatchObject({ out, cards: 3 });
    const strip = (t: string) => t.trim().split("\n").slice(1).join("\n");
    expect(strip(readFileSync(out, "utf8"))).toBe(strip(dumpText));
  });

  test("stdout shared with stderr (2>&1) and read slowly: every line arrives (before: cut short with EAGAIN, exit 7)", () => {
    const dir = makeWorkspace();
    const long = "x".repeat(3000);
    for (let i = 0; i < 40; i++) run(["cards", "create", "--type", "task", "--title", `big ${i}`, "--fields", JSON.stringify({ description: long })], { cwd: dir });
    const whole = run(["dump"], { cwd: dir }).stdout;
    expect(whole.length).toBeGreaterThan(200_000); // more than a pipe holds
    const slow = spawnSync("sh", ["-c", `"$0" dump 2>&1 | (sleep 1; cat)`, BIN], { cwd: dir, env: cleanEnv(), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    expect(slow.stdout.split("\n").length).toBe(whole.split("\n").length);
    expect(slow.stdout).toContain('"record":"event"');
  });

  test("--out is written whole or not at all: a dump that cannot be put in place leaves the target and no partial file", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-dump-"));
    const target = join(dir, "taken");
    mkdirSync(target); // a directory of that name: refused before anything is written
    const r = run(["dump", "--out", target], { cwd: src });
    expect([r.code, r.error.error]).toEqual([2, "usage"]);
    // before: written straight into the target, so a dump cut short restored as a smaller workspace
    expect(readdirSync(dir)).toEqual(["taken"]);
    const ok = run(["dump", "--out", join(dir, "d.jsonl")], { cwd: src });
    expect(ok.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["d.jsonl", "taken"]);
  });
});

describe("cards restore", () => {
  test("round trip: dump -> restore -> dump gives the same lines (ids, versions, timestamps, entry and comment ids)", () => {
    const dst = makeWorkspace();
    const file = join(dst, "in.jsonl");
    writeFileSync(file, dumpText);
    const r = run(["restore", "--in", file], { cwd: dst });
    expect(r.code).toBe(0);
    expect(r.json.restored).toMatchObject({ users: 4, cards: 3 });
    const again = run(["dump"], { cwd: dst }).stdout;
    const body = (t: string) => t.trim().split("\n").slice(1);
    expect(body(again)).toEqual(body(dumpText));
    // the restored workspace keeps working: new events continue after the restored ids
    const created = run(["cards", "create", "--type", "task", "--title", "after restore"], { cwd: dst });
    expect(created.code).toBe(0);
    const events = run(["events", "--limit", "500"], { cwd: dst }).json.items;
    expect(Number(events.at(-1).id)).toBeGreaterThan(Number(JSON.parse(dumpText.trim().split("\n").at(-1)!).event.id));
  });

  test("docs/migrating.md: its hand-written dump restores with its ids, times, owner, link and comment; without its events it is refused as such", () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/migrating.md"), "utf8");
    const jsonl = /```jsonl\n([\s\S]*?)```/.exec(doc)![1]!;
    const dir = makeWorkspace();
    const file = join(dir, "import.jsonl");
    writeFileSync(file, jsonl);
    const r = run(["--dir", dir, "restore", "--in", file]);
    expect([r.code, r.json?.restored]).toEqual([0, { users: 1, cards: 2, events: 2 }]);
    const card = run(["--dir", dir, "cards", "get", "card_000000000000bd02"]).json;
    expect(card).toMatchObject({ owner: "sam", created_at: "2025-10-02T10:00:00.000Z", links: [{ type_id: "depends-on", target: "card_000000000000bd01" }], comments: [{ body: "moved over from bd-2" }] });
    expect(run(["--dir", dir, "cards", "list", "--blocked", "false", "--status", "todo"]).json.items.map((c: any) => c.id)).toEqual(["card_000000000000bd02"]);
    // an event restored with an empty diff reads as a line, not "created card nothing in undefined"
    expect(run(["--dir", dir, "cards", "history", "card_000000000000bd02"]).json.items.map((h: any) => h.summary)).toEqual(["created the card"]);
    const bare = makeWorkspace();
    writeFileSync(join(bare, "import.jsonl"), jsonl.split("\n").filter((l) => !l.includes('"record":"event"')).join("\n"));
    const refused = run(["--dir", bare, "restore", "--in", join(bare, "import.jsonl")]);
    expect(refused.code).toBe(5);
    expect(refused.error.message).toContain("the dump holds cards but no events");
    expect(refused.error.hint).toContain("docs/migrating.md");
  });

  test("reads stdin when no file is given", () => {
    const dst = makeWorkspace();
    const r = run(["restore"], { cwd: dst, input: dumpText });
    expect(r.code).toBe(0);
    expect(run(["cards", "list"], { cwd: dst }).json.items.length).toBe(3);
  });

  test("refuses a workspace that already holds cards", () => {
    const r = run(["restore"], { cwd: src, input: dumpText });
    expect(r.code).toBe(5);
    expect(r.error.message).toContain("already holds cards");
  });

  test("refuses a workspace whose cards were deleted but whose event log remains (a refusal, not a crash)", () => {
    const dir = makeWorkspace();
    const c = run(["cards", "create", "--type", "task", "--title", "gone"], { cwd: dir }).json;
    expect(run(["cards", "delete", c.id], { cwd: dir }).code).toBe(0);
    const r = run(["restore"], { cwd: dir, input: dumpText });
    expect(r.code).toBe(5);
    expect(r.error).toMatchObject({ error: "validation_failed", message: expect.stringContaining("already has an event log") });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  const broken: Array<[string, (lines: string[]) => string[], string]> = [
    ["a card above its type's schema version", (l) => l.map((x) => (x.includes('"record":"card"') && x.includes('"type_id":"task"') ? x.replace('"schema_version":2', '"schema_version":9') : x)), "above 2, the version of type task"],
    ["a duplicate card id", (l) => { const i = l.findIndex((x) => x.includes('"record":"card"')); return [...l.slice(0, i + 1), l[i]!, ...l.slice(i + 1)]; }, "duplicate card id"],
    ["a malformed line", (l) => [l[0]!, "{not json", ...l.slice(1)], "line 2: not valid JSON"],
    ["an unknown record kind", (l) => [l[0]!, '{"record":"board","board":{}}', ...l.slice(1)], "line 2: unknown record kind"],
    ["a header of another format", (l) => ['{"record":"header","format":"other","format_version":1}', ...l.slice(1)], "line 1"],
    ["a card with fields null", (l) => editFirst(l, "card", (r) => { r.card.fields = null; }), "needs a fields object"],
    ["a card in a status the workspace has no column for", (l) => editFirst(l, "card", (r) => { r.card.status = "archived"; }), 'status "archived", which this workspace has no column for'],
    ["a card whose title is a number", (l) => editFirst(l, "card", (r) => { r.card.title = 7; }), "non-empty string title"],
    ["a card with a tag that is no string", (l) => editFirst(l, "card", (r) => { r.card.tags = [1]; }), "tags array of strings"],
    ["a card whose updated_at is no time", (l) => editFirst(l, "card", (r) => { r.card.updated_at = "yesterday"; }), "updated_at must be a UTC time with milliseconds that exists"],
    // times order cards and filter as text: a day that does not exist, 24:00 or a missing fraction misordered them (before: restored as written)
    ["a card whose created_at is a day that does not exist", (l) => editFirst(l, "card", (r) => { r.card.created_at = "2025-02-30T00:00:00.000Z"; }), 'created_at must be a UTC time with milliseconds that exists, as cards writes them (2026-01-31T12:00:00.000Z); "2025-02-30T00:00:00.000Z" is not'],
    ["a card whose created_at has a month 13 (no instant at all)", (l) => editFirst(l, "card", (r) => { r.card.created_at = "2025-13-01T00:00:00.000Z"; }), 'created_at must be a UTC time with milliseconds that exists, as cards writes them (2026-01-31T12:00:00.000Z); "2025-13-01T00:00:00.000Z" is not'],
    ["a card whose status_since is 24:00", (l) => editFirst(l, "card", (r) => { r.card.status_since = "2025-01-01T24:00:00.000Z"; }), "status_since must be a UTC time with milliseconds that exists"],
    ["a card whose updated_at has no milliseconds", (l) => editFirst(l, "card", (r) => { r.card.updated_at = "2025-01-01T00:00:00Z"; }), "updated_at must be a UTC time with milliseconds that exists"],
    ["an event whose at has an offset", (l) => editFirst(l, "event", (r) => { r.event.at = "2025-01-01T02:00:00.000+02:00"; }), "at (an ISO time)"],
    ["a comment whose created_at is no time", (l) => editFirst(l, "card", (r) => r.card.comments?.length, (r) => { r.card.comments[0].created_at = "nope"; }), "a comment needs id, author, body and created_at"],
    ["two cards sharing a comment id", (l) => {
      const withComment = JSON.parse(l.find((x) => x.includes('"comments":[{'))!);
      return editFirst(l, "card", (r) => r.card.id !== withComment.card.id, (r) => { r.card.comments = [withComment.card.comments[0]]; });
    }, "duplicate comment id"],
    ["an event with diff null", (l) => editFirst(l, "event", (r) => { r.event.diff = null; }), "a diff object"],
    // a dump killed mid-way ends at a line boundary like a whole one (before: restored, exit 0)
    ["a dump cut short before its events", (l) => l.filter((x) => !x.includes('"record":"event"')), "the dump ends early"],
    ["a dump cut short among its events", (l) => l.slice(0, l.findIndex((x) => x.includes('"record":"event"')) + 2), "the dump ends early"],
    // where no card's last change is lost, only the header's counts tell (before: restored, exit 0)
    ["a dump cut short among its users", (l) => l.slice(0, 2), "its header counts 4 users, it holds 1"],
    ["a dump that lost its last event (a card_deleted)", (l) => l.slice(0, -1), "the dump ends early: its header counts"],
    ["a dump with a card taken out", (l) => l.filter((x) => !(x.includes('"record":"card"') && x.includes('"title":"bug"'))), "its header counts 3 cards, it holds 2"],
    ["header counts that are not numbers", (l) => editFirst(l, "header", (r) => { r.counts.users = "4"; }), "counts must be an object of users, cards and events"],
    // a dump written before the header counted: the log still names every card it holds or deletes
    ["a dump without counts whose log lost a card_deleted", (l) => editFirst(l.filter((x) => !x.includes('"type":"card_deleted"')), "header", (r) => { delete r.counts; }), "which it neither holds nor deletes"],
    ["a user id outside the rules of POST /users", (l) => editFirst(l, "user", (r) => { r.user.id = "bad user"; }), 'user "bad user"'],
    ["a user whose display_name is no string", (l) => editFirst(l, "user", (r) => { r.user.display_name = 5; }), "display_name must be a string"],
    ["the same user twice", (l) => { const i = l.findIndex((x) => x.includes('"record":"user"')); return [...l.slice(0, i + 1), l[i]!.replace('"display_name"', '"x"'), ...l.slice(i + 1)].map((x, j) => (j === 0 ? x.replace('"users":4', '"users":5') : x)); }, "duplicate user id"],
  ];

  /** Parses the first line of `record` kind (matching `when`), applies `edit`, puts it back. */
  function editFirst(lines: string[], record: string, when: ((r: any) => unknown) | ((r: any) => void), edit?: (r: any) => void): string[] {
    const [match, change] = edit ? [when, edit] : [() => true, when];
    const i = lines.findIndex((x) => { const r = JSON.parse(x); return r.record === record && match(r); });
    const r = JSON.parse(lines[i]!);
    change(r);
    return lines.map((x, j) => (j === i ? JSON.stringify(r) : x));
  }
  test.each(broken)("%s is a hard error naming the line, and nothing is restored", (_name, mutate, message) => {
    const dst = makeWorkspace();
    const lines = mutate(dumpText.trim().split("\n"));
    const r = run(["restore"], { cwd: dst, input: lines.join("\n") + "\n" });
    expect(r.code).toBe(5);
    expect(r.error.message).toContain(message);
    expect(run(["cards", "list"], { cwd: dst }).json.items).toEqual([]);
    expect(run(["events"], { cwd: dst }).json.items).toEqual([]);
  });

  test("the header counts the records that follow; a dump without counts (an older one) still restores", () => {
    const lines = dumpText.trim().split("\n");
    expect(JSON.parse(lines[0]!).counts).toEqual({
      users: lines.filter((x) => x.includes('"record":"user"')).length,
      cards: lines.filter((x) => x.includes('"record":"card"')).length,
      events: lines.filter((x) => x.includes('"record":"event"')).length,
    });
    const old = [lines[0]!.replace(/,"counts":\{[^}]*\}/, ""), ...lines.slice(1)];
    expect(old[0]).not.toContain("counts");
    const r = run(["restore"], { cwd: makeWorkspace(), input: old.join("\n") + "\n" });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ restored: { users: 4, cards: 3, events: lines.length - 8 } });
  });

  test("a dump holding bytes that are not UTF-8 is refused, and nothing is restored (before: stored as U+FFFD, exit 0)", () => {
    const dst = makeWorkspace();
    const bytes = Buffer.from(dumpText.replace('"title":"everything"', '"title":"T\u00e4sk"'), "utf8");
    const at = bytes.indexOf(Buffer.from("T\u00e4sk", "utf8"));
    const latin1 = Buffer.concat([bytes.subarray(0, at + 1), Buffer.from([0xe4]), bytes.subarray(at + 3)]);
    const file = join(dst, "latin1.jsonl");
    writeFileSync(file, latin1);
    const r = run(["restore", "--in", file], { cwd: dst });
    expect(r.code).toBe(2);
    expect(r.error).toMatchObject({ error: "bad_request", field: "--in", message: expect.stringContaining("is not valid UTF-8") });
    expect(run(["cards", "list"], { cwd: dst }).json.items).toEqual([]);
  });

  test("a line holding an unpaired surrogate escape is refused naming the line, and nothing is restored (before: the card got U+FFFD, the log kept the escape)", () => {
    const dst = makeWorkspace();
    const lines = dumpText.trim().split("\n");
    // the last line: every card and event before it was already written in the transaction
    const last = JSON.parse(lines.at(-1)!);
    last.event.actor = "ada \ud800 cut";
    lines[lines.length - 1] = JSON.stringify(last);
    expect(lines.at(-1)).toContain("\\ud800");
    const r = run(["restore"], { cwd: dst, input: lines.join("\n") + "\n" });
    expect(r.code).toBe(2);
    expect(r.error).toMatchObject({ error: "bad_request", field: `line ${lines.length}`, message: `line ${lines.length}: event.actor holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); nothing was restored` });
    expect(run(["cards", "list"], { cwd: dst }).json.items).toEqual([]);
    expect(run(["events"], { cwd: dst }).json.items).toEqual([]);
    expect(run(["workspace"], { cwd: dst }).json.workspace.users.map((u: any) => u.id)).not.toContain("bot-9"); // the dump's user line
  });

  test("cards the definitions here would refuse as new writes are restored as dumped, and named in notices", () => {
    const lines = dumpText.trim().split("\n").map((x) => {
      const r = JSON.parse(x);
      if (r.record === "card" && r.card.title === "everything") { r.card.fields.priority = "bogus"; r.card.tags = ["backend", "not-in-tag-set"]; }
      if (r.record === "card" && r.card.title === "review") r.card.fields.findings = [{ summary: "no entry id" }];
      return JSON.stringify(r);
    });
    const dst = makeWorkspace();
    const r = run(["restore"], { cwd: dst, input: lines.join("\n") + "\n" });
    expect(r.code).toBe(0);
    expect(r.json.restored.cards).toBe(3);
    expect(r.json.notices_total).toBe(2);
    const byCard = Object.fromEntries(r.json.notices.map((n: any) => [n.card_id, n]));
    const task = JSON.parse(lines.find((x) => x.includes('"title":"everything"'))!).card;
    const review = JSON.parse(lines.find((x) => x.includes('"record":"card"') && x.includes('"title":"review"'))!).card;
    expect(byCard[task.id]).toMatchObject({ error: "unknown_tag", field: "tags" });
    expect(byCard[review.id]).toMatchObject({ error: "validation_failed", field: "findings", message: expect.stringContaining("without an entry_id") });
    // kept as dumped
    expect(run(["cards", "get", task.id], { cwd: dst }).json.fields.priority).toBe("bogus");
  });

  test("users: a display name workspace.json allows restores; the target's workspace.json decides its declared users", () => {
    const long = "L".repeat(250);
    const a = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).users[0].display_name = long; });
    expect(run(["cards", "create", "--type", "task", "--title", "t"], { cwd: a }).code).toBe(0);
    const dumped = run(["dump"], { cwd: a }).stdout;
    const b = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).users[0].display_name = long; });
    expect(run(["restore"], { cwd: b, input: dumped }).code).toBe(0);
    // a target whose workspace.json names the declared user otherwise: it wins over the dump
    const c = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).users[0].display_name = "Renamed"; });
    expect(run(["restore"], { cwd: c, input: dumped }).code).toBe(0);
    const users = run(["workspace"], { cwd: c }).json.workspace.users;
    expect(users[0].display_name).toBe("Renamed");
  });

  test("text holding U+2028 and U+2029 round-trips (the dump escapes them; restore splits lines at \\n only)", () => {
    const a = makeWorkspace();
    const text = "line\u2028separator\u2029paragraph";
    // (a title is one line: U+2028 is refused there since 2026-11-25)
    const card = run(["cards", "create", "--type", "task", "--title", "t", "--fields", JSON.stringify({ description: text })], { cwd: a }).json;
    run(["cards", "comments", "add", card.id, `c\u2029d`], { cwd: a });
    const dumped = run(["dump"], { cwd: a }).stdout;
    expect(dumped).not.toMatch(/[\u2028\u2029]/);
    const b = makeWorkspace();
    const r = run(["restore"], { cwd: b, input: dumped });
    expect(r.code).toBe(0);
    const back = run(["cards", "get", card.id], { cwd: b }).json;
    expect(back.fields.description).toBe(text);
    expect(back.comments[0].body).toBe("c\u2029d");
    // a dump written by another tool with the characters raw restores too
    const raw = dumped.replace(/\\u2028/g, "\u2028").replace(/\\u2029/g, "\u2029");
    expect(raw).toMatch(/\u2028/);
    expect(run(["restore"], { cwd: makeWorkspace(), input: raw }).code).toBe(0);
  });

  test("a user declared in workspace.json with a plain date as created_at round-trips", () => {
    const a = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).users[0].created_at = "2024-01-01"; });
    expect(run(["cards", "create", "--type", "task", "--title", "t"], { cwd: a }).code).toBe(0);
    const r = run(["restore"], { cwd: makeWorkspace(), input: run(["dump"], { cwd: a }).stdout });
    expect(r.code).toBe(0);
  });

  test("files that cannot be written or read are usage errors naming the flag, not internal errors", () => {
    const d = run(["dump", "--out", "/nonexistent/dir/x.jsonl"], { cwd: src });
    expect(d.code).toBe(2);
    expect(d.error).toMatchObject({ error: "usage", field: "--out" });
    const dst = makeWorkspace();
    const r = run(["restore", "--in", dst], { cwd: dst });
    expect(r.code).toBe(2);
    expect(r.error).toMatchObject({ error: "usage", field: "--in" });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("dump and restore refuse CARDS_URL (they work on the files)", () => {
    expect(run(["dump"], { cwd: src, env: { CARDS_URL: "http://127.0.0.1:9" } }).error.error).toBe("usage");
  });
});
