/**
 * What a browser on another site could make a loopback server do, and HTTP details a
 * client library relies on: cross-origin writes and foreign Host names are refused; HEAD
 * answers like GET without a body; a 405 names the allowed methods; a body `actor` is
 * overwritten by the resolved identity (SPEC Authentication 2); a UTF-8 actor header reads
 * back as sent; artifacts never run as pages of the board's origin; an upgrade report with
 * non-ASCII defaults travels in its header.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHttpApp } from "../../src/http/app.ts";
import type { Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService, sampleTask } from "../helpers/workspace.ts";

let svc: Service;
let app: ReturnType<typeof createHttpApp>;
const BASE = "http://127.0.0.1:4777";
const send = (method: string, path: string, init: { body?: string; headers?: Record<string, string>; base?: string } = {}) =>
  app.fetch(new Request(`${init.base ?? BASE}/v1${path}`, { method, body: init.body, headers: init.headers }));

beforeAll(async () => {
  svc = await openTestService(makeWorkspace(), "serve");
  app = createHttpApp(svc, { loopbackOnly: true });
});
afterAll(() => svc.close());

describe("cross-site requests", () => {
  test("a write carrying another origin is 403 and writes nothing; the board's own origin and clients without Origin write", async () => {
    const body = JSON.stringify({ type_id: "task", title: "csrf" });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/json"]) {
      const r = await send("POST", "/cards", { body, headers: { origin: "http://evil.example", "content-type": type } });
      expect(r.status).toBe(403);
      expect(((await r.json()) as any).error).toBe("forbidden");
    }
    expect(svc.store.cardCount()).toBe(0);
    expect((await send("POST", "/cards", { body, headers: { origin: BASE } })).status).toBe(201);
    expect((await send("POST", "/cards", { body })).status).toBe(201);
    // reads carry no Origin check (a foreign page cannot read answers without CORS)
    expect((await send("GET", "/health", { headers: { origin: "http://evil.example" } })).status).toBe(200);
  });

  test("on a loopback server a request naming another host (DNS rebinding) is 403; loopback names pass", async () => {
    const r = await send("GET", "/health", { base: "http://attacker.example:4777" });
    expect(r.status).toBe(403);
    for (const base of ["http://localhost:4777", "http://127.0.0.1:4777", "http://[::1]:4777"]) expect((await send("GET", "/health", { base })).status).toBe(200);
    // the refusal says how to serve behind a reverse proxy
    expect(((await (await send("GET", "/health", { base: "http://cards.example.com" })).json()) as any).hint).toContain("--public-url");
  });

  test("behind a reverse proxy (--public-url): its host and its origin are taken, others still refused", async () => {
    const proxied = createHttpApp(svc, { loopbackOnly: true, publicOrigin: "https://cards.example.com" });
    const at = (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      proxied.fetch(new Request(`${base}/v1${path}`, { method, headers, body }));
    const body = JSON.stringify({ type_id: "task", title: "through the proxy" });
    // a proxy that keeps the Host header (the scheme it sees is http: TLS ended at the proxy)
    expect((await at("http://cards.example.com", "GET", "/health")).status).toBe(200);
    expect((await at("http://cards.example.com", "POST", "/cards", { origin: "https://cards.example.com" }, body)).status).toBe(201);
    // a proxy that rewrites Host to the upstream: the board's writes carry the public origin
    expect((await at(BASE, "POST", "/cards", { origin: "https://cards.example.com" }, body)).status).toBe(201);
    // ... naming the public port, as a proxy may (before: 403)
    expect((await at("http://cards.example.com:443", "GET", "/health")).status).toBe(200);
    // a write naming the public host comes from the public origin only: a page on its plain
    // http:// origin is another origin (before: taken, as the URL the server saw was http)
    expect((await at("http://cards.example.com", "POST", "/cards", { origin: "http://cards.example.com" }, body)).status).toBe(403);
    // the port is part of the host and of the origin
    expect((await at("http://cards.example.com:8443", "GET", "/health")).status).toBe(403);
    expect((await at(BASE, "POST", "/cards", { origin: "http://cards.example.com" }, body)).status).toBe(403);
    const refused = await at("http://attacker.example", "GET", "/health");
    expect(refused.status).toBe(403);
    // the refusal names the address it is reached by
    expect(((await refused.json()) as any).hint).toBe("the server listens on loopback and is reached as https://cards.example.com (--public-url): call it by one of those");
    const foreign = await at(BASE, "POST", "/cards", { origin: "https://evil.example" }, body);
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).hint).toBe("a browser page may write only from the server's own origin or https://cards.example.com (--public-url)");
  });
});

describe("HTTP details", () => {
  test("HEAD answers like GET, without a body", async () => {
    const r = await send("HEAD", "/health");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(await r.text()).toBe("");
    const get = await send("GET", "/health");
    expect(r.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
    expect((await send("HEAD", "/cards/card_0000000000000000")).status).toBe(404);
    // outside /v1 too: the root redirects to the board either way
    const root = await app.fetch(new Request(`${BASE}/`, { method: "HEAD" }));
    expect([root.status, root.headers.get("location")]).toEqual([302, "/ui/"]);
  });

  test("a 405 carries an Allow header with the path's methods", async () => {
    const r = await send("DELETE", "/health");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
  });

  test("a body field named actor is overwritten by the resolved identity, not refused", async () => {
    const r = await send("POST", "/cards", { body: JSON.stringify({ type_id: "task", title: "who", actor: "mallory" }), headers: { "x-service-actor": "agent-1" } });
    expect(r.status).toBe(201);
    expect(((await r.json()) as any).created_by).toBe("agent-1");
  });

  test("a UTF-8 actor header reads back as sent; an actor past 200 characters is refused", async () => {
    const bytes = new TextEncoder().encode("josé");
    const latin1 = String.fromCharCode(...bytes); // what arrives on the wire, read as Latin-1
    const r = await send("POST", "/cards", { body: JSON.stringify({ type_id: "task", title: "accent" }), headers: { "x-service-actor": latin1 } });
    expect(((await r.json()) as any).created_by).toBe("josé");
    const long = await send("POST", "/cards", { body: JSON.stringify({ type_id: "task", title: "long" }), headers: { "x-service-actor": "a".repeat(201) } });
    expect(long.status).toBe(400);
  });

  test("X-Service-Actor sent twice (joined as \"a, b\") is refused, not taken as a made-up actor \"a, b\"", async () => {
    const h = new Headers({ "content-type": "application/json" });
    h.append("x-service-actor", "ada");
    h.append("x-service-actor", "agent-1");
    expect(h.get("x-service-actor")).toBe("ada, agent-1"); // what a server reads
    const r = await app.fetch(new Request(`${BASE}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "two actors" }), headers: h }));
    const body = (await r.json()) as any;
    expect([r.status, body.error, body.field]).toEqual([400, "bad_request", "X-Service-Actor"]);
    const read = await app.fetch(new Request(`${BASE}/v1/cards?owner=me`, { headers: h }));
    expect(read.status).toBe(400);
    const stream = await app.fetch(new Request(`${BASE}/v1/events/stream`, { headers: h }));
    expect(stream.status).toBe(400);
    expect(((await (await send("GET", "/cards")).json()) as any).items.some((c: { title: string }) => c.title === "two actors")).toBe(false);
  });

  test("an artifact is served with nosniff and a sandbox CSP (an HTML upload never runs as a board page)", async () => {
    const c = (await (await send("POST", "/cards", { body: JSON.stringify({ type_id: "task", title: "art" }) })).json()) as any;
    const up = await app.fetch(new Request(`${BASE}/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: "<script>alert(1)</script>", headers: { "content-type": "text/html" } }));
    const uri = ((await up.json()) as any).fields.output.uri;
    const r = await send("GET", `/${uri}`);
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("content-security-policy")).toContain("sandbox");
  });

  test("a script or stylesheet artifact is served as text/plain, so no page of the origin can load it (its field keeps the declared type)", async () => {
    const c = (await (await send("POST", "/cards", { body: JSON.stringify({ type_id: "task", title: "js" }) })).json()) as any;
    for (const [type, body] of [["text/javascript", "alert(1) // js"], ["application/javascript; charset=utf-8", "alert(2)"], ["text/css", "body { display: none }"]] as const) {
      const up = await app.fetch(new Request(`${BASE}/v1/cards/${c.id}/artifacts/output`, { method: "POST", body, headers: { "content-type": type } }));
      const field = ((await up.json()) as any).fields.output;
      expect(field.mime).toBe(type);
      const r = await send("GET", `/${field.uri}`);
      expect([type, r.headers.get("content-type"), r.headers.get("x-content-type-options")]).toEqual([type, "text/plain; charset=utf-8", "nosniff"]);
      expect(await r.text()).toBe(body);
    }
    const png = await app.fetch(new Request(`${BASE}/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: "not really a png", headers: { "content-type": "image/png" } }));
    const uri = ((await png.json()) as any).fields.output.uri;
    expect((await send("GET", `/${uri}`)).headers.get("content-type")).toBe("image/png");
  });

  test("a Host header that is not one host and port is a 400 in the envelope", async () => {
    // a bracketed host that is no IPv6 address, or a name the URL parser refuses, made h3's URL throw: a 500 before
    for (const host of ["localhost:99999", "127.0.0.1:4777, evil.example", "a@b", "x/y", "[1.2.3.4]", "[:::]:80", "256.1.1.1", "1.2.3.4.5", "999999999999", "xn--a"]) {
      const r = await app.fetch(new Request(`${BASE}/v1/workspace`, { headers: { host } }));
      expect([host, r.status, ((await r.json()) as any).field]).toEqual([host, 400, "Host"]);
    }
    expect((await app.fetch(new Request(`${BASE}/v1/workspace`, { headers: { host: "127.0.0.1:4777" } }))).status).toBe(200);
    expect((await app.fetch(new Request(`${BASE}/v1/workspace`, { headers: { host: "[::1]:4777" } }))).status).toBe(200);
  });
});

test("an upgrade report with non-ASCII defaults travels in its header (it was a 500 after the write)", async () => {
  const task = sampleTask();
  task.schema_version = 3;
  task.migrations["3"] = { from: 2, summary: "a default with accents", field_defaults: { description: "café ✓ 日本" } };
  const dir = makeWorkspace();
  const first = await openTestService(dir);
  const created = await createHttpApp(first).fetch(new Request("http://x/v1/cards", { method: "POST", body: JSON.stringify({ type_id: "task", title: "old" }) }));
  const card = (await created.json()) as any;
  first.close();
  writeFileSync(join(dir, "definitions/card-types/task.json"), JSON.stringify(task));
  const next = await openTestService(dir);
  try {
    const r = await createHttpApp(next).fetch(new Request(`http://x/v1/cards/${card.id}/upgrade-schema`, { method: "POST", body: "{}" }));
    expect(r.status).toBe(200);
    expect(JSON.parse(r.headers.get("upgrade-report")!)).toMatchObject({ from: 2, to: 3, defaults_applied: { description: "café ✓ 日本" } });
  } finally {
    next.close();
  }
});
