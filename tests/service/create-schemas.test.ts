/**
 * The create schemas (HTTP and tools) against the service that answers them: what a schema
 * takes for "not given" the service takes, and what the service refuses the schema does.
 */
import { afterAll, expect, test } from "bun:test";
import Ajv from "ajv/dist/2020.js";
import { createCard, createFieldSchema, fieldSchema } from "../../src/service/index.ts";
import { createTool } from "../../src/mcp/schemas.ts";
import { editJson, makeWorkspace, openTestService } from "../helpers/workspace.ts";

const dir = makeWorkspace();
editJson(dir, "definitions/card-types/task.json", (t) => {
  t.fields.push(
    { id: "areas", label: "Areas", type: "enum", multiple: true, required: true, default: ["api"], options: ["api", "cli"] },
    { id: "extra_areas", label: "Extra areas", type: "enum", multiple: true, options: ["api", "cli"] },
  );
});
const svc = await openTestService(dir);
afterAll(() => svc.close());
const ajv = new Ajv({ strict: false });

test("a required multiple field with a default: null takes the default, [] is refused by the schema as by the service", async () => {
  const task = svc.defs.cardTypes.get("task")!;
  const areas = task.fields.find((f) => f.id === "areas")!;
  const schema = ajv.compile(createFieldSchema(areas, fieldSchema(areas, svc.defs)));
  const tool = ajv.compile(createTool(task, svc.defs).inputSchema);
  expect([schema(null), schema([]), schema(["cli"])]).toEqual([true, false, true]);
  expect(tool({ title: "x", fields: { areas: [] } })).toBe(false);
  expect((await createCard(svc, { type_id: "task", title: "null", fields: { areas: null } }, { actor: "ada" })).fields.areas).toEqual(["api"]);
  await expect(createCard(svc, { type_id: "task", title: "empty", fields: { areas: [] } }, { actor: "ada" })).rejects.toMatchObject({ code: "validation_failed" });
  // an optional one takes [] for "not given" in both
  const extra = task.fields.find((f) => f.id === "extra_areas")!;
  expect(ajv.compile(createFieldSchema(extra, fieldSchema(extra, svc.defs)))([])).toBe(true);
  expect((await createCard(svc, { type_id: "task", title: "none", fields: { extra_areas: [] } }, { actor: "ada" })).fields.extra_areas).toBeUndefined();
});
