/**
 * HTTP fuzzing: 10,000 random and mutated requests across every route (bad JSON, wrong
 * types, huge values, unicode edge cases, traversal paths, duplicate keys, deep nesting).
 * No 5xx, no crash, every 4xx carries the envelope, and the workspace stays valid.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { createHttpApp } from "../../src/http/app.ts";
import { ROUTES } from "../../src/api/routes.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const REQUESTS = 10_000;

const weird = fc.oneof(
  fc.constantFrom("", " ", "..", "../..", "%2e%2e%2f", "..%5c", "\\", "/etc/passwd", "%00", "\u0000", "\uffff", "\ud83d\ude00", "\u202e", "a".repeat(5000),
    "card_0000000000000000", "ent_x", "cmt_x", "depends-on", "evidence", "output", "priority", "main", "task", "null", "true", "-1", "1e309", "NaN"),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 20, unit: "grapheme" }),
);
const jsonValue = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" },
    fc.constant(null), fc.boolean(), fc.integer(), fc.double(), weird, fc.string({ maxLength: 10 }),
    fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(fc.oneof(weird, fc.constantFrom("version", "title", "type_id", "fields", "status", "owner", "tags", "entry", "body", "target", "filter", "dry_run", "force", "__proto__", "constructor")), tie("v"), { maxKeys: 5 })),
})).v;

function deep(n: number): string {
  return "[".repeat(n) + "]".repeat(n);
}

test(`${REQUESTS} random requests: no 5xx, every 4xx has the envelope, the workspace stays valid`, async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir);
  const app = createHttpApp(svc);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await app.fetch(new Request("http://x/v1/cards", { method: "POST", body: JSON.stringify({ type_id: "task", title: `seed ${i}`, status: "todo" }) }));
    ids.push(((await r.json()) as any).id);
  }
  const rng = fc.sample(fc.tuple(
    fc.constantFrom(...ROUTES),
    fc.array(fc.oneof(fc.constantFrom(...ids), weird), { minLength: 3, maxLength: 3 }),
    fc.oneof(
      jsonValue.map((v) => JSON.stringify(v)),
      fc.constantFrom("{bad json", "{\"version\":1,\"version\":2}", '{"type_id":"task","title":"dup","title":"dup2"}', deep(5000), "\u0000", "", "null", "[]", '"x"'),
      fc.record({ type_id: fc.constantFrom("task", "bug", "review", "nope"), title: weird, fields: jsonValue, version: fc.oneof(fc.integer(), weird) }).map((v) => JSON.stringify(v)),
      fc.constant(JSON.stringify({ type_id: "task", title: "big", fields: { description: "x".repeat(300 * 1024) } })),
    ),
    fc.dictionary(fc.constantFrom("limit", "cursor", "sort", "q", "status", "type_id", "board_id", "blocked", "include", "since", "version", "types", "filter", "bogus"), weird, { maxKeys: 3 }),
    fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT"),
  ), { numRuns: REQUESTS, seed: 42 });

  let fivexx = 0;
  const bad: string[] = [];
  for (const [route, params, body, query, method] of rng) {
    let i = 0;
    const path = route.path.replace(/:[a-z_]+|\*\*:[a-z_]+/g, () => encodeURIComponent(params[i++ % 3]!));
    const useMethod = Math.random() < 0.9 ? route.method : method;
    const qs = new URLSearchParams(query as Record<string, string>).toString();
    const init: RequestInit = { method: useMethod, headers: { "content-type": "application/json", "x-service-actor": Math.random() < 0.5 ? "ada" : "agent-1" } };
    if (useMethod !== "GET") init.body = body;
    const res = await app.fetch(new Request(`http://x/v1${path}${qs ? `?${qs}` : ""}`, init));
    if (res.status >= 500) {
      fivexx++;
      bad.push(`${useMethod} ${path} -> ${res.status} ${await res.text()}`);
      continue;
    }
    if (res.status >= 400) {
      const env = (await res.json()) as any;
      if (typeof env.error !== "string" || typeof env.message !== "string") bad.push(`${useMethod} ${path}: no envelope`);
    } else if (path.startsWith("/events/stream")) {
      await res.body?.cancel();
    } else {
      await res.arrayBuffer();
    }
  }
  expect(bad.slice(0, 5)).toEqual([]);
  expect(fivexx).toBe(0);

  // the workspace is still consistent: every card reads back and has its creation event
  for (const card of svc.store.iterateCards()) {
    const r = await app.fetch(new Request(`http://x/v1/cards/${card.id}`));
    expect(r.status).toBe(200);
    expect(svc.store.listEvents({ cardId: card.id, types: ["card_created"], limit: 2 }).length).toBe(1);
  }
  svc.close();
}, 300_000);
