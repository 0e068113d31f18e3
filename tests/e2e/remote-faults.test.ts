/**
 * The remote CLI (CARDS_URL / --url) where the network or what stands in front of the
 * server misbehaves: a proxy's own JSON errors, redirects, a server that never answers,
 * a body that is not JSON, an answer lost after the write was applied. Each is one
 * envelope on stderr with a non-zero exit, and a write that may have been applied says so
 * and names the Idempotency-Key that makes its retry safe.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, connect, type Server as NetServer, type Socket } from "node:net";
import { assertBinary, cleanEnv, serve, type Server } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";
import { excerpt, proxyFor, remoteRequest, withoutPassword } from "../../src/cli/remote.ts";

/** Runs the binary without blocking this process (the fake servers below live in it). */
async function cards(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderrLines: string[]; error: any }> {
  const p = Bun.spawn([BIN, ...args], { env: cleanEnv({ CARDS_ACTOR: "ada", ...env }), stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const stderrLines = stderr.trim().split("\n").filter(Boolean);
  let error: any;
  try { error = JSON.parse(stderrLines.at(-1) ?? ""); } catch { /* none */ }
  return { code, stdout, stderrLines, error };
}

/** A server that answers every request with `res()`. */
function fake(res: (req: Request) => Response | Promise<Response>) {
  // idleTimeout 0: Bun would end a silent stream after 10 s itself
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 0, fetch: res });
  return { url: `http://127.0.0.1:${s.port}`, stop: () => s.stop(true) };
}

let dir: string;
let server: Server;
const titles = async (): Promise<string[]> => ((await (await fetch(`${server.url}/v1/cards?limit=200`)).json()) as any).items.map((c: any) => c.title);

beforeAll(async () => {
  assertBinary();
  dir = makeWorkspace();
  server = await serve(dir);
});
afterAll(async () => { await server.stop(); });

