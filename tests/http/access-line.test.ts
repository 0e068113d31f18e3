/** One access-log line (app.ts accessLine): what it names, and that it stays one readable line. */
import { expect, test } from "bun:test";
import { accessLine } from "../../src/http/app.ts";

const ok = new Response("{}", { status: 200 });

test("the actor is the one the card records: UTF-8 as sent, not its Latin-1 reading", () => {
  // fetch sends header bytes as they are; Bun hands them over one character per byte
  const latin1 = String.fromCharCode(...new TextEncoder().encode("José"));
  const req = new Request("http://127.0.0.1/v1/cards", { method: "POST", headers: { "x-service-actor": latin1 } });
  expect(accessLine(req, ok, 3.14)).toBe("POST /v1/cards 200 3.1 ms José");
});

test("line breaks and bidirectional controls in the actor are escaped, so the line reads as sent", () => {
  const bytes = String.fromCharCode(...new TextEncoder().encode("eve\u2028[info] fake\u202e"));
  const req = new Request("http://127.0.0.1/v1/health", { headers: { "x-service-actor": bytes } });
  expect(accessLine(req, ok, 1)).toBe("GET /v1/health 200 1.0 ms eve\\u2028[info] fake\\u202e");
  // the paragraph separator, and every embedding, override and isolate control
  const all = String.fromCharCode(...new TextEncoder().encode("a\u2029b\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069c"));
  const more = new Request("http://127.0.0.1/v1/health", { headers: { "x-service-actor": all } });
  expect(accessLine(more, ok, 1)).toBe("GET /v1/health 200 1.0 ms a\\u2029b\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069c");
});

test("the target is a path and query, also when the Host made no URL", () => {
  expect(accessLine(new Request("http://127.0.0.1/v1/cards?status=todo"), ok, 1)).toBe("GET /v1/cards?status=todo 200 1.0 ms -");
  const fake = { method: "GET", url: "http://x:99999/v1/health?x=1", headers: new Headers() } as unknown as Request;
  expect(accessLine(fake, new Response("{}", { status: 400 }), 1)).toBe("GET /v1/health?x=1 400 1.0 ms -");
  const bare = { method: "GET", url: "http://x:99999", headers: new Headers() } as unknown as Request;
  expect(accessLine(bare, new Response("{}", { status: 400 }), 1)).toBe("GET / 400 1.0 ms -");
});
