/**
 * Request keys that name Object.prototype members (`toString`, `constructor`, `__proto__`)
 * are ordinary unknown keys: never a lookup into the prototype, never a 500.
 */
import { describe, expect, test } from "bun:test";
import { dispatch } from "../../src/api/dispatch.ts";
import { openTestService } from "../helpers/workspace.ts";

describe("keys that name Object.prototype members", () => {
  test("a take-next filter key such as toString is an unknown key (422), and none of them is a 500", async () => {
    const svc = await openTestService(undefined, "serve");
    try {
      const take = (body: string) => dispatch(svc, { method: "POST", path: "/cards/take-next", query: {}, headers: { "x-service-actor": "ada" }, body });
      const r = await take('{"filter":{"toString":1}}');
      expect(r.status).toBe(422);
      expect((r.body as { field?: string }).field).toBe("filter.toString");
      // refused alike, not dropped (valibot's record() would leave them out: the shapes do not use it)
      for (const body of ['{"filter":{"constructor":"x"}}', '{"filter":{"__proto__":{"a":1}}}']) expect((await take(body)).status).toBe(422);
    } finally {
      svc.close();
    }
  });

  test("a card's fields with them are refused as unknown fields, not dropped", async () => {
    const svc = await openTestService(undefined, "serve");
    try {
      const r = await dispatch(svc, {
        method: "POST", path: "/cards", query: {}, headers: { "x-service-actor": "ada" },
        body: '{"type_id":"task","title":"t","fields":{"constructor":"y","priority":"high"}}',
      });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "unknown_field", field: "constructor" });
    } finally {
      svc.close();
    }
  });
});
