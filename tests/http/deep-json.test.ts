/**
 * Request JSON nests at most 64 levels (domain/json.ts): a small body of brackets is a
 * 400 on every JSON route, never a 5xx from a recursive walk after the parse.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, exceedsJsonDepth } from "../../src/domain/json.ts";
import { testApi, type TestApi } from "../helpers/http.ts";

const nest = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);

describe("JSON nesting bound", () => {
  let api: TestApi;
  let id = "";
  const call = (method: string, path: string, body: string) => api.call(method, path, body);
  beforeAll(async () => {
    api = await testApi();
    id = (await api.task({ status: "todo" })).id;
  });
  afterAll(() => api.close());

  test("60,000 levels (120 KB, under the size limit) is 400 bad_request on every JSON route", async () => {
    const deep = nest(60_000);
    const cases: Array<[string, string, string]> = [
      ["POST", "/cards", `{"type_id":"task","title":${deep}}`],
      ["POST", "/cards", `{"type_id":"task","title":"x","fields":{"description":${deep}}}`],
      ["PATCH", `/cards/${id}`, `{"version":1,"fields":{"branch":${deep}}}`],
      ["POST", "/cards/take-next", `{"filter":{"status":${deep}}}`],
      ["POST", `/cards/${id}/comments`, `{"body":${deep}}`],
      ["POST", `/cards/${id}/links`, `{"type_id":"depends-on","target":${deep}}`],
      ["POST", `/cards/${id}/claim`, `{"version":${deep}}`],
    ];
    for (const [method, path, body] of cases) {
      const r = await call(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, 400]);
      expect(r.body).toMatchObject({ error: "bad_request", message: `request body nests deeper than ${MAX_JSON_DEPTH} levels` });
    }
  });

  test("the bound is 64 levels: 65 is refused, 64 reaches validation (422 for a bad title)", async () => {
    // the object itself is level 1, so the title array adds 63 more to reach 64
    expect((await call("POST", "/cards", `{"type_id":"task","title":${nest(64)}}`)).body.error).toBe("bad_request");
    const r = await call("POST", "/cards", `{"type_id":"task","title":${nest(63)}}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_failed");
  });

  test("exceedsJsonDepth walks without recursion", () => {
    expect(exceedsJsonDepth(JSON.parse(nest(64)))).toBe(false);
    expect(exceedsJsonDepth(JSON.parse(nest(65)))).toBe(true);
    expect(exceedsJsonDepth(JSON.parse(nest(5000)))).toBe(true);
    expect(exceedsJsonDepth({ a: [{ b: 1 }], c: null })).toBe(false);
    expect(exceedsJsonDepth("x")).toBe(false);
  });
});
