/**
 * `cards events --follow`: live events as JSON Lines, embedded (the workspace feed, which
 * sees other processes' writes) and remote (the server's SSE stream), with --since's
 * replay first; `--jsonl` for a page of the feed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanEnv, run, serve, type Server } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";

/** Starts a follower; `lines` fills as it prints. */
function follow(dir: string, args: string[], env: Record<string, string | undefined> = {}) {
  const p = Bun.spawn([BIN, "events", "--follow", ...args], { cwd: dir, env: cleanEnv(env), stdout: "pipe", stderr: "pipe" });
  const lines: any[] = [];
  void (async () => {
    let buf = "";
    for await (const chunk of p.stdout) {
      buf += new TextDecoder().decode(chunk);
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); }
    }
  })();
  return {
    lines,
    async waitFor(pred: (lines: any[]) => boolean, ms = 5000): Promise<void> {
      const end = Date.now() + ms;
      while (!pred(lines)) {
        if (Date.now() > end) throw new Error(`timed out with ${lines.length} lines`);
        await Bun.sleep(20);
      }
    },
    stop: async () => { p.kill(); await p.exited; },
    kill: (sig: NodeJS.Signals) => p.kill(sig),
    exited: () => p.exited,
    signal: () => p.signalCode,
  };
}

describe("cards events --follow", () => {
  let dir: string;
  let server: Server;
  beforeAll(async () => {
    dir = makeWorkspace();
    run(["cards", "create", "--type", "task", "--title", "before"], { cwd: dir });
    server = await serve(dir);
  });
  afterAll(async () => { await server?.stop(); });

  for (const mode of ["embedded", "remote"] as const) {
    test(`${mode}: --since replays, then another process's write arrives live, filtered by --types`, async () => {
      const env = mode === "remote" ? { CARDS_URL: server.url } : {};
      const f = follow(dir, ["--since", "0", "--types", "card_created,comment_added"], env);
      try {
        await f.waitFor((l) => l.length >= 1);
        expect(f.lines[0]).toMatchObject({ id: "000000000001", type: "card_created" });
        // written by a separate embedded CLI process while the follower runs
        const c = run(["cards", "create", "--type", "task", "--title", `live ${mode}`], { cwd: dir }).json;
        run(["cards", "comments", "add", c.id, "note"], { cwd: dir });
        run(["cards", "patch", c.id, "--version", "1", "--title", "renamed"], { cwd: dir });
        await f.waitFor((l) => l.filter((x) => x.card_id === c.id).length >= 2);
        await Bun.sleep(300); // nothing else of this card may follow (the patch is filtered out)
        const mine = f.lines.filter((l) => l.card_id === c.id);
        expect(mine.map((l) => l.type)).toEqual(["card_created", "comment_added"]);
        expect(f.lines.every((l) => l.type === "card_created" || l.type === "comment_added")).toBe(true);
      } finally {
        await f.stop();
      }
    });
  }

  test("remote: a base URL ending in /v1 works; a server that is not cards is `unavailable`, not a silent retry loop", async () => {
    const f = follow(dir, ["--since", "0", "--types", "card_created"], { CARDS_URL: `${server.url}/v1` });
    try {
      await f.waitFor((l) => l.length >= 1);
      expect(f.lines[0].type).toBe("card_created");
    } finally {
      await f.stop();
    }
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<html></html>", { headers: { "content-type": "text/html" } }) });
    try {
      const p = Bun.spawn([BIN, "events", "--follow"], { cwd: dir, env: cleanEnv({ CARDS_URL: `http://127.0.0.1:${other.port}` }), stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect(code).toBe(7);
      expect(JSON.parse(stderr)).toMatchObject({ error: "unavailable", message: expect.stringContaining("not a cards server") });
    } finally {
      other.stop(true);
    }
  });

  test("remote: a lost server is said on stderr, and after --reconnect-for seconds the follower exits 7", async () => {
    const own = await serve(makeWorkspace());
    const p = Bun.spawn([BIN, "events", "--follow", "--since", "0", "--reconnect-for", "1"], { env: cleanEnv({ CARDS_URL: own.url }), stdout: "pipe", stderr: "pipe" });
    const stdout = new Response(p.stdout).text();
    try {
      await Bun.sleep(500);
      await own.stop();
      // before: it retried forever, saying nothing
      const [code, stderr] = await Promise.race([
        Promise.all([p.exited, new Response(p.stderr).text()]),
        Bun.sleep(15_000).then(() => [-1, "still running"] as const),
      ]);
      const lines = String(stderr).trim().split("\n");
      expect(code).toBe(7);
      expect(lines[0]).toBe(`cards: the stream from ${own.url} ended; reconnecting after event 0`);
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ error: "unavailable", message: expect.stringContaining(`lost ${own.url} and could not reconnect for 1 s`) });
      expect(await stdout).toBe(""); // the notices never reach stdout
    } finally {
      p.kill();
      await own.stop();
    }
  });

  test("remote: a proxy's 502 while the server is down counts as lost; the follower resumes once it is back", async () => {
    const own = await serve(makeWorkspace());
    let down = false;
    const cuts = new Set<() => void>();
    // a reverse proxy in front of the server, as a deployment would have: while the
    // server is "down" it answers 502 itself, and the open stream is cut
    const proxy = Bun.serve({
      port: 0, hostname: "127.0.0.1", idleTimeout: 0,
      async fetch(req) {
        if (down) return new Response("<html>502 Bad Gateway</html>", { status: 502, headers: { "content-type": "text/html" } });
        const u = new URL(req.url);
        const res = await fetch(`${own.url}${u.pathname}${u.search}`, { headers: req.headers });
        const reader = res.body!.getReader();
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            cuts.add(() => { void reader.cancel().catch(() => {}); try { controller.close(); } catch { /* closed */ } });
          },
          async pull(controller) {
            const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
            if (done) { try { controller.close(); } catch { /* cut */ } } else controller.enqueue(value);
          },
        });
        return new Response(body, { status: res.status, headers: res.headers });
      },
    });
    const base = `http://127.0.0.1:${proxy.port}`;
    const p = Bun.spawn([BIN, "events", "--follow", "--types", "card_created", "--reconnect-for", "20"], { env: cleanEnv({ CARDS_URL: base }), stdout: "pipe", stderr: "pipe" });
    const out: string[] = [];
    void (async () => { for await (const c of p.stdout) out.push(new TextDecoder().decode(c)); })();
    const err: string[] = [];
    void (async () => { for await (const c of p.stderr) err.push(new TextDecoder().decode(c)); })();
    const create = (title: string) => fetch(`${own.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "tester" }, body: JSON.stringify({ type_id: "task", title }) });
    const until = async (pred: () => boolean, what: string) => {
      const end = Date.now() + 10_000;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stderr: ${err.join("")}`);
        await Bun.sleep(25);
      }
    };
    try {
      await Bun.sleep(500);
      await create("first");
      await until(() => out.join("").includes('"first"'), "the first card");
      down = true;
      for (const cut of cuts) cut();
      await until(() => err.join("").includes("ended; reconnecting"), "the lost notice");
      await Bun.sleep(1500); // several reconnects meet the proxy's 502
      expect(p.exitCode).toBeNull(); // before: the first 502 ended the follower ("not an event stream")
      down = false;
      await until(() => err.join("").includes(`reconnected to ${base}`), "the reconnect");
      await create("second");
      await until(() => out.join("").includes('"second"'), "the second card");
    } finally {
      p.kill();
      await p.exited;
      proxy.stop(true);
      await own.stop();
    }
  }, 30_000);

  test("SIGINT and SIGTERM end a follower with exit 0 in both modes", async () => {
    for (const env of [{}, { CARDS_URL: server.url }]) {
      for (const sig of ["SIGINT", "SIGTERM"] as const) {
        const f = follow(dir, ["--since", "0"], env);
        await f.waitFor((l) => l.length >= 1);
        f.kill(sig);
        expect([await f.exited(), f.signal()]).toEqual([0, null]); // before, remote: killed by the signal
      }
    }
  });

  test("remote: every durable event written while the server was down arrives, more than the stream's 500 too, for a follower that printed nothing yet", async () => {
    const ws = makeWorkspace();
    const first = await serve(ws);
    const port = new URL(first.url).port;
    const f = follow(ws, ["--types", "card_created", "--reconnect-for", "30"], { CARDS_URL: first.url });
    let second: Server | undefined;
    try {
      await Bun.sleep(600); // connected, nothing printed
      await first.stop();
      // another process writes while no server runs: 620 cards
      const { openTestService } = await import("../helpers/workspace.ts");
      const { createCard } = await import("../../src/service/index.ts");
      const svc = await openTestService(ws, "embedded");
      for (let i = 0; i < 620; i++) await createCard(svc, { type_id: "task", title: `while down ${i}` }, { actor: "ada" } as never);
      svc.close();
      second = await serve(ws, {}, ["--port", port]);
      // before: 0 (no resume point: the new stream started live) or 500 (the replay's bound)
      await f.waitFor((l) => l.length >= 620, 20_000);
      await Bun.sleep(300);
      expect(f.lines.length).toBe(620);
      expect(new Set(f.lines.map((e) => e.diff.card.title)).size).toBe(620);
      const ids = f.lines.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      // an id past the log's end is refused, not a stream that stays silent
      const ahead = await fetch(`${second.url}/v1/events/stream`, { headers: { "last-event-id": "999999999999" } });
      expect(ahead.status).toBe(400);
      expect(((await ahead.json()) as any).hint).toContain("since=");
    } finally {
      await f.stop();
      await second?.stop();
    }
  }, 60_000);

  test("remote: a deleted card's 600 events replay on its board, and the follower goes live after them", async () => {
    const ws = makeWorkspace();
    const { openTestService } = await import("../helpers/workspace.ts");
    const { createCard, deleteCard, patchCard } = await import("../../src/service/index.ts");
    const svc = await openTestService(ws, "embedded");
    const ada = { actor: "ada" } as never;
    let card = await createCard(svc, { type_id: "task", title: "busy" }, ada);
    for (let i = 0; i < 600; i++) card = await patchCard(svc, card.id, { version: card.version, title: `busy ${i}` }, ada);
    await deleteCard(svc, card.id, card.version, ada);
    svc.close();
    const srv = await serve(ws);
    // before: the stream sent 500 rows none of which passed the board filter (the card is
    // gone), and the follower asked for the same 500 again, forever, never going live
    const f = follow(ws, ["--board", "main", "--since", "000000000001"], { CARDS_URL: srv.url });
    try {
      await f.waitFor((l) => l.length >= 601, 20_000);
      const fresh = await fetch(`${srv.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: "live after" }) }).then((r) => r.json() as Promise<any>);
      await f.waitFor((l) => l.some((e) => e.card_id === fresh.id), 10_000);
      expect(f.lines.filter((e) => e.card_id === card.id).length).toBe(601); // 600 updates, the delete
    } finally {
      await f.stop();
      await srv.stop();
    }
  }, 60_000);

  test("usage: --follow takes no --cursor (exit 2); an unknown type is refused before following (exit 5)", () => {
    expect(run(["events", "--follow", "--cursor", "1"], { cwd: dir }).code).toBe(2);
    const bad = run(["events", "--follow", "--types", "nope"], { cwd: dir });
    expect(bad.code).toBe(5);
    expect(bad.error).toMatchObject({ error: "validation_failed", field: "types" });
  });

  test("--jsonl prints a page of the feed one event per line", () => {
    const r = run(["events", "--jsonl", "--limit", "2"], { cwd: dir });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(["000000000001", "000000000002"]);
  });
});
