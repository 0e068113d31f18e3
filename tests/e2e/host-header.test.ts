/**
 * The compiled server and what reaches it below fetch: a Host header that is not one host
 * and port, sent on a raw socket (a browser never sends one; a local client or a proxy can).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { assertBinary, run, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";

let server: Server;
let port: number;

beforeAll(async () => {
  assertBinary();
  server = await serve(makeWorkspace());
  port = Number(new URL(server.url).port);
});
afterAll(() => server?.stop());

/** Sends one HTTP/1.1 request as written and returns the status line, headers and body. */
function raw(head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const c = connect(port, "127.0.0.1", () => c.write(`${head}\r\nConnection: close\r\n\r\n`));
    let data = "";
    c.on("data", (b) => (data += b.toString("latin1")));
    c.on("error", reject);
    c.on("end", () => {
      const split = data.indexOf("\r\n\r\n");
      resolve({ status: Number(data.split(" ")[1]), headers: data.slice(0, split).toLowerCase(), body: data.slice(split + 4) });
    });
  });
}

describe("Host header", () => {
  test.each([
    ["a port past 65535", "Host: localhost:99999"],
    ["a port that is not a number", "Host: localhost:abc"],
    ["an unclosed IPv6 literal", "Host: [::1"],
    ["two Host fields", `Host: 127.0.0.1:PORT\r\nHost: evil.example`],
    ["userinfo", "Host: evil.example@127.0.0.1"],
    ["a path", "Host: 127.0.0.1/evil"],
    ["a space", "Host: 127.0.0.1 evil"],
  ])("%s is a 400 in the error envelope (before: a 500 with Bun's page: stack, source, working directory)", async (_label, host) => {
    for (const path of ["/v1/workspace", "/ui/", "/v1/events/stream"]) {
      const r = await raw(`GET ${path} HTTP/1.1\r\n${host.replace("PORT", String(port))}`);
      expect([path, r.status]).toEqual([path, 400]);
      expect(r.headers).toContain("content-type: application/json");
      const body = JSON.parse(r.body);
      expect([body.error, body.field]).toEqual(["bad_request", "Host"]);
      expect(r.body).not.toContain("source_lines");
    }
  });

  test("one host and port, a bracketed IPv6 literal, and no Host at all (HTTP/1.0) are served", async () => {
    expect((await raw(`GET /v1/workspace HTTP/1.1\r\nHost: 127.0.0.1:${port}`)).status).toBe(200);
    expect((await raw(`GET /v1/workspace HTTP/1.1\r\nHost: localhost`)).status).toBe(200);
    expect((await raw(`GET /v1/workspace HTTP/1.1\r\nHost: [::1]:${port}`)).status).toBe(200);
    expect((await raw("GET /v1/workspace HTTP/1.0")).status).toBe(200);
    expect(run(["health"], { env: { CARDS_URL: server.url } }).code).toBe(0);
  });

  test("a missing board file is answered with nosniff", async () => {
    const r = await raw(`GET /ui/x%3Cscript%3E.js HTTP/1.1\r\nHost: 127.0.0.1:${port}`);
    expect(r.status).toBe(404);
    expect(r.headers).toContain("x-content-type-options: nosniff");
  });
});

describe("--public-url (a server behind a reverse proxy)", () => {
  test("the proxy's host is taken and its origin may write; the flag and CARDS_PUBLIC_URL are checked before the workspace opens", async () => {
    const proxied = await serve(makeWorkspace(), {}, ["--public-url", "https://cards.example.com"]);
    try {
      const at = (head: string) => new Promise<number>((resolve, reject) => {
        const c = connect(Number(new URL(proxied.url).port), "127.0.0.1", () => c.write(`${head}\r\nConnection: close\r\n\r\n`));
        let data = "";
        c.on("data", (b) => (data += b.toString("latin1")));
        c.on("error", reject);
        c.on("end", () => resolve(Number(data.split(" ")[1])));
      });
      expect(await at("GET /v1/health HTTP/1.1\r\nHost: cards.example.com")).toBe(200);
      expect(await at("GET /v1/health HTTP/1.1\r\nHost: attacker.example")).toBe(403);
      const body = JSON.stringify({ type_id: "task", title: "from the board, proxied" });
      const post = (origin: string) => fetch(`${proxied.url}/v1/cards`, { method: "POST", headers: { origin, "content-type": "application/json", "x-service-actor": "ada" }, body });
      expect((await post("https://cards.example.com")).status).toBe(201);
      expect((await post("https://evil.example")).status).toBe(403);
    } finally {
      proxied.stop();
    }
    for (const [args, env] of [[["--public-url", "https://cards.example.com/cards"]], [[], { CARDS_PUBLIC_URL: "cards.example.com" }]] as const) {
      const r = run(["serve", "--dir", "/nonexistent", "--port", "0", ...args], { env: (env ?? {}) as Record<string, string> });
      expect([r.code, r.error?.error, r.error?.field]).toEqual([2, "usage", "--public-url"]);
    }
  });
});
