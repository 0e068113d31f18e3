/**
 * A lone UTF-16 surrogate (`\ud800` without its pair) is refused at every entry point
 * (request bodies, --data, tool arguments) with 400 bad_request naming where: stored,
 * SQLite kept U+FFFD while the event log kept the escape, and every strict JSON reader
 * (jq, Python) then refused the event feed for good. (No String.raw here: Bun's
 * transpiler rewrites an escaped pair inside one to `\u{...}`.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findLoneSurrogate } from "../../src/domain/json.ts";
import { testApi, type TestApi } from "../helpers/http.ts";
import { assertBinary, run } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { init, rawSession, rpc } from "../mcp/helpers.ts";

describe("unpaired surrogates in input", () => {
  let api: TestApi;
  beforeAll(async () => { api = await testApi(); });
  afterAll(() => api.close());

  test("HTTP: 400 naming the path, for values and keys; nothing is written", async () => {
    const card = await api.task({ status: "todo" });
    const cases: Array<[string, string, string, string]> = [
      ["POST", "/cards", '{"type_id":"task","title":"lone \\ud800 surrogate"}', "title"],
      ["POST", "/cards", '{"type_id":"task","title":"x","fields":{"components":["api","\\udfff"]}}', "fields.components[1]"],
      ["POST", "/cards", '{"type_id":"task","title":"x","fields":{"a\\ud83d":1}}', "fields.a\ud83d"],
      ["POST", `/cards/${card.id}/comments`, '{"body":"end \\ud83d"}', "body"],
      ["POST", "/cards/take-next", '{"filter":{"title":{"$contains":"\\ud800"}}}', "filter.title.$contains"],
    ];
    const before = (await api.get("/events")).body.items.length;
    for (const [method, path, body, at] of cases) {
      const r = await api.call(method, path, body);
      expect([path, r.status, r.body.error, r.body.field]).toEqual([path, 400, "bad_request", at]);
      expect(r.body.message).toContain("unpaired UTF-16 surrogate");
      expect(r.body.hint).toContain("surrogate pair");
    }
    expect((await api.get("/events")).body.items.length).toBe(before);
  });

  test("in-process: a body string holding a lone surrogate itself, not as an escape, is refused the same way", async () => {
    const { dispatch } = await import("../../src/api/dispatch.ts");
    const body = '{"type_id":"task","title":"raw \ud800 half"}';
    expect(body.isWellFormed()).toBe(false);
    const r = await dispatch(api.svc, { method: "POST", path: "/cards", query: {}, headers: { "x-service-actor": "ada" }, body }) as { status: number; body: any };
    expect([r.status, r.body.error, r.body.field]).toEqual([400, "bad_request", "title"]);
  });

  test("a proper pair, escaped or not, is stored and read back as the character", async () => {
    const r = await api.call("POST", "/cards", '{"type_id":"task","title":"rocket \\ud83d\\ude80 and 🚀"}');
    expect(r.status).toBe(201);
    expect(r.body.title).toBe("rocket 🚀 and 🚀");
    expect((await api.get(`/cards/${r.body.id}`)).body.title).toBe("rocket 🚀 and 🚀");
  });

  test("findLoneSurrogate names the first bad string by its path", () => {
    expect(findLoneSurrogate({ a: ["ok", { b: "x\ud800" }] })).toBe("a[1].b");
    expect(findLoneSurrogate("\udc00")).toBe("");
    expect(findLoneSurrogate({ "🚀": ["\ud83d\ude80"] })).toBeUndefined();
  });
});

describe("unpaired surrogates through the binary", () => {
  test("CLI --data and a tool-server call are refused the same way", async () => {
    assertBinary();
    const dir = await makeWorkspace();
    const cli = run(["cards", "create", "--data", '{"type_id":"task","title":"lone \\ud800"}', "--dir", dir]);
    expect(cli.code).not.toBe(0);
    expect(cli.stdout).toBe("");
    expect(cli.error).toMatchObject({ error: "bad_request", field: "title" });
    const { answers } = rawSession(dir, [init(), rpc(1, "tools/call", { name: "create_task", arguments: { title: "x" } }).replace('"title":"x"', '"title":"x\\ud800"')]);
    const res = answers.find((a) => a.id === 1).result;
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toMatchObject({ error: "bad_request", field: "title" });
    // nothing was written: the feed stays readable by a strict parser and has no card
    const events = run(["events", "--dir", dir]);
    expect(events.json.items.filter((e: any) => e.type === "card_created")).toEqual([]);
  });
});
