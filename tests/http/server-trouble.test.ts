/** The server's log of 503s (app.ts serverTrouble): the first at once, the rest counted and told, none lost. */
import { expect, setSystemTime, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createHttpApp, serverTrouble, toResponse } from "../../src/http/app.ts";
import { MIGRATIONS } from "../../src/store/sqlite/schema.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const unavailable = (message: string) => new Response(JSON.stringify({ error: "unavailable", message }), { status: 503 });
const settle = (ms = 20) => new Promise((r) => setTimeout(r, ms));

test("the first 503 of a kind is logged at once; the next ones within the window are told at its end with their count", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 150);
  const req = (path: string) => new Request(`http://127.0.0.1${path}`);
  seen(req("/v1/cards"), unavailable("the disk is full; nothing was written to /w/.cards/cards.db"));
  await settle();
  expect(lines).toEqual(["503 to GET /v1/cards: the disk is full; nothing was written to /w/.cards/cards.db"]);
  // other answers are not logged; another kind is logged at once
  seen(req("/v1/cards"), new Response("{}", { status: 404 }));
  seen(req("/v1/events"), unavailable("too many event streams are open (2000)"));
  for (let i = 0; i < 3; i++) seen(req(`/v1/cards/card_${i}`), unavailable("the disk is full; nothing was written to /x/.cards/cards.db"));
  await settle();
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe("503 to GET /v1/events: too many event streams are open (2000)");
  // the trouble stops: the three counted are still told (before: only if another came after the minute)
  await settle(250);
  expect(lines).toHaveLength(3);
  expect(lines[2]).toBe("503 to GET /v1/cards/card_2: the disk is full; nothing was written to /x/.cards/cards.db (the latest of 3 like it in the last 1 s)");
  // and nothing more while none comes
  await settle(200);
  expect(lines).toHaveLength(3);
  // a later one, after a quiet window, is logged at once again
  seen(req("/v1/cards"), unavailable("the disk is full; nothing was written to /w/.cards/cards.db"));
  await settle();
  expect(lines).toHaveLength(4);
  expect(lines[3]).toBe("503 to GET /v1/cards: the disk is full; nothing was written to /w/.cards/cards.db");
});

test("a wall clock stepped back does not hold the next line back for the length of the step (the window is on the monotonic clock)", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 150);
  const req = new Request("http://127.0.0.1/v1/cards");
  try {
    seen(req, unavailable("the disk is full; nothing was written to /w/.cards/cards.db"));
    await settle(200);
    setSystemTime(new Date(Date.now() - 3_600_000));
    seen(req, unavailable("the disk is full; nothing was written to /w/.cards/cards.db"));
    await settle();
    expect(lines).toHaveLength(2);
  } finally {
    setSystemTime();
  }
});

test("trouble that goes on is one line per window", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 100);
  const until = Date.now() + 450;
  while (Date.now() < until) {
    seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable("the disk is full"));
    await settle(10);
  }
  await settle(150);
  // the first at once, then one per 100 ms window: 4 or 5 more, never one per answer
  expect(lines.length).toBeGreaterThanOrEqual(4);
  expect(lines.length).toBeLessThanOrEqual(7);
  expect(lines.slice(1).every((l) => /^503 to POST \/v1\/cards: the disk is full \(the latest of \d+ like it in the last 1 s\)$/.test(l))).toBe(true);
});

test("flush tells the counts not told yet, as a server stops (before: the last window's were lost)", async () => {
  const lines: string[] = [];
  const trouble = serverTrouble((m) => lines.push(m), 60_000);
  for (let i = 0; i < 5; i++) trouble.seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable("the disk is full"));
  await settle();
  expect(lines).toEqual(["503 to POST /v1/cards: the disk is full"]);
  trouble.flush();
  expect(lines).toEqual(["503 to POST /v1/cards: the disk is full", "503 to POST /v1/cards: the disk is full (the latest of 4 like it in the last 1 s)"]);
  trouble.flush(); // nothing left to tell
  expect(lines).toHaveLength(2);
});

test("a 503 the app built is noted before the answer leaves: flush right after tells it (before: its body was parsed later, and lost at shutdown)", () => {
  const lines: string[] = [];
  const trouble = serverTrouble((m) => lines.push(m), 60_000);
  const built = () => toResponse({ status: 503, body: { error: "unavailable", message: "the disk is full" } });
  for (let i = 0; i < 3; i++) trouble.seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), built());
  // a HEAD's answer has no body to parse: its message travels with the response
  const head = new Request("http://127.0.0.1/v1/health", { method: "HEAD" });
  trouble.seen(head, new Response(null, { status: 503 }));
  trouble.flush();
  expect(lines).toEqual(["503 to POST /v1/cards: the disk is full", "503 to POST /v1/cards: the disk is full (the latest of 2 like it in the last 1 s)"]);
});

test("a 503 whose body cannot be read is still logged (a HEAD's was dropped)", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 60_000);
  seen(new Request("http://127.0.0.1/v1/health", { method: "HEAD" }), new Response(null, { status: 503 }));
  await settle();
  expect(lines).toEqual(["503 to HEAD /v1/health: unavailable"]);
});

