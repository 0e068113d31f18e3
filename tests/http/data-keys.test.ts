/**
 * Keys that are data (fields, an entry, a filter) reach the rules whole: `constructor`,
 * `__proto__` and `prototype` are refused like any unknown key, never silently dropped
 * (valibot's record leaves them out, so the shapes do not use it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";

describe("data keys named like Object internals", () => {
  let api: TestApi;
  let id = "";
  const call = (method: string, path: string, body: string) => api.call(method, path, body || undefined);
  beforeAll(async () => {
    api = await testApi();
    id = (await api.task({ status: "todo" })).id;
  });
  afterAll(() => api.close());

  for (const key of ["constructor", "__proto__", "prototype"]) {
    test(`${key}: unknown_field on create, patch and entry append; a filter on it is refused`, async () => {
      const created = await call("POST", "/cards", `{"type_id":"task","title":"x","fields":{"${key}":{"a":1}}}`);
      expect(created.status).toBe(422);
      expect(created.body).toMatchObject({ error: "unknown_field", field: key });
      const patched = await call("PATCH", `/cards/${id}`, `{"version":1,"fields":{"${key}":"x"}}`);
      expect(patched.body).toMatchObject({ error: "unknown_field", field: key });
      const appended = await call("POST", `/cards/${id}/fields/evidence/append`, `{"version":1,"entry":{"note":"x","${key}":1}}`);
      expect(appended.status).toBe(422);
      expect(appended.body.error).toBe("unknown_field");
      const taken = await call("POST", "/cards/take-next", `{"filter":{"${key}":"x"},"dry_run":true}`);
      expect(taken.status).toBeGreaterThanOrEqual(400);
      expect(taken.status).toBeLessThan(500);
      // nothing was written
      expect((await call("GET", `/cards/${id}`, "")).body.version).toBe(1);
    });
  }
});