describe("a proxy's own answers", () => {
  test("a JSON error that is not a cards error is `unavailable`, exit 7, one line, no stack (before: exit 0, or a stack and exit 1)", async () => {
    const cases: Array<[number, unknown]> = [[502, { error: "bad gateway", message: "" }], [503, { message: "no healthy upstream" }], [404, { message: "Not Found" }], [500, { type: "about:blank", title: "oops" }], [400, { message: "Bad Request" }], [404, { error: "not_found" }]];
    for (const [status, body] of cases) {
      const proxy = fake(() => Response.json(body, { status }));
      try {
        for (const args of [["health"], ["cards", "create", "--type", "task", "--title", "x"], ["api", "GET", "/workspace"]]) {
          const r = await cards(["--url", proxy.url, ...args]);
          expect([status, args[0], r.code, r.stderrLines.length, r.error?.error]).toEqual([status, args[0], 7, 1, "unavailable"]);
          expect(r.stdout).toBe("");
        }
      } finally {
        proxy.stop();
      }
    }
  });

  test("a 429 says rate limited and when to retry", async () => {
    const proxy = fake(() => new Response("slow down", { status: 429, headers: { "retry-after": "5" } }));
    try {
      const r = await cards(["--url", proxy.url, "cards", "list"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toContain("is rate limited");
      expect(r.error.hint).toBe("retry after 5 s (Retry-After)");
    } finally {
      proxy.stop();
    }
  });

  test("a redirect is not followed: a write is never sent on as a GET (before: exit 0 and nothing written)", async () => {
    for (const status of [301, 302, 303, 307]) {
      const proxy = fake((req) => Response.redirect(`${server.url}${new URL(req.url).pathname}`, status));
      try {
        const r = await cards(["--url", proxy.url, "cards", "create", "--type", "task", "--title", `redirected ${status}`]);
        expect([status, r.code, r.error?.error]).toEqual([status, 7, "unavailable"]);
        expect(r.error.message).toContain(`with a redirect (${status} to ${server.url}/v1/cards)`);
        expect(r.error.hint).toContain("set CARDS_URL / --url to the address it redirects to");
      } finally {
        proxy.stop();
      }
    }
    // a password in the Location is not shown
    const secret = fake(() => new Response(null, { status: 307, headers: { location: "http://agent:s3cret@127.0.0.1:9/v1/cards" } }));
    try {
      const r = await cards(["--url", secret.url, "cards", "create", "--type", "task", "--title", "redirected 307"]);
      expect(r.error.message).toContain("with a redirect (307 to http://agent:***@127.0.0.1:9/v1/cards)");
      expect(JSON.stringify(r.error)).not.toContain("s3cret");
    } finally {
      secret.stop();
    }
    // a 300 (Multiple Choices) is a redirect too, also when its body is JSON
    const choices = fake(() => Response.json({ id: "card_0000000000000000" }, { status: 300, headers: { location: `${server.url}/v1/cards` } }));
    try {
      const r = await cards(["--url", choices.url, "cards", "create", "--type", "task", "--title", "redirected 300"]);
      expect([r.code, r.error?.error, r.stdout]).toEqual([7, "unavailable", ""]);
      expect(r.error.message).toContain(`with a redirect (300 to ${server.url}/v1/cards)`);
    } finally {
      choices.stop();
    }
    expect((await titles()).filter((t) => t.startsWith("redirected"))).toEqual([]);
  });

  test("a proxy's 5xx to a write says it may have been applied and names the key to retry with; to a read it says no such thing", async () => {
    for (const status of [500, 502, 504]) {
      const proxy = fake(() => new Response("upstream went away", { status, headers: { "content-type": "text/plain" } }));
      try {
        const w = await cards(["--url", proxy.url, "cards", "create", "--type", "task", "--title", "x"]);
        expect([status, w.code, w.error.error]).toEqual([status, 7, "unavailable"]);
        expect(w.error.message).toBe(`${proxy.url} (or a proxy in front of it): POST /v1/cards answered ${status} text/plain; the write may have been applied`);
        expect(w.error.hint).toMatch(/^retry with --idempotency-key cli-[0-9a-f-]{36}: /);
        const r = await cards(["--url", proxy.url, "cards", "list"]);
        expect([status, r.code, r.error.error]).toEqual([status, 7, "unavailable"]);
        expect(r.error.message).toBe(`${proxy.url} (or a proxy in front of it): GET /v1/cards answered ${status} text/plain`);
        expect(r.error.message).not.toContain("may have been applied");
      } finally {
        proxy.stop();
      }
    }
  });

  test("a 200 whose body is not JSON, or is cut short, is `unavailable` exit 7 in one line (before: a stack and exit 1, or the broken bytes and exit 0)", async () => {
    const long = `<html>${"x".repeat(200)}</html>`;
    const shown: Record<string, string> = { "{not json": '("{not json")', '{"version":"0.1.': '("{\\"version\\":\\"0.1.")', "": "(an empty body)", [long]: `(${JSON.stringify(`${long.slice(0, 120)}…`)})` };
    for (const text of Object.keys(shown)) {
      const proxy = fake(() => new Response(text, { headers: { "content-type": "application/json" } }));
      try {
        for (const args of [["health"], ["api", "GET", "/health"]]) {
          const r = await cards(["--url", proxy.url, ...args]);
          expect([text, args[0], r.code, r.stderrLines.length, r.stdout]).toEqual([text, args[0], 7, 1, ""]);
          expect(r.error.message).toBe(`${proxy.url} answered GET /v1/health with 200 and a body that is not JSON ${shown[text]}`);
        }
      } finally {
        proxy.stop();
      }
    }
  });

  test("the quoted start of a body is cut between characters, never inside an emoji's surrogate pair", () => {
    // the 120th UTF-16 unit is the first half of 🚀: a lone half printed as "\ud83d", which jq refuses
    expect(excerpt(`${"x".repeat(119)}🚀 and more`)).toBe(JSON.stringify(`${"x".repeat(119)}…`));
    expect(excerpt(`${"x".repeat(118)}🚀 and more`)).toBe(JSON.stringify(`${"x".repeat(118)}🚀…`));
  });

  test("a write's error answer cut short (JSON announced, not JSON) was a refusal: it does not say the write may have been applied", async () => {
    const proxy = fake(() => new Response('{"error":"version_conflict","mess', { status: 409, headers: { "content-type": "application/json" } }));
    try {
      const r = await cards(["--url", proxy.url, "cards", "create", "--type", "task", "--title", "x"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toStartWith(`${proxy.url} is not a cards server: POST /v1/cards answered 409 with a body that is not JSON`);
      expect(r.error.message).not.toContain("may have been applied");
    } finally {
      proxy.stop();
    }
  });
});

describe("a proxy before a server that is down", () => {
  test("a 502/504 whose body is empty or not JSON, JSON content type or not: a write may have been applied (key named); a read is told the server behind may be down (before: no key, and 'not a cards server')", async () => {
    const answers: Array<[number, string, string]> = [[502, "application/json", ""], [504, "application/json; charset=utf-8", "<html>504</html>"], [503, "text/html", "<h1>503</h1>"]];
    for (const [status, type, text] of answers) {
      const proxy = fake(() => new Response(text, { status, headers: { "content-type": type } }));
      try {
        const w = await cards(["--url", proxy.url, "cards", "create", "--type", "task", "--title", "x"]);
        expect([status, w.code, w.error.error]).toEqual([status, 7, "unavailable"]);
        expect(w.error.message).toStartWith(`${proxy.url} (or a proxy in front of it): POST /v1/cards answered ${status}`);
        expect(w.error.message).toEndWith("; the write may have been applied");
        expect(w.error.hint).toMatch(/^retry with --idempotency-key cli-[0-9a-f-]{36}: /);
        const r = await cards(["--url", proxy.url, "health"]);
        expect(r.error.message).toStartWith(`${proxy.url} (or a proxy in front of it): GET /v1/health answered ${status}`);
        expect(r.error.hint).toBe("the cards server behind it may be down: check that `cards serve` is running there, then retry; a read is safe to retry");
      } finally {
        proxy.stop();
      }
    }
  });

  test("events --follow: a proxy's JSON error is `unavailable` exit 7, and a redirect names where it points (before: exit 1 with the proxy's code)", async () => {
    const json = fake(() => Response.json({ error: "bad gateway" }, { status: 502 }));
    const moved = fake(() => new Response(null, { status: 301, headers: { location: "https://elsewhere.example/v1/events/stream" } }));
    try {
      const r = await cards(["--url", json.url, "events", "--follow"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toBe(`${json.url} (or a proxy in front of it): GET /v1/events/stream answered 502 with "{\\"error\\":\\"bad gateway\\"}", not an event stream`);
      const m = await cards(["--url", moved.url, "events", "--follow"]);
      expect([m.code, m.error.error]).toEqual([7, "unavailable"]);
      expect(m.error.message).toContain("with a redirect (301 to https://elsewhere.example/v1/events/stream)");
    } finally {
      json.stop();
      moved.stop();
    }
  });

  test("events --follow: a proxy's 429 says when to retry, from its Retry-After, as every remote call does", async () => {
    const limited = fake(() => Response.json({ message: "slow down" }, { status: 429, headers: { "retry-after": "7" } }));
    try {
      const r = await cards(["--url", limited.url, "events", "--follow"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toStartWith(`${limited.url} is rate limited: GET /v1/events/stream answered 429`);
      expect(r.error.hint).toBe("retry after 7 s (Retry-After)");
    } finally {
      limited.stop();
    }
  });
});

describe("a certificate refused", () => {
  const openssl = Bun.which("openssl");
  test.skipIf(!openssl)("nothing was sent: said so, with how to trust a private CA (before: a self-signed chain read as a write that may have been applied)", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const d = mkdtempSync(join(tmpdir(), "cards-tls-"));
    const sh = (cmd: string[]) => expect(Bun.spawnSync(cmd, { cwd: d, stderr: "pipe" }).exitCode).toBe(0);
    // a private CA and a leaf it signed, served with the chain (as a TLS-inspecting proxy does)
    sh([openssl!, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=test ca"]);
    sh([openssl!, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"]);
    await Bun.write(join(d, "ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
    sh([openssl!, "x509", "-req", "-in", "leaf.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.crt", "-days", "2", "-extfile", "ext.cnf"]);
    const chain = (await Bun.file(join(d, "leaf.crt")).text()) + (await Bun.file(join(d, "ca.crt")).text());
    const tls = Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { cert: chain, key: Bun.file(join(d, "leaf.key")) }, fetch: () => Response.json({}) });
    try {
      const r = await cards(["--url", `https://127.0.0.1:${tls.port}`, "cards", "create", "--type", "task", "--title", "x"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toStartWith(`cannot reach https://127.0.0.1:${tls.port}: its certificate was refused (SELF_SIGNED_CERT_IN_CHAIN`);
      expect(r.error.message).toEndWith("; nothing was sent");
      expect(r.error.hint).toContain("NODE_EXTRA_CA_CERTS");
      // trusted, it is reached
      const ok = await cards(["--url", `https://127.0.0.1:${tls.port}`, "health"], { NODE_EXTRA_CA_CERTS: join(d, "ca.crt") });
      expect(ok.error?.message ?? "").not.toContain("certificate");
    } finally {
      tls.stop(true);
    }
  });
});

test("with no --timeout, a call may take 60 s and an artifact's upload or download 600 s; --timeout sets both", async () => {
  const { callRaw } = await import("../../src/cli/client.ts");
  const card = await (await fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ type_id: "task", title: "limits" }) })).json() as { id: string };
  const limits = spyOn(AbortSignal, "timeout");
  try {
    const calls = async (timeout?: string): Promise<unknown[]> => {
      const g = { url: server.url, actor: "ada", env: {}, cwd: dir, ...(timeout ? { timeout } : {}) };
      limits.mockClear();
      const put = await callRaw(g, { method: "POST", path: `/cards/${card.id}/artifacts/output`, bytes: new TextEncoder().encode("limits"), contentType: "text/plain" });
      const uri = (JSON.parse(put.text) as { fields: { output: { uri: string } } }).fields.output.uri;
      const got = await callRaw(g, { method: "GET", path: `/${uri}`, wantBytes: true });
      expect(new TextDecoder().decode(got.bytes)).toBe("limits");
      expect((await callRaw(g, { method: "GET", path: "/health" })).status).toBe(200);
      return limits.mock.calls.map((c) => c[0]);
    };
    expect(await calls()).toEqual([600_000, 600_000, 60_000]);
    expect(await calls("7")).toEqual([7_000, 7_000, 7_000]);
  } finally {
    limits.mockRestore();
  }
});

describe("time", () => {
  let hang: NetServer;
  let hangUrl: string;
  const held: Socket[] = [];
  beforeAll(async () => {
    hang = createServer((c) => { held.push(c); }); // accepts, reads, never answers
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    hangUrl = `http://127.0.0.1:${(hang.address() as { port: number }).port}`;
  });
  afterAll(() => { for (const c of held) c.destroy(); hang.close(); });

  test("a server that never answers is given up after --timeout (or CARDS_TIMEOUT) seconds, exit 7 (before: 6 minutes)", async () => {
    const t0 = performance.now();
    const r = await cards(["--url", hangUrl, "--timeout", "1", "health"]);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
    expect(r.error.message).toBe(`${hangUrl} did not answer GET /v1/health within 1 s`);
    expect(r.error.hint).toContain("a read is safe to retry");
    const w = await cards(["cards", "create", "--type", "task", "--title", "x"], { CARDS_URL: hangUrl, CARDS_TIMEOUT: "0.5" });
    expect(w.error.message).toBe(`${hangUrl} did not answer POST /v1/cards within 0.5 s; the write may have been applied`);
    expect(w.error.hint).toMatch(/^retry with --idempotency-key cli-[0-9a-f-]{36}: /);
  });

  test("events --follow gives its first connection --timeout seconds too (before: no limit of its own)", async () => {
    const t0 = performance.now();
    const r = await cards(["--url", hangUrl, "--timeout", "1", "events", "--follow"]);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect([r.code, r.error.error, r.error.message]).toEqual([7, "unavailable", `cannot reach ${hangUrl}: no answer within 1 s`]);
  });

  test("a timeout that is not a number of seconds is a usage error (exit 2)", async () => {
    for (const [args, env] of [[["--timeout", "abc"], {}], [["--timeout", "0"], {}], [[], { CARDS_TIMEOUT: "-1" }], [["--timeout", "86401"], {}], [["--timeout", "1e2"], {}], [[], { CARDS_TIMEOUT: "0x10" }]] as const) {
      const r = await cards([...args, "--url", hangUrl, "health"], env);
      expect([args, env, r.code, r.error.error]).toEqual([args, env, 2, "usage"]);
    }
    // the largest a day, and a decimal
    for (const t of ["86400", "2.5"]) expect((await cards(["--timeout", t, "--url", server.url, "health"])).code).toBe(0);
  });

  test("--timeout wins over CARDS_TIMEOUT; an empty CARDS_TIMEOUT is none set", async () => {
    const r = await cards(["--url", hangUrl, "--timeout", "0.5", "health"], { CARDS_TIMEOUT: "3" });
    expect(r.error.message).toBe(`${hangUrl} did not answer GET /v1/health within 0.5 s`);
    const empty = await cards(["--url", server.url, "health"], { CARDS_TIMEOUT: "" });
    expect([empty.code, empty.stderrLines]).toEqual([0, []]);
  });
});

/** Passes each request on to the server, and hangs up on the caller once the server's answer starts. */
async function dropProxy(): Promise<{ drop: NetServer; dropUrl: string }> {
  const port = Number(new URL(server.url).port);
  const drop = createServer((c) => {
    const up = connect(port, "127.0.0.1");
    c.on("data", (d) => up.write(d));
    up.on("data", () => { c.destroy(); up.destroy(); });
    c.on("error", () => {});
    up.on("error", () => {});
  });
  await new Promise<void>((r) => drop.listen(0, "127.0.0.1", r));
  return { drop, dropUrl: `http://127.0.0.1:${(drop.address() as { port: number }).port}` };
}

describe("an answer lost after the write was applied", () => {
  test("a lost artifact upload (no key: its bytes are not in the request's hash) says to re-read the card, not to look for a card created", async () => {
    const card = await (await fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "x-service-actor": "ada" }, body: JSON.stringify({ type_id: "task", title: "upload" }) })).json() as { id: string };
    const { drop, dropUrl } = await dropProxy();
    try {
      const file = `${dir}/upload.txt`;
      await Bun.write(file, "hello");
      const r = await cards(["--url", dropUrl, "cards", "artifacts", "put", card.id, "output", file]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toEndWith("; the write may have been applied");
      expect(r.error.hint).toStartWith(`re-read the card (cards cards get ${card.id}) and check its field before uploading again; `);
    } finally {
      drop.close();
    }
  });

  test("a request fetch refuses to build (a header past Latin-1) says nothing was sent (before: \"the write may have been applied\")", async () => {
    // the CLI's own flags are checked before this (--type: a media type in ASCII, in both modes)
    const file = join(dir, "upload.txt");
    writeFileSync(file, "hello");
    const r = await cards(["--url", server.url, "cards", "artifacts", "put", "card_00000000000000aa", "output", file, "--type", "text/plain; x=\u952e"]);
    expect([r.code, r.error.error, r.error.field, r.stderrLines.length]).toEqual([5, "validation_failed", "Content-Type", 1]);
    // a header fetch cannot carry, reaching the remote client all the same
    const req = { method: "POST", path: "/cards/card_00000000000000aa/artifacts/output", query: {}, headers: { "content-type": "text/plain; x=\u952e" }, stream: new Uint8Array([104]) };
    const e = await remoteRequest(server.url, req, { timeoutS: 5 }).then(() => undefined, (err) => err);
    expect([e?.code, String(e?.message)]).toEqual(["bad_request", expect.stringMatching(/^cannot send POST \/v1\/cards\/card_00000000000000aa\/artifacts\/output: .*; nothing was sent$/)]);
  });

  test("an upload a proxy answers with a 5xx of its own (JSON or not), or that no one answers, says to re-read the card too", async () => {
    const file = `${dir}/upload-proxied.txt`;
    await Bun.write(file, "hello");
    const answers: Array<[string, () => Response | Promise<Response>]> = [
      ["a proxy's JSON", () => Response.json({ error: "bad gateway" }, { status: 502 })],
      ["JSON announced, not JSON", () => new Response("<html>bad gateway</html>", { status: 502, headers: { "content-type": "application/json" } })],
      ["no answer", () => new Promise<Response>(() => {})],
    ];
    for (const [what, answer] of answers) {
      const proxy = fake(answer);
      try {
        const r = await cards(["--url", proxy.url, "--timeout", "1", "cards", "artifacts", "put", "card_00000000000000aa", "output", file]);
        expect([what, r.code, r.error.error]).toEqual([what, 7, "unavailable"]);
        expect([what, r.error.message]).toEqual([what, expect.stringContaining("the write may have been applied")]);
        expect([what, r.error.hint]).toEqual([what, expect.stringMatching(/^re-read the card \(cards cards get card_00000000000000aa\) and check its field before uploading again; /)]);
      } finally {
        proxy.stop();
      }
    }
  });

  test("a write answered 200 with a body that is not JSON may have been applied: it says so and names the key", async () => {
    const proxy = fake(() => new Response("<html>ok</html>", { headers: { "content-type": "application/json" } }));
    try {
      const r = await cards(["--url", proxy.url, "cards", "create", "--type", "task", "--title", "x"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toBe(`${proxy.url} answered POST /v1/cards with 200 and a body that is not JSON ("<html>ok</html>"); the write may have been applied`);
      expect(r.error.hint).toMatch(/^retry with --idempotency-key cli-[0-9a-f-]{36}: /);
    } finally {
      proxy.stop();
    }
  });

  test("says it may have been applied and names the key; the retry with that key replays, and nothing is written twice", async () => {
    const { drop, dropUrl } = await dropProxy();
    try {
      const r = await cards(["--url", dropUrl, "cards", "create", "--type", "task", "--title", "applied once"]);
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      expect(r.error.message).toContain("the write may have been applied");
      const key = /--idempotency-key (cli-[0-9a-f-]{36})/.exec(r.error.hint)?.[1];
      expect(key).toBeDefined();
      expect((await titles()).filter((t) => t === "applied once")).toHaveLength(1);
      const again = await cards(["--url", server.url, "--idempotency-key", key!, "cards", "create", "--type", "task", "--title", "applied once"]);
      expect(again.code).toBe(0);
      expect((await titles()).filter((t) => t === "applied once")).toHaveLength(1);
      // a read that failed so is simply retried: no key, no warning
      const read = await cards(["--url", dropUrl, "cards", "list"]);
      expect(read.error.message).not.toContain("may have been applied");
    } finally {
      drop.close();
    }
  });

  test("a server that refuses the connection sent nothing: no warning, the usual hint", async () => {
    const r = await cards(["--url", "http://127.0.0.1:9", "cards", "create", "--type", "task", "--title", "x"]);
    expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
    expect(r.error.message).not.toContain("may have been applied");
    expect(r.error.hint).toContain("nothing was sent");
  });
});

describe("the base URL", () => {
  test("the board's address, a query, a password and a path are each told plainly", async () => {
    const ui = await cards(["--url", `${server.url}/ui/`, "health"]);
    expect([ui.code, ui.error.error, ui.error.hint]).toEqual([2, "usage", `drop /ui: ${server.url}`]);
    const query = await cards(["--url", `${server.url}?x=1`, "health"]);
    expect([query.code, query.error.error]).toEqual([2, "usage"]);
    const secret = await cards(["--url", "http://agent:s3cret@127.0.0.1:9", "health"]);
    expect(secret.error.message).toContain("http://agent:***@127.0.0.1:9");
    expect(JSON.stringify(secret.error)).not.toContain("s3cret");
    const path = await cards(["--url", `${server.url}/api`, "cards", "list"]);
    expect([path.code, path.error.error]).toEqual([3, "not_found"]);
    expect(path.error.hint).toContain(`has the path /api: the server answers under ${server.url}/v1`);
    const fragment = await cards(["--url", `${server.url}#top`, "health"]);
    expect([fragment.code, fragment.error.error, fragment.error.field]).toEqual([2, "usage", "--url"]);
  });

  test("behind a proxy that maps a path, the server's own 404s keep their own hint; a server that is not cards at a path says so", async () => {
    const mapped = fake((req) => {
      const u = new URL(req.url);
      return fetch(`${server.url}${u.pathname.replace(/^\/api/, "")}${u.search}`, { method: req.method, headers: req.headers });
    });
    const other = fake(() => new Response("<html>a wiki</html>", { headers: { "content-type": "text/html" } }));
    try {
      const missing = await cards(["--url", `${mapped.url}/api`, "cards", "get", "card_0000000000000000"]);
      expect([missing.code, missing.error.error]).toEqual([3, "not_found"]);
      expect(missing.error.hint ?? "").not.toContain("CARDS_URL");
      expect((await cards(["--url", `${mapped.url}/api`, "health"])).code).toBe(0);
      // no route at a base URL without a path: the server's hint, not one about the URL
      const route = await cards(["--url", server.url, "api", "GET", "/nothing-here"]);
      expect([route.code, route.error.error, route.error.hint]).toEqual([3, "not_found", "paths are relative to /v1; see GET /v1/openapi.json"]);
      const wiki = await cards(["--url", `${other.url}/wiki`, "health"]);
      expect([wiki.code, wiki.error.error]).toEqual([7, "unavailable"]);
      expect(wiki.error.message).toBe(`${other.url}/wiki is not a cards server: GET /v1/health answered 200 text/html`);
      expect(wiki.error.hint).toBe("CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT), without a path unless a proxy maps one");
    } finally {
      mapped.stop();
      other.stop();
    }
  });
});

test("events --follow does not follow a redirect, and sends the password of its URL (it is only hidden where shown)", async () => {
  const redirect = fake((req) => Response.redirect(`${server.url}${new URL(req.url).pathname}`, 302));
  try {
    const r = await cards(["--url", redirect.url, "--timeout", "5", "events", "--follow"]);
    expect([r.code, r.error.error, r.error.message]).toEqual([7, "unavailable", `${redirect.url} answered GET /v1/events/stream with a redirect (302 to ${server.url}/v1/events/stream); redirects are not followed, so a write is never sent on as a read`]);
  } finally {
    redirect.stop();
  }
  const auth: Array<string | null> = [];
  const guarded = fake((req) => {
    auth.push(req.headers.get("authorization"));
    return new Response("denied", { status: 401 });
  });
  try {
    const r = await cards(["--url", guarded.url.replace("://", "://agent:s3cret@"), "events", "--follow"]);
    expect([r.code, r.error.message]).toEqual([7, `${guarded.url.replace("://", "://agent:***@")} is not a cards server: GET /v1/events/stream answered 401 with "denied", not an event stream`]);
    expect(auth).toEqual([`Basic ${btoa("agent:s3cret")}`]);
  } finally {
    guarded.stop();
  }
});

test("events --follow notices a stream gone silent (no heartbeat for 45 s) and reconnects after the last event (before: it waited forever); a stream that keeps its heartbeat is kept", async () => {
  let connections = 0;
  const lastIds: Array<string | null> = [];
  const silent = fake((req) => {
    connections++;
    lastIds.push(req.headers.get("last-event-id"));
    // one event, then nothing: not even the heartbeat a live server sends every 15 s
    const body = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(`id: 7\nevent: card_created\ndata: {"id":"7"}\n\n`)); } });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  // the same event, then a heartbeat every 10 s: quiet, not dead
  let beatConnections = 0;
  const timers: Array<ReturnType<typeof setInterval>> = [];
  const beating = fake(() => {
    beatConnections++;
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(`id: 7\nevent: card_created\ndata: {"id":"7"}\n\n`));
        timers.push(setInterval(() => { try { c.enqueue(new TextEncoder().encode(": heartbeat\n\n")); } catch { /* closed */ } }, 10_000));
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const p = Bun.spawn([BIN, "--url", silent.url, "events", "--follow"], { env: cleanEnv({}), stdout: "pipe", stderr: "pipe" });
  const q = Bun.spawn([BIN, "--url", beating.url, "events", "--follow"], { env: cleanEnv({}), stdout: "pipe", stderr: "pipe" });
  try {
    const deadline = Date.now() + 55_000;
    while (connections < 2 && Date.now() < deadline) await Bun.sleep(200);
    expect(connections).toBe(2);
    expect(lastIds).toEqual([null, "7"]);
    await Bun.sleep(3000); // past 45 s for the other follower too
    expect(beatConnections).toBe(1);
  } finally {
    for (const proc of [p, q]) {
      proc.kill();
      await proc.exited;
    }
    for (const t of timers) clearInterval(t);
    silent.stop();
    beating.stop();
  }
  expect(await new Response(p.stderr).text()).toContain(`cards: the stream from ${silent.url} was silent for 45 s (no heartbeat); reconnecting after event 7`);
  expect(await new Response(q.stderr).text()).toBe("");
}, 75_000);

describe("a proxy named by the environment (HTTP_PROXY / HTTPS_PROXY)", () => {
  /** A proxy that answers every request, CONNECT included, with 407. */
  async function proxyAsking(): Promise<{ url: string; close: () => void }> {
    const srv = createServer((sock) => {
      sock.once("data", () => sock.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"));
      sock.on("error", () => {});
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, close: () => srv.close() };
  }

  test("the proxy named is as the environment gives it: HTTPS_PROXY for https, HTTP_PROXY for http, lower case too, without its password; none for a host NO_PROXY lists", () => {
    const url = "https://api.example.com:4777/v1/cards";
    const P = "http://p:1";
    expect(proxyFor(url, { HTTPS_PROXY: P, HTTP_PROXY: "http://p:2" })).toBe(P);
    expect(proxyFor(url, { https_proxy: P })).toBe(P);
    expect(proxyFor("http://api.example.com/v1", { http_proxy: P })).toBe(P);
    expect(proxyFor("http://api.example.com/v1", { HTTPS_PROXY: P })).toBeUndefined();
    expect(proxyFor(url, { HTTPS_PROXY: "http://u:secret@p:1/" })).toBe("http://u:***@p:1/");
    expect(proxyFor(url, { HTTPS_PROXY: "::not a url" })).toBe("::not a url");
    for (const no of ["*", "api.example.com", "example.com", ".example.com", "API.example.com:4777", "other.org, example.com"]) {
      expect([no, proxyFor(url, { HTTPS_PROXY: P, NO_PROXY: no })]).toEqual([no, undefined]);
    }
    expect(proxyFor("https://example.com/v1", { HTTPS_PROXY: P, no_proxy: ".example.com" })).toBeUndefined();
    for (const no of ["ample.com", "other.example.com", ""]) expect([no, proxyFor(url, { HTTPS_PROXY: P, NO_PROXY: no })]).toEqual([no, P]);
  });

  test("a proxy refusing the tunnel to an https server: nothing was sent, and it is named (before: \"the write may have been applied\")", async () => {
    const proxy = await proxyAsking();
    try {
      const r = await cards(["--url", "https://example.invalid:4777", "cards", "create", "--type", "task", "--title", "x"], { HTTPS_PROXY: proxy.url });
      expect(r.code).toBe(7);
      expect(r.error.error).toBe("unavailable");
      expect(r.error.message).toStartWith(`cannot reach https://example.invalid:4777 through the proxy ${proxy.url}: `);
      expect(r.error.message).toEndWith("; nothing was sent");
      expect(r.error.hint).toContain("NO_PROXY");
    } finally {
      proxy.close();
    }
  });

  test("a plain proxy's 407 asks for its credentials (before: \"is not a cards server\")", async () => {
    const proxy = await proxyAsking();
    try {
      const r = await cards(["--url", "http://example.invalid:4777", "cards", "create", "--type", "task", "--title", "x"], { HTTP_PROXY: proxy.url });
      expect(r.code).toBe(7);
      expect(r.error.message).toBe("a proxy between here and http://example.invalid:4777 asks for credentials: POST /v1/cards answered 407 without a content type; nothing reached the server");
      expect(r.error.hint).toContain("HTTP_PROXY=http://USER:PASS@HOST:PORT");
    } finally {
      proxy.close();
    }
  });

  test("a proxy that is down is named, not only the server (before: \"check that `cards serve` is running\")", async () => {
    const proxy = await proxyAsking();
    proxy.close();
    const r = await cards(["--url", "http://example.invalid:4777", "cards", "list"], { HTTP_PROXY: `${proxy.url.replace("http://", "http://u:secret@")}` });
    expect(r.code).toBe(7);
    expect(r.error.message).toStartWith(`cannot reach http://example.invalid:4777 through the proxy ${proxy.url.replace("http://", "http://u:***@")}: `);
    expect(r.error.hint).toStartWith("check that the proxy in HTTP_PROXY / HTTPS_PROXY is running");
    // a host NO_PROXY lists is reached directly: no proxy named
    const direct = await cards(["--url", server.url, "health"], { HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" });
    expect(direct.code).toBe(0);
  });

  test("proxyFor names the proxy Bun's fetch really uses (or none), rule by rule, checked against fetch itself (before: upper case first, HTTP_PROXY for https, NO_PROXY ports and *. ignored)", async () => {
    // two proxies and a target that record what reaches them; each case runs fetch in a
    // child process with that environment and compares where the request went
    const seen: string[] = [];
    const listen = async (tag: string) => {
      const srv = createServer((sock) => {
        sock.once("data", () => { seen.push(tag); sock.end("HTTP/1.1 599 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); });
        sock.on("error", () => {});
      });
      await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
      return { port: (srv.address() as { port: number }).port, close: () => srv.close() };
    };
    const [p1, p2, target] = [await listen("P1"), await listen("P2"), await listen("direct")];
    const P1 = `http://127.0.0.1:${p1.port}`, P2 = `http://u:pw@127.0.0.1:${p2.port}`, T = target.port;
    const local = `http://127.0.0.1:${T}/`, localTls = `https://127.0.0.1:${T}/`;
    // [url, environment, the proxy used: P1, P2 or none, what proxyFor names when not that URL];
    // a host in .invalid reached directly fails to resolve
    const cases: Array<[string, Record<string, string>, string | undefined, string?]> = [
      [local, { HTTP_PROXY: P1 }, P1],
      [local, { http_proxy: P1, HTTP_PROXY: P2 }, P1],
      [local, { http_proxy: "", HTTP_PROXY: P2 }, P2],
      [localTls, { HTTP_PROXY: P1 }, undefined],
      [localTls, { https_proxy: P1, HTTPS_PROXY: P2 }, P1],
      [local, { HTTPS_PROXY: P1 }, undefined],
      [localTls, { HTTP_PROXY: P1, ALL_PROXY: P2 }, P2],
      [local, { ALL_PROXY: `socks5://127.0.0.1:${p1.port}` }, undefined],
      [local, { HTTP_PROXY: P1, no_proxy: "example.com", NO_PROXY: "127.0.0.1" }, P1],
      [local, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.1" }, undefined],
      [local, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.1:80" }, P1],
      [local, { HTTP_PROXY: P1, NO_PROXY: `127.0.0.1:${T}` }, undefined],
      [local, { HTTP_PROXY: P1, NO_PROXY: "example.com, *" }, undefined],
      [local, { HTTP_PROXY: P1, NO_PROXY: "example.com 127.0.0.1" }, undefined],
      [local, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.0/8" }, undefined],
      [local, { HTTP_PROXY: P1, NO_PROXY: "10.0.0.0/8" }, P1],
      [local, { HTTP_PROXY: P1, NO_PROXY: "0.0.1" }, P1],
      [`http://localhost:${T}/`, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.1" }, P1],
      ["http://a.ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "*.ex.invalid" }, undefined],
      ["http://ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "*.ex.invalid" }, undefined],
      ["http://a.b.ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: ".ex.invalid" }, undefined],
      ["http://a.ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "ex.invalid" }, undefined],
      ["http://badex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "ex.invalid" }, P1],
      ["http://ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "*ex.invalid" }, P1],
      ["http://ex.invalid/", { HTTP_PROXY: P1, NO_PROXY: "ex.invalid:80" }, undefined],
      ["http://ex.invalid:81/", { HTTP_PROXY: P1, NO_PROXY: "ex.invalid:80" }, P1],
      ["https://ex.invalid/", { HTTPS_PROXY: P1, NO_PROXY: "EX.INVALID:443" }, undefined],
      ["http://ex.invalid:81/", { HTTP_PROXY: P1, NO_PROXY: "ex.invalid:abc" }, P1],
      [`http://[::1]:${T}/`, { HTTP_PROXY: P1, NO_PROXY: `[::1]:${T + 1}` }, P1],
      [`http://[::1]:${T}/`, { HTTP_PROXY: P1, NO_PROXY: "::/0" }, undefined],
      // "" and '' are none: the next variable is not read, ALL_PROXY is
      [local, { HTTP_PROXY: '""', ALL_PROXY: P2 }, P2],
      [local, { HTTP_PROXY: "''", ALL_PROXY: P2 }, P2],
      [local, { http_proxy: "''", HTTP_PROXY: P2 }, undefined],
      [local, { HTTP_PROXY: P1, no_proxy: "''", NO_PROXY: "127.0.0.1" }, undefined],
      [local, { HTTP_PROXY: P1, no_proxy: '""', NO_PROXY: "127.0.0.1" }, undefined],
      // a proxy without a scheme is an http one, from ALL_PROXY too
      [local, { ALL_PROXY: `127.0.0.1:${p2.port}` }, P2, `127.0.0.1:${p2.port}`],
      // a trailing dot on the host or the entry is the same name
      [`http://localhost.:${T}/`, { HTTP_PROXY: P1, NO_PROXY: "localhost" }, undefined],
      [`http://localhost:${T}/`, { HTTP_PROXY: P1, NO_PROXY: "localhost." }, undefined],
      // an address is that address only (/32); a range with a port, or with two prefixes, is no entry
      [local, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.2" }, P1],
      [local, { HTTP_PROXY: P1, NO_PROXY: `127.0.0.0/8:${T}` }, P1],
      [local, { HTTP_PROXY: P1, NO_PROXY: "127.0.0.0/8/9" }, P1],
    ];
    try {
      for (const [url, env, used, named] of cases) {
        seen.length = 0;
        const p = Bun.spawn([process.execPath, "-e", `await fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) }).catch(() => {})`], { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "ignore", stderr: "ignore" });
        await p.exited;
        const real = seen[0] === "P1" ? P1 : seen[0] === "P2" ? P2 : undefined;
        const said = proxyFor(url, env);
        expect([url, env, real, said]).toEqual([url, env, used, named ?? (used && withoutPassword(used))]);
      }
    } finally {
      for (const s of [p1, p2, target]) s.close();
    }
  }, 60_000);

  test("a proxy fetch does not support (socks5://) says nothing was sent and names it (before: \"the write may have been applied\")", async () => {
    const r = await cards(["--url", server.url, "cards", "create", "--type", "task", "--title", "via socks"], { HTTP_PROXY: "socks5://u:secret@127.0.0.1:9" });
    expect([r.code, r.error.error, r.stderrLines.length]).toEqual([2, "usage", 1]);
    expect(r.error.message).toBe(`cannot reach ${server.url} through the proxy socks5://u:***@127.0.0.1:9: fetch takes only http:// and https:// proxies; nothing was sent`);
    expect(await titles()).not.toContain("via socks");
  });

  test("a proxy's password is hidden when its value has no scheme or does not parse as a URL (before: printed)", async () => {
    for (const [value, shown] of [["user:secret@127.0.0.1:9", "user:***@127.0.0.1:9"], ["http://user:se/cret@127.0.0.1:9", "http://user:***@127.0.0.1:9"], ["http://u:p@ss@127.0.0.1:9", "http://u:***@127.0.0.1:9"]]) {
      const r = await cards(["--url", "http://example.invalid:4777", "cards", "list"], { HTTP_PROXY: value! });
      expect([value, r.code, r.stderrLines.join("\n").includes("secret") || r.stderrLines.join("\n").includes("cret") || r.stderrLines.join("\n").includes("ss@")]).toEqual([value, 7, false]);
      expect(r.error.message).toContain(`through the proxy ${shown}: `);
    }
    expect(withoutPassword("https://ada:pw@example.com:8443/v1")).toBe("https://ada:***@example.com:8443/v1");
    expect(withoutPassword("http://ada@example.com/")).toBe("http://ada@example.com/");
    expect(withoutPassword("http://127.0.0.1:4777")).toBe("http://127.0.0.1:4777");
    // an @ in the password, an upper-case scheme, a password with no user: hidden all the same
    expect(withoutPassword("http://u:p@ss@127.0.0.1:9")).toBe("http://u:***@127.0.0.1:9");
    expect(withoutPassword("HTTP://ada:pw@example.com/")).toBe("HTTP://ada:***@example.com/");
    expect(withoutPassword("http://:secret@127.0.0.1:9")).toBe("http://:***@127.0.0.1:9");
  });
});