test("HEAD /v1/health answering 503 is logged with its cause, as GET's is (before: its empty body was parsed and the line dropped)", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  const lines: string[] = [];
  const app = createHttpApp(svc, { trouble: serverTrouble((m) => lines.push(m), 60_000) });
  try {
    expect((await app.fetch(new Request("http://127.0.0.1/v1/health", { method: "HEAD" }))).status).toBe(200);
    // a newer cards migrates the file under the server
    const other = new Database(join(dir, ".cards/cards.db"));
    other.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    other.close();
    const r = await app.fetch(new Request("http://127.0.0.1/v1/health", { method: "HEAD" }));
    expect([r.status, await r.text()]).toEqual([503, ""]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`503 to HEAD /v1/health: ${join(dir, ".cards/cards.db")} was migrated to schema ${MIGRATIONS.length + 1} by another version of cards`);
  } finally {
    svc.close();
  }
});

test("after a window's count is told, the next window counts from none (before: the told ones were counted again)", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 100);
  const post = () => seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable("the disk is full"));
  post();
  for (let i = 0; i < 3; i++) post();
  await settle(150);
  expect(lines[1]).toMatch(/\(the latest of 3 like it in/);
  post(); // within the window that the count opened
  await settle(150);
  expect(lines).toHaveLength(3);
  expect(lines[2]).toMatch(/\(the latest of 1 like it in/);
});

test("the count is told when its window ends, whenever in the window the first of it came (before: a window after it)", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 300);
  const post = () => seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable("the disk is full"));
  post();
  await settle(200);
  post(); // late in the window
  await settle(180); // the window ended ~80 ms ago (a timer started anew would run ~120 ms from now)
  expect(lines).toEqual(["503 to POST /v1/cards: the disk is full", "503 to POST /v1/cards: the disk is full (the latest of 1 like it in the last 1 s)"]);
});

test("a count whose timer is late (a busy server) is told before the next window starts, not lost", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 100);
  const post = () => seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable("the disk is full"));
  post();
  post();
  post();
  await settle();
  expect(lines).toHaveLength(1);
  // the event loop is held past the window: the timer cannot run before the next answer is seen
  for (const end = Date.now() + 150; Date.now() < end;) { /* busy */ }
  post();
  await settle(250);
  expect(lines).toEqual([
    "503 to POST /v1/cards: the disk is full",
    expect.stringMatching(/^503 to POST \/v1\/cards: the disk is full \(the latest of 2 like it in the last 1 s\)$/),
    expect.stringMatching(/^503 to POST \/v1\/cards: the disk is full \(the latest of 1 like it in the last 1 s\)$/),
  ]);
});

test("past 64 kinds the ones whose window is over are forgotten, never one whose count is still to be told", async () => {
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 100);
  const post = (message: string) => seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable(message));
  const letters = (i: number) => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + Math.floor(i / 26));
  for (let i = 0; i < 64; i++) post(`trouble ${letters(i)}`);
  post("trouble aa"); // counted: its line is due when the window ends
  await settle(0); // each noted (their messages are read from the bodies)
  expect(lines).toHaveLength(64);
  // a busy server: the window ends while the count's timer has not run yet
  const until = Date.now() + 130;
  while (Date.now() < until) { /* busy */ }
  post("a new kind"); // the 65th: the old kinds are forgotten, the counted one kept
  await settle(150);
  expect(lines).toHaveLength(66);
  expect(lines[64]).toBe("503 to POST /v1/cards: a new kind");
  expect(lines[65]).toBe("503 to POST /v1/cards: trouble aa (the latest of 1 like it in the last 1 s)");
});

test("past 64 kinds, a kind whose count is not told yet, or whose window is still open, is kept: no count lost, none logged twice within its window", async () => {
  const name = (i: number) => `trouble ${String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26))}`;
  const post = (seen: ReturnType<typeof serverTrouble>["seen"], message: string) => seen(new Request("http://127.0.0.1/v1/cards", { method: "POST" }), unavailable(message));
  // 64 kinds, each with one counted after it: their counts wait for timers the busy loop holds back
  const lines: string[] = [];
  const { seen } = serverTrouble((m) => lines.push(m), 100);
  for (let i = 0; i < 64; i++) { post(seen, name(i)); post(seen, name(i)); }
  await settle(0);
  expect(lines).toHaveLength(64);
  for (const end = Date.now() + 150; Date.now() < end;) { /* busy */ }
  post(seen, name(64)); // a 65th kind
  await settle(50);
  expect(lines.filter((l) => l.endsWith("(the latest of 1 like it in the last 1 s)"))).toHaveLength(64);
  // 64 kinds within their window, none counted yet: a 65th does not make the first forget its window
  const open: string[] = [];
  const trouble = serverTrouble((m) => open.push(m), 60_000);
  for (let i = 0; i < 65; i++) post(trouble.seen, name(i));
  post(trouble.seen, name(0));
  await settle();
  expect(open).toHaveLength(65);
  trouble.flush();
  expect(open.slice(65)).toEqual([`503 to POST /v1/cards: ${name(0)} (the latest of 1 like it in the last 1 s)`]);
});
