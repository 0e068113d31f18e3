/** a dry run never replays or checks an Idempotency-Key (src/service/service.ts mutate). */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";

let api: TestApi;
beforeAll(async () => { api = await testApi(); });
afterAll(() => api.close());

// I5 (a dry run looks up the Idempotency-Key)
test("a dry run under a key already used answers the dry run, not the stored answer or 422", async () => {
  const h = { "idempotency-key": "dry-1" };
  const real = await api.post("/cards", { type_id: "task", title: "real" }, h);
  expect(real.status).toBe(201);
  const dry = await api.post("/cards", { type_id: "task", title: "dry", dry_run: true }, h);
  expect(dry.status).toBe(200);
  expect(dry.headers.get("idempotent-replayed")).toBeNull();
  expect(dry.body.title).toBe("dry");
});
