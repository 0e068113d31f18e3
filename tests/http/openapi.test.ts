/** GET /openapi.json: OpenAPI 3.1 from the live workspace, linted by @redocly/cli. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROUTES } from "../../src/api/routes.ts";
import { testApi, type TestApi } from "../helpers/http.ts";

let api: TestApi;
let doc: any;
beforeAll(async () => {
  api = await testApi();
  const r = await api.get("/openapi.json");
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(() => api.close());

describe("GET /openapi.json", () => {
  test("passes `redocly lint` (recommended rules) with no errors and no warnings", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cards-oas-")), "openapi.json");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = spawnSync(join(import.meta.dir, "../../node_modules/.bin/redocly"), ["lint", file, "--format", "json"], { encoding: "utf8", env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } });
    const report = JSON.parse(r.stdout.slice(r.stdout.indexOf("{")));
    const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} @ ${p.location?.[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(r.status).toBe(0);
  }, 60_000);

  test("covers every route of the table but itself, plus the SSE stream; no [proposed] route", () => {
    const ops = Object.entries(doc.paths).flatMap(([p, o]: [string, any]) => Object.keys(o).map((m) => `${m.toUpperCase()} ${p}`));
    for (const r of ROUTES) {
      if (r.path === "/openapi.json") continue;
      expect(ops).toContain(`${r.method} ${r.path.replace(/\*\*:([a-z_]+)/g, "{$1}").replace(/:([a-z_]+)/g, "{$1}")}`);
    }
    expect(ops).toContain("GET /events/stream");
    expect(ops.some((o) => o.includes("/openapi.json"))).toBe(false);
    for (const proposed of ["/views", "/cards/batch", "/workspace/card-types"]) expect(ops.some((o) => o.includes(proposed))).toBe(false);
  });

  test("both reload routes are marked serve-only", () => {
    expect(doc.paths["/workspace/reload"].post["x-serve-only"]).toBe(true);
    expect(doc.paths["/boards"].post["x-serve-only"]).toBe(true);
    expect(doc.paths["/cards"].post["x-serve-only"]).toBeUndefined();
  });

  test("every success status and response header the server sends is documented", () => {
    const created = doc.paths["/cards"].post.responses;
    expect(Object.keys(created)).toEqual(expect.arrayContaining(["201", "200"]));
    expect(Object.keys(created["201"].headers)).toEqual(["Idempotent-Replayed", "Dry-Run"]);
    expect(Object.keys(doc.paths["/users"].post.responses)).toEqual(expect.arrayContaining(["201", "200"]));
    expect(Object.keys(doc.paths["/boards"].post.responses)).toEqual(expect.arrayContaining(["201", "200"]));
    expect(doc.paths["/cards/{id}/upgrade-schema"].post.responses["200"].headers["Upgrade-Report"]).toBeDefined();
    expect(doc.paths["/cards/take-next"].post.responses["200"].headers["Dry-Run"]).toBeDefined();
    expect(doc.paths["/cards/{id}"].get.responses["200"].headers).toBeUndefined();
  });

  test("per-type field schemas for create and update bodies, from the live definitions", async () => {
    const s = doc.components.schemas;
    expect(s.UpdateTask.properties.fields.properties.priority.enum).toEqual(["low", "normal", "high", "urgent"]);
    expect(s.FieldsTask.properties.components).toMatchObject({ type: ["array", "null"], items: { enum: ["api", "cli", "ui", "store", "docs"] } });
    expect(s.FieldsTask.properties.estimate_hours).toMatchObject({ type: ["number", "null"], minimum: 0, maximum: 200 });
    expect(s.FieldsBug.required).toContain("steps");
    expect(s.CreateReview.properties.status.enum).toEqual(["todo", "doing", "review", "done"]);
    expect(s.CreateCardBody.oneOf.length).toBe(3);
    expect(s.UpdateTask.required).toEqual(["version"]);
    expect(s.UpdateTask.properties.fields.properties.evidence).toBeUndefined(); // repeating: entry routes only
    expect(s.ErrorEnvelope.required).toEqual(["error", "message"]);
    // a reloaded type shows up
    writeFileSync(join(api.dir, "definitions/card-types/note.json"), JSON.stringify({ id: "note", name: "Note", schema_version: 1, fields: [{ id: "body", type: "text", required: true }] }));
    await api.post("/workspace/reload");
    const again = (await api.get("/openapi.json")).body;
    expect(again.components.schemas.CreateNote.required).toEqual(["type_id", "title", "fields"]);
  });

  test("the create union maps each type id to its schema; update fields take null; 5XX and artifact types are declared", async () => {
    const s = doc.components.schemas;
    expect(s.CreateCardBody.discriminator).toEqual({ propertyName: "type_id", mapping: { bug: "#/components/schemas/CreateBug", review: "#/components/schemas/CreateReview", task: "#/components/schemas/CreateTask" } });
    expect(s.UpdateTask.properties.fields.properties.branch.type).toEqual(["string", "null"]);
    expect(doc.paths["/cards"].post.responses["5XX"]).toEqual({ $ref: "#/components/responses/Unavailable" });
    expect(Object.keys(doc.paths["/artifacts/{path}"].get.responses["200"].content)).toEqual(["*/*"]);
    // what the server takes: a larger limit is clamped, not refused; blocked reads 1 and 0 too
    const params = Object.fromEntries(doc.paths["/cards"].get.parameters.map((p: any) => [p.name, p.schema]));
    expect(params.limit).toEqual({ type: "integer", minimum: 1 });
    expect(params.blocked.enum).toEqual(["true", "false", "1", "0"]);
    expect((await api.get("/cards?limit=201&blocked=0")).status).toBe(200);
  });

  test("the title schema refuses what the server refuses: blank titles, in create and update bodies", async () => {
    const Ajv = (await import("ajv/dist/2020.js")).default;
    const ajv = new Ajv({ strict: false });
    for (const name of ["CreateTask", "UpdateTask"]) {
      const title = ajv.compile(doc.components.schemas[name].properties.title);
      expect([title("Fix it"), title(""), title("   "), title("\t")]).toEqual([true, false, false, false]);
    }
    const blank = await api.post("/cards", { type_id: "task", title: "   " });
    expect([blank.status, blank.body.error]).toEqual([422, "validation_failed"]);
    expect(doc.components.schemas.CreateTask.properties.title.description).toContain("bytes");
  });

  test("card type ids that would name the same components get distinct ones", async () => {
    const odd = await testApi({ edit: (f) => {
      for (const id of ["my-type", "my_type", "card_body"]) f[`definitions/card-types/${id}.json`] = { id, name: id, schema_version: 1, fields: [{ id: "x", type: "string" }] };
    } });
    try {
      const s = (await odd.get("/openapi.json")).body.components.schemas;
      const { mapping } = s.CreateCardBody.discriminator;
      expect(Object.keys(mapping).sort()).toEqual(["bug", "card_body", "my-type", "my_type", "review", "task"]);
      expect(new Set(Object.values(mapping)).size).toBe(6);
      for (const [id, target] of Object.entries(mapping)) expect(s[(target as string).split("/").pop()!].properties.type_id.const).toBe(id);
      expect(s.CreateCardBody.oneOf).toHaveLength(6);
    } finally {
      odd.close();
    }
  });
});
