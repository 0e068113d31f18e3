/** Serving the embedded UI from the compiled binary: redirects, fallback, caching, types. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";

let srv: Server;

beforeAll(async () => {
  assertBinary();
  srv = await serve(makeWorkspace());
}, 30_000);

afterAll(async () => {
  await srv?.stop();
});

const get = (path: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, { redirect: "manual", ...init });

test("/ and /ui redirect to /ui/ (keeping the query)", async () => {
  expect((await get("/")).headers.get("location")).toBe("/ui/");
  const r = await get("/ui?board=bugs");
  expect(r.status).toBe(302);
  expect(r.headers.get("location")).toBe("/ui/?board=bugs");
});

test("the page: built, revalidated by ETag, strict CSP; any page path under /ui/ answers it", async () => {
  const r = await get("/ui/");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/html");
  expect(r.headers.get("cache-control")).toBe("no-cache");
  expect(r.headers.get("content-security-policy")).toContain("default-src 'self'");
  const html = await r.text();
  expect(html).not.toContain("not built");
  const etag = r.headers.get("etag")!;
  expect((await get("/ui/", { headers: { "if-none-match": etag } })).status).toBe(304);
  const deep = await get("/ui/boards/main/anything");
  expect(deep.status).toBe(200);
  expect(await deep.text()).toBe(html);
  expect((await get("/ui/", { method: "HEAD" })).status).toBe(200);

  const js = html.match(/src="(\/ui\/[^"]+\.js)"/)![1]!;
  const css = html.match(/href="(\/ui\/[^"]+\.css)"/)![1]!;
  const a = await get(js);
  expect(a.headers.get("content-type")).toContain("javascript");
  expect(a.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect((await a.text()).length).toBeGreaterThan(1000);
  expect((await get(css)).headers.get("content-type")).toContain("text/css");
});

test("a missing script is a 404, never the page", async () => {
  const r = await get("/ui/chunk-00000000.js");
  expect(r.status).toBe(404);
  expect(await r.text()).not.toContain("<html");
  expect((await get("/ui/../v1/health")).status).not.toBe(500);
});
