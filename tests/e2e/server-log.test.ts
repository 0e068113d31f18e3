/**
 * What `cards serve` tells its operator (docs/cli.md, "What the log says when something is
 * wrong"): a 500 is one line naming the request; 503s (the database damaged, the disk
 * full) are logged, each kind once a minute; a refused set of definitions is logged,
 * whoever tried it. Before, the 500 was ~18 lines of minified source and the rest nothing.
 */
import { expect, test } from "bun:test";
import { openSync, writeSync, closeSync, writeFileSync, rmSync, existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { assertBinary, serve } from "../helpers/binary.ts";
import { editJson, makeWorkspace } from "../helpers/workspace.ts";

const json = (actor = "ada") => ({ "content-type": "application/json", "x-service-actor": actor });
const waitFor = async (cond: () => boolean, ms = 3000) => { for (const end = Date.now() + ms; !cond() && Date.now() < end;) await Bun.sleep(25); };

/** A workspace of 30 cards whose cards table's pages are then damaged (served afresh, no page of it is cached yet). */
async function damagedWorkspace(): Promise<string> {
  const dir = makeWorkspace();
  const first = await serve(dir);
  for (let i = 0; i < 30; i++) await fetch(`${first.url}/v1/cards`, { method: "POST", headers: json(), body: JSON.stringify({ type_id: "task", title: `card ${i} ${"words ".repeat(200)}` }) });
  await first.stop();
  // damage the cards table's pages, before it is served again
  const fd = openSync(join(dir, ".cards/cards.db"), "r+");
  for (let page = 3; page < 12; page++) writeSync(fd, Buffer.alloc(4096, 0xde), 0, 4096, page * 4096);
  closeSync(fd);
  return dir;
}

test("an internal error is one log line naming the request; its stack only with CARDS_DEBUG=1", async () => {
  assertBinary();
  for (const debug of [false, true]) {
    const dir = makeWorkspace();
    const srv = await serve(dir, debug ? { CARDS_DEBUG: "1" } : {});
    try {
      const card = await (await fetch(`${srv.url}/v1/cards`, { method: "POST", headers: json(), body: JSON.stringify({ type_id: "task", title: "x" }) })).json();
      // the artifact store's folder is a file: no rule expects that
      rmSync(join(dir, ".cards/artifacts"), { recursive: true, force: true });
      writeFileSync(join(dir, ".cards/artifacts"), "");
      const r = await fetch(`${srv.url}/v1/cards/${card.id}/artifacts/output`, { method: "POST", headers: { "x-service-actor": "ada", "content-type": "text/plain" }, body: "hello" });
      expect(r.status).toBe(500);
      await waitFor(() => srv.log().includes("internal error"));
      const lines = srv.log().split("\n").filter((l) => l && !l.startsWith("listening on"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`[error] internal error in POST /v1/cards/${card.id}/artifacts/output: `);
      expect(lines[0]!.includes(" < ")).toBe(debug); // the stack's frames, on the same line
    } finally {
      await srv.stop();
    }
  }
});

test("503s are logged: the first of a kind, then not again within the minute; a refused reload is logged", async () => {
  assertBinary();
  const dir = await damagedWorkspace();
  const srv = await serve(dir);
  try {
    // a definitions edit that fails validation, reloaded on request: refused, and said so
    editJson(dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = -1; });
    expect((await fetch(`${srv.url}/v1/workspace/reload`, { method: "POST", headers: json(), body: "{}" })).status).toBe(422);
    await waitFor(() => srv.log().includes("definitions refused"));
    expect(srv.log()).toMatch(/\[warn\] definitions refused, the previous ones stay live: 1 problem\(s\); the first: definitions\/boards\/main\.json wip_limits\.doing: /);
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push((await fetch(`${srv.url}/v1/cards?limit=200`)).status);
    expect(answers).toContain(503);
    await waitFor(() => srv.log().includes("503 to GET /v1/cards"));
    expect(srv.log().match(/\[error\] 503 to GET \/v1\/cards: /g)).toHaveLength(1);
  } finally {
    await srv.stop();
  }
});

test("the same refused set is logged again after a set that loaded (before: once for the server's life)", async () => {
  assertBinary();
  const dir = makeWorkspace();
  const srv = await serve(dir);
  try {
    const reload = () => fetch(`${srv.url}/v1/workspace/reload`, { method: "POST", headers: json(), body: "{}" });
    const refusals = () => srv.log().match(/definitions refused/g)?.length ?? 0;
    editJson(dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = -1; });
    expect((await reload()).status).toBe(422);
    await waitFor(() => refusals() === 1);
    expect((await reload()).status).toBe(422); // the same set again: already told
    editJson(dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 7; });
    expect((await reload()).status).toBe(200);
    editJson(dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = -1; });
    expect((await reload()).status).toBe(422);
    await waitFor(() => refusals() === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(refusals()).toBe(2);
  } finally {
    await srv.stop();
  }
});

