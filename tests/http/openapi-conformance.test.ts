/**
 * GET /openapi.json against the server it describes: real answers of real calls validate
 * against the documented response schemas (ajv, 2020-12, formats), bodies the server takes
 * validate against the request schemas, and bodies it refuses fail them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { testApi, type Res, type TestApi } from "../helpers/http.ts";

let api: TestApi;
let doc: any;
let ajv: Ajv2020;
beforeAll(async () => {
  api = await testApi();
  doc = (await api.get("/openapi.json")).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, "doc");
});
afterAll(() => api.close());

/** ajv's errors for `data` against a schema of the document, [] when it validates */
function errorsOf(schema: any, data: unknown): string[] {
  const validate = ajv.compile({ $ref: `doc#${schema.$ref ? schema.$ref.slice(1) : ""}`, ...(schema.$ref ? {} : schema) });
  return validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
}
const named = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The documented answer of `method template` for this response's status (else 4XX/5XX). */
function responseDoc(method: string, template: string, status: number): any {
  const op = doc.paths[template]?.[method.toLowerCase()];
  if (!op) throw new Error(`undocumented ${method} ${template}`);
  let r = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`];
  if (!r) throw new Error(`${method} ${template}: status ${status} undocumented`);
  if (r.$ref) r = doc.components.responses[r.$ref.split("/").pop()];
  return r;
}

/** Expects the answer to match its documented schema; returns its body. */
function conforms(res: Res, method: string, template: string): any {
  const r = responseDoc(method, template, res.status);
  const schema = r.content?.["application/json"]?.schema;
  expect(schema).toBeDefined();
  expect({ [`${method} ${template} ${res.status}`]: errorsOf(schema, res.body) }).toEqual({ [`${method} ${template} ${res.status}`]: [] });
  return res.body;
}

/** Sends a body after checking the request schema takes it. */
async function send(method: string, path: string, template: string, body: any, headers?: Record<string, string>): Promise<Res> {
  const schema = doc.paths[template][method.toLowerCase()].requestBody.content["application/json"].schema;
  expect({ [`${method} ${template} body`]: errorsOf(schema, body) }).toEqual({ [`${method} ${template} body`]: [] });
  const res = await api.call(method, path, body, headers);
  conforms(res, method, template);
  return res;
}

describe("answers validate against the document", () => {
  test("cards of every type, with repeating entries (entry_id), pages, events, history", async () => {
    const task = await send("POST", "/cards", "/cards", {
      type_id: "task", title: "typed", status: "todo", tags: [],
      fields: { priority: "high", components: ["api", "cli"], estimate_hours: 3, due: "2030-01-02T03:04:05Z", branch: "b", evidence: [{ note: "first", by: "ada" }] },
    });
    expect(task.status).toBe(201);
    expect(task.body.fields.evidence[0].entry_id).toMatch(/^ent_/);
    const bug = await send("POST", "/cards", "/cards", { type_id: "bug", title: "a bug", fields: { steps: "run it", found_in: task.body.id, logs: { uri: "https://ci.example/1" } } });
    expect(bug.body.fields.severity).toBe("minor");
    const review = await send("POST", "/cards", "/cards", { type_id: "review", title: "a review", fields: { findings: [{ summary: "s", level: "nit" }], subject: task.body.id } });
    expect(review.body.fields.findings[0].entry_id).toMatch(/^ent_/);
    // an answer whose entry lacks entry_id, or a task with a bug's fields, is refused by the schema
    expect(errorsOf(named("Card"), { ...review.body, fields: { findings: [{ summary: "s" }] } })).not.toEqual([]);
    expect(errorsOf(named("Card"), { ...task.body, fields: { priority: 3 } })).not.toEqual([]);

    const id = task.body.id;
    const appended = await send("POST", `/cards/${id}/fields/evidence/append`, "/cards/{id}/fields/{field}/append", { version: 1, entry: { note: "second", at: "2030-01-01T00:00:00Z" } });
    const entry = appended.body.entry_id;
    await send("PATCH", `/cards/${id}/fields/evidence/${entry}`, "/cards/{id}/fields/{field}/{entry_id}", { version: 2, entry: { note: "second, edited" } });
    await send("POST", `/cards/${id}/comments`, "/cards/{id}/comments", { body: "a comment" });
    await send("POST", `/cards/${id}/links`, "/cards/{id}/links", { type_id: "related", target: bug.body.id, note: "see" });
    const patched = await send("PATCH", `/cards/${id}`, "/cards/{id}", { version: 5, title: "typed, patched", owner: "ada", fields: { branch: null, components: [] }, tags: [] });
    expect(patched.body.version).toBe(6);
    conforms(await api.del(`/cards/${id}/fields/evidence/${entry}?version=6`), "DELETE", "/cards/{id}/fields/{field}/{entry_id}");
    conforms(await api.get(`/cards/${id}`), "GET", "/cards/{id}");
    conforms(await api.get("/cards?include=links,comments"), "GET", "/cards");
    const events = conforms(await api.get("/events?limit=500"), "GET", "/events");
    const kinds = new Set(events.items.map((e: any) => e.type));
    for (const t of ["card_created", "item_appended", "item_updated", "item_removed", "comment_added", "link_added", "field_updated", "owner_changed"]) expect(kinds).toContain(t);
    expect(events.items.find((e: any) => e.type === "item_appended").diff.entry_id).toMatch(/^ent_/);
    conforms(await api.get(`/cards/${id}/events`), "GET", "/cards/{id}/events");
    conforms(await api.get(`/cards/${id}/history`), "GET", "/cards/{id}/history");
    conforms(await api.post(`/cards/${id}/claim`, { version: 7 }), "POST", "/cards/{id}/claim");
    conforms(await api.post(`/cards/${id}/release`, {}), "POST", "/cards/{id}/release");
    conforms(await api.post(`/cards/${id}/upgrade-schema`, { dry_run: true }), "POST", "/cards/{id}/upgrade-schema");
    conforms(await api.del(`/cards/${bug.body.id}?version=1`), "DELETE", "/cards/{id}");
  });

  test("workspace, boards, counts, health, breaches of every kind", async () => {
    conforms(await api.get("/health"), "GET", "/health");
    const ws = conforms(await api.get("/workspace"), "GET", "/workspace");
    expect(ws.workspace.users.length).toBeGreaterThan(0);
    for (const board of ["main", "bugs"]) conforms(await api.get(`/boards/${board}`), "GET", "/boards/{board_id}");
    conforms(await api.get("/boards/main/counts?owner=me", { "x-service-actor": "agent-1" }), "GET", "/boards/{board_id}/counts");
    // over doing's WIP limit (3), and a blocked card
    const doing = [];
    for (let i = 0; i < 4; i++) doing.push(await api.task({ status: "doing" }));
    const blocker = await api.task();
    expect((await api.post(`/cards/${doing[0].id}/links`, { type_id: "blocked-by", target: blocker.id })).status).toBe(201);
    const breaches = conforms(await api.get("/breaches"), "GET", "/breaches");
    const kinds = breaches.items.map((b: any) => b.kind);
    expect(kinds).toContain("wip_exceeded");
    expect(kinds).toContain("card_blocked");
    // todo holds cards here: a drained lane's item, by its documented shape
    expect(errorsOf(named("Breaches"), { as_of: breaches.as_of, items: [{ kind: "lane_limit", board_id: "main", column: "todo", count: 0, limit: 0 }] })).toEqual([]);
    expect(errorsOf(named("Breaches"), { as_of: breaches.as_of, items: [{ kind: "card_blocked", board_id: "main", card_id: "x" }] })).not.toEqual([]);
  });

  test("take-next with a filter; an empty queue is card null", async () => {
    const t = await api.task({ fields: { priority: "urgent" } });
    const took = await send("POST", "/cards/take-next", "/cards/take-next", { filter: { "fields.priority": "urgent" }, type_id: "task", dry_run: true });
    expect(took.body.card.id).toBe(t.id);
    const none = await send("POST", "/cards/take-next", "/cards/take-next", { filter: { title: "no such title" }, type_id: "task" });
    expect(none.body.card).toBeNull();
  });

  test("errors: the envelope with a documented code; 405 with Allow", async () => {
    conforms(await api.get("/cards/card_0000000000000000"), "GET", "/cards/{id}");
    const t = await api.task();
    const stale = await api.patch(`/cards/${t.id}`, { version: 9, title: "x" });
    expect(stale.status).toBe(409);
    conforms(stale, "PATCH", "/cards/{id}");
    conforms(await api.post("/cards", { type_id: "nope", title: "x" }), "POST", "/cards");
    const put = await api.call("PUT", `/cards/${t.id}`, {});
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET, PATCH, DELETE"]);
    expect(responseDoc("PATCH", "/cards/{id}", 405).headers.Allow).toBeDefined();
    conforms(put, "GET", "/cards/{id}");
    // the stream too (it is routed apart from the table)
    for (const method of ["POST", "HEAD", "DELETE"]) {
      const r = await api.call(method, "/events/stream", method === "POST" ? {} : undefined);
      expect([method, r.status, r.headers.get("allow")]).toEqual([method, 405, "GET"]);
    }
    expect(doc.components.schemas.ErrorEnvelope.properties.error.enum).toContain("method_not_allowed");
  });

  test("an artifact: uploaded with any media type, downloaded by its uri without `artifacts/`, headers documented", async () => {
    const t = await api.task();
    const up = await api.call("POST", `/cards/${t.id}/artifacts/output`, "the report", { "content-type": "text/plain" });
    conforms(up, "POST", "/cards/{id}/artifacts/{field}");
    expect(Object.keys(doc.paths["/cards/{id}/artifacts/{field}"].post.requestBody.content)).toEqual(["*/*"]);
    const uri: string = up.body.fields.output.uri;
    const down = await api.get(`/${uri}`);
    expect([down.status, down.text]).toEqual([200, "the report"]);
    const documented = responseDoc("GET", "/artifacts/{path}", 200);
    for (const h of ["Cache-Control", "Content-Security-Policy"]) expect([h, down.headers.get(h)]).toEqual([h, expect.any(String)]);
    expect(Object.keys(documented.headers)).toEqual(expect.arrayContaining(["Cache-Control", "Content-Security-Policy"]));
    expect(doc.paths["/artifacts/{path}"].get.description).toContain("artifacts/");
  });
});

describe("request schemas refuse what the server refuses", () => {
  const refusedBoth = async (schema: string, method: string, path: string, body: unknown) => {
    expect({ [schema]: errorsOf(named(schema), body).length > 0 }).toEqual({ [schema]: true });
    const r = await api.call(method, path, body);
    expect([r.status, r.body.error]).toEqual([422, expect.any(String)]);
  };

  test("null for a required field without a default (create), a required field (update), an empty comment", async () => {
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "bug", title: "b", fields: { steps: null } });
    const t = await api.task();
    await refusedBoth("PatchCardBody", "PATCH", `/cards/${t.id}`, { version: 1, fields: { priority: null } });
    await refusedBoth("CommentBody", "POST", `/cards/${t.id}/comments`, { body: "" });
    // null and [] stand for "not given" on create: taken by both
    const given = { type_id: "task", title: "t", fields: { priority: null, components: [], branch: null } };
    expect(errorsOf(named("CreateCardBody"), given)).toEqual([]);
    expect((await api.post("/cards", given)).status).toBe(201);
  });

  test("bodies the server refuses for their text fail the schema too: empty required text, a line break in a string, a malformed card id, a control character in a title", async () => {
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "bug", title: "b", fields: { steps: "" } });
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "task", title: "t", fields: { branch: "a\nb" } });
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "task", title: "t", fields: { parent: "card_zz" } });
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "task", title: "a\u0001b" });
    await refusedBoth("CreateCardBody", "POST", "/cards", { type_id: "task", title: "a\u0085b" });
    // and what it takes, the schema takes
    const fine = { type_id: "task", title: "  ünïcode · title  ", fields: { branch: "feat/x y", parent: (await api.task()).id } };
    expect(errorsOf(named("CreateCardBody"), fine)).toEqual([]);
    expect((await api.post("/cards", fine)).status).toBe(201);
  });

  test("DELETE of an entry requires version, as the server does", async () => {
    const param = doc.paths["/cards/{id}/fields/{field}/{entry_id}"].delete.parameters.find((p: any) => p.name === "version");
    expect(param.required).toBe(true);
    const t = await api.task({ fields: { evidence: [{ note: "n" }] } });
    const r = await api.del(`/cards/${t.id}/fields/evidence/${t.fields.evidence[0].entry_id}`);
    expect([r.status, r.body.message]).toEqual([422, "version is required"]);
  });

  test("a board: the keys GET answers are the ones POST takes; another key is refused", async () => {
    const main = (await api.get("/boards/main")).body;
    expect(errorsOf(named("Board"), main)).toEqual([]);
    // written back as it was read: replaced (200), answered with the same keys
    const put = await send("POST", "/boards", "/boards", main);
    expect([put.status, put.body]).toEqual([200, main]);
    const copy = { ...main, id: "copy", transitions: undefined, settings: undefined }; // a copy governs no type: its graph and enforcement would never apply
    await refusedBoth("Board", "POST", "/boards", { ...copy, extra: 1 });
    expect((await send("POST", "/boards", "/boards", copy)).status).toBe(201);
    expect(doc.components.schemas.Board.additionalProperties).toBe(false);
  });

  test("take-next's filter and an entry are objects, not anything", () => {
    expect(errorsOf(named("TakeNextBody"), { filter: "x" })).not.toEqual([]);
    expect(errorsOf(named("EntryBody"), { version: 1, entry: 5 })).not.toEqual([]);
  });
});

describe("what a generated client needs", () => {
  const walk = (s: unknown, visit: (o: Record<string, unknown>, path: string) => void, path = ""): void => {
    if (Array.isArray(s)) s.forEach((x, i) => walk(x, visit, `${path}/${i}`));
    else if (s && typeof s === "object") {
      visit(s as Record<string, unknown>, path);
      for (const [k, v] of Object.entries(s)) walk(v, visit, `${path}/${k}`);
    }
  };

  test("no request schema carries `default` (a generated client would require the key); the description says it", () => {
    const s = doc.components.schemas;
    const found: string[] = [];
    for (const name of Object.keys(s).filter((n) => /^(Fields|Create|Update)/.test(n) || n.endsWith("Body"))) walk(s[name], (o, p) => { if ("default" in o) found.push(`${name}${p}`); });
    expect(found).toEqual([]);
    expect(s.FieldsBug.properties.severity.description).toContain('default: "minor"');
    expect(s.FieldsBug.required).toEqual(["steps"]);
  });

  test("no object schema without properties or additionalProperties (a generated client makes it Record<string, never>)", () => {
    const bare: string[] = [];
    walk(doc.components.schemas, (o, p) => {
      if (o.type === "object" && !o.properties && o.additionalProperties === undefined && !p.endsWith("/properties")) bare.push(p);
    });
    expect(bare).toEqual([]);
    walk(doc.paths, (o, p) => { if (o.schema && (o.schema as any).type === undefined && !(o.schema as any).$ref && !(o.schema as any).oneOf) bare.push(p); });
    expect(bare).toEqual([]);
  });

  test("Card is a union on type_id with typed fields; closed sets are enums", () => {
    const s = doc.components.schemas;
    expect(s.Card.discriminator.mapping).toEqual({ bug: "#/components/schemas/CardBug", review: "#/components/schemas/CardReview", task: "#/components/schemas/CardTask" });
    expect(s.CardFieldsTask.properties.priority.enum).toEqual(["low", "normal", "high", "urgent"]);
    expect(s.CardFieldsTask.required).toBeUndefined();
    expect(s.CardFieldsTask.properties.evidence.items.properties.entry_id).toMatchObject({ pattern: "^ent_", readOnly: true });
    expect(s.Event.properties.type.enum).toContain("item_appended");
    const events = Object.fromEntries(doc.paths["/events"].get.parameters.filter((p: any) => p.in === "query").map((p: any) => [p.name, p]));
    expect(events.types).toMatchObject({ style: "form", explode: false, schema: { type: "array", items: { enum: expect.arrayContaining(["card_created"]) } } });
    const breachType = doc.paths["/breaches"].get.parameters.find((p: any) => p.name === "type");
    expect(breachType.schema.enum).toEqual(["wip_exceeded", "lane_limit", "card_blocked", "status_timeout", "card_idle"]);
  });

  test("every operation declares X-Service-Actor (whom `me` means on reads); the stream declares Last-Event-ID, its frames and 503", async () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) expect([method, path, op.parameters.some((p: any) => p.$ref === "#/components/parameters/Actor")]).toEqual([method, path, true]);
    }
    const stream = doc.paths["/events/stream"].get;
    expect(stream.parameters.map((p: any) => p.name)).toContain("Last-Event-ID");
    for (const frame of [": connected", ": live after", ": replay truncated after", ": keepalive", ": dropped, reconnect", "was removed", "503", "Event"]) expect(stream.description).toContain(frame);
    expect(stream.responses["503"]).toBeDefined();
    // a read resolves `me` by the header
    const mine = await api.task({ owner: "agent-2" }).catch(() => undefined);
    const r = await api.get("/cards?owner=me", { "x-service-actor": "agent-2" });
    expect(r.status).toBe(200);
    if (mine) expect(r.body.items.map((c: any) => c.id)).toContain(mine.id);
  });

  test("PATCH body and POST /boards: described and named", () => {
    expect(doc.components.schemas.PatchCardBody.description).toContain("unknown_field");
    expect(doc.paths["/boards"].post.operationId).toBe("writeBoard");
  });
  test("request and error examples validate against their schemas, and the take-next examples are taken by the server", async () => {
    const shown: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const media = op.requestBody?.content?.["application/json"];
        for (const [name, ex] of Object.entries<any>(media?.examples ?? {})) {
          shown.push(`${method} ${path} ${name}`);
          expect({ [`${method} ${path} ${name}`]: errorsOf(media.schema, ex.value) }).toEqual({ [`${method} ${path} ${name}`]: [] });
        }
      }
    }
    expect(shown).toEqual(expect.arrayContaining(["post /cards/take-next ready", "post /cards/take-next look", "post /cards/{id}/claim claim", "patch /cards/{id} retitle"]));
    const error = doc.components.responses.Error.content["application/json"];
    expect(Object.keys(error.examples)).toEqual(["transition", "stale"]);
    for (const ex of Object.values<any>(error.examples)) expect(errorsOf(error.schema, ex.value)).toEqual([]);
    const look = await send("POST", "/cards/take-next", "/cards/take-next", doc.paths["/cards/take-next"].post.requestBody.content["application/json"].examples.look.value, { "x-service-actor": "agent-1" });
    expect(look.status).toBe(200);
  });
});