test("--access-log (or CARDS_ACCESS_LOG=1) logs one line per answer: method, path and query, status, time, actor; without it, none", async () => {
  assertBinary();
  for (const how of ["flag", "env", "off"] as const) {
    const dir = makeWorkspace();
    const srv = await serve(dir, how === "env" ? { CARDS_ACCESS_LOG: "1" } : {}, how === "flag" ? ["--access-log"] : []);
    try {
      expect((await fetch(`${srv.url}/v1/cards`, { method: "POST", headers: json("agent-1"), body: JSON.stringify({ type_id: "task", title: "logged" }) })).status).toBe(201);
      expect((await fetch(`${srv.url}/v1/cards?status=todo&limit=5`)).status).toBe(200);
      expect((await fetch(`${srv.url}/v1/nothing-here`)).status).toBe(404);
      // a Host that is no host and port: answered 400, and still one line
      const bad = await fetch(`${srv.url}/v1/health`, { headers: { host: "127.0.0.1:99999" } });
      expect(bad.status).toBe(400);
      if (how === "off") {
        await Bun.sleep(100);
        expect(srv.log()).not.toMatch(/ ms (-|agent-1)$/m);
        continue;
      }
      await waitFor(() => (srv.log().match(/\[info\] \S+ \S+ \d{3} \d+\.\d ms \S+/g) ?? []).length >= 4);
      const lines = srv.log().match(/\[info\] \S+ \S+ \d{3} \d+\.\d ms \S+/g) ?? [];
      expect(lines.map((l) => l.replace(/\d+\.\d ms/, "T ms"))).toEqual([
        "[info] POST /v1/cards 201 T ms agent-1",
        "[info] GET /v1/cards?status=todo&limit=5 200 T ms -",
        "[info] GET /v1/nothing-here 404 T ms -",
        expect.stringMatching(/^\[info\] GET \S*health 400 T ms -$/),
      ]);
    } finally {
      await srv.stop();
    }
  }
});

test("the access log writes control characters of an actor as escapes: a line stays one line and reaches a terminal inert", async () => {
  assertBinary();
  const dir = makeWorkspace();
  const srv = await serve(dir, {}, ["--access-log"]);
  try {
    // bytes 0x80-0x9f arrive as C1 controls (CSI, NEL); a tab arrives as sent
    const { port } = new URL(srv.url);
    const sock = connect(Number(port), "127.0.0.1");
    let answer = "";
    sock.on("data", (d) => { answer += d; });
    sock.write(Buffer.concat([
      Buffer.from("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Service-Actor: a\tb"),
      Buffer.from([0x9b, 0x85]),
      Buffer.from("c\r\nConnection: close\r\n\r\n"),
    ]));
    await new Promise((r) => sock.on("close", r));
    expect(answer).toStartWith("HTTP/1.1 200");
    await waitFor(() => srv.log().includes("GET /v1/health 200"));
    const line = srv.log().split("\n").find((l) => l.includes("GET /v1/health 200"));
    expect(line).toMatch(/^\[info\] GET \/v1\/health 200 \d+\.\d ms a\\u0009b\\u009b\\u0085c$/);
  } finally {
    await srv.stop();
  }
});

test("CARDS_ACCESS_LOG set to anything but 1 (0, off) leaves the access log off", async () => {
  assertBinary();
  const dir = makeWorkspace();
  const srv = await serve(dir, { CARDS_ACCESS_LOG: "0" });
  try {
    expect((await fetch(`${srv.url}/v1/health`, { headers: { "x-service-actor": "agent-1" } })).status).toBe(200);
    await Bun.sleep(100);
    expect(srv.log()).not.toContain("GET /v1/health");
  } finally {
    await srv.stop();
  }
});

test("503s counted and not told yet are told as the server stops (before: lost with the process)", async () => {
  assertBinary();
  const dir = await damagedWorkspace();
  const srv = await serve(dir);
  let stopped = false;
  try {
    const answers: number[] = [];
    for (let i = 0; i < 4; i++) answers.push((await fetch(`${srv.url}/v1/cards?limit=200`)).status);
    expect(answers.filter((s) => s === 503).length).toBeGreaterThanOrEqual(2);
    await waitFor(() => srv.log().includes("503 to GET /v1/cards"));
    await Bun.sleep(100); // the later ones are counted (each read from the answer's body)
    expect(srv.log()).not.toContain(" like it in the last ");
    await srv.stop();
    stopped = true;
    await waitFor(() => srv.log().includes(" like it in the last "));
    expect(srv.log()).toMatch(/\[error\] 503 to GET \/v1\/cards: .* \(the latest of \d+ like it in the last \d+ s\)/);
  } finally {
    if (!stopped) await srv.stop();
  }
});

test("a server starting beside a live one that supervises services warns about it in its log", async () => {
  assertBinary();
  const dir = makeWorkspace((f) => {
    f["definitions/extensions.yaml"] = JSON.stringify([{ id: "keeper", kind: "service", run: ["/bin/sh", "-c", "exec sleep 4242"] }]);
  });
  const first = await serve(dir);
  try {
    await waitFor(() => existsSync(join(dir, ".cards/services")) && readdirSync(join(dir, ".cards/services")).length > 0);
    const second = await serve(dir);
    try {
      await waitFor(() => second.log().includes("another cards serve"));
      expect(second.log()).toMatch(new RegExp(`\\[warn\\] another cards serve on this workspace \\(pid ${first.proc.pid}\\) supervises services too: each server runs its own copy of keeper`));
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop();
  }
});
