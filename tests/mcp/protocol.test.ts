/** `cards mcp` protocol: initialize and version negotiation, framing, JSON-RPC errors, start-up refusal. */
import { beforeAll, describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { assertBinary, cleanEnv } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";
import { connect, init, rawSession, rpc } from "./helpers.ts";

let dir: string;
beforeAll(() => {
  assertBinary();
  dir = makeWorkspace();
});

describe("initialize", () => {
  test("the SDK client connects: server info, tools capability with listChanged, instructions teaching the loop", async () => {
    const s = await connect(dir);
    try {
      expect(s.client.getServerVersion()).toMatchObject({ name: "cards" });
      expect(s.client.getServerCapabilities()).toEqual({ tools: { listChanged: true } });
      const text = s.client.getInstructions()!;
      for (const word of ["workspace", "take_next", "append_entry", "attach_artifact", "update_<type>", "add_comment", "history", '"agent-1"']) {
        expect(text).toContain(word);
      }
      expect(text.length).toBeLessThan(1200);
      expect((await s.client.ping()) as unknown).toEqual({});
    } finally {
      await s.close();
    }
  });

  test("a supported version is echoed; an unknown one is answered with the latest", () => {
    for (const v of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]) {
      const { answers } = rawSession(dir, [init(v)]);
      expect(answers[0].result.protocolVersion).toBe(v);
    }
    expect(rawSession(dir, [init("2099-01-01")]).answers[0].result.protocolVersion).toBe("2025-11-25");
  });

  test("initialize without protocolVersion is invalid params", () => {
    const { answers } = rawSession(dir, [rpc(1, "initialize", {})]);
    expect(answers[0]).toMatchObject({ id: 1, error: { code: -32602 } });
  });
});

describe("JSON-RPC errors", () => {
  test("parse error, unknown method, notifications never answered, invalid request, ping, batches", () => {
    const { answers, code, stderr } = rawSession(dir, [
      init(),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "{not json",
      rpc(2, "no/such/method"),
      JSON.stringify({ jsonrpc: "2.0", method: "no/such/notification" }),
      JSON.stringify({ jsonrpc: "2.0", id: 3 }),
      JSON.stringify({ id: 4, method: "ping" }),
      rpc("five", "ping"),
      JSON.stringify([JSON.parse(rpc(6, "ping")), { jsonrpc: "2.0", method: "notifications/cancelled", params: {} }]),
    ]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const byId = (id: unknown) => answers.find((a) => !Array.isArray(a) && a.id === id);
    expect(answers.find((a) => a.error?.code === -32700)).toMatchObject({ id: null });
    expect(byId(2).error.code).toBe(-32601);
    expect(byId(3).error.code).toBe(-32600);
    expect(byId(4).error.code).toBe(-32600);
    expect(byId("five")).toEqual({ jsonrpc: "2.0", id: "five", result: {} });
    expect(answers.find((a) => Array.isArray(a))).toEqual([{ jsonrpc: "2.0", id: 6, result: {} }]);
    // 0, parse error, 2, 3, 4, five, batch: nothing for the two notifications
    expect(answers.length).toBe(7);
  });

  test("a message nested past 64 levels is an invalid request, answered with its id", () => {
    const deep = `${"[".repeat(60_000)}${"]".repeat(60_000)}`;
    const { answers, code } = rawSession(dir, [init(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_task","arguments":{"title":${deep}}}}`,
      `{"jsonrpc":"2.0","method":"notifications/x","params":${deep}}`, deep, rpc(8, "ping")]);
    expect(code).toBe(0);
    // initialize, 7, the deep batch (id null) and 8: the deep notification gets no answer
    expect(answers.length).toBe(4);
    expect(answers.find((a) => a.id === null)).toMatchObject({ error: { code: -32600 } });
    expect(answers.find((a) => a.id === 7)).toMatchObject({ error: { code: -32600, message: expect.stringContaining("nests deeper than 64 levels") } });
    expect(answers.find((a) => a.id === 8)).toMatchObject({ result: {} });
  });

  test("an unknown tool is -32602 for the SDK client too", async () => {
    const s = await connect(dir);
    try {
      const e = await s.client.callTool({ name: "no_such_tool", arguments: {} }).catch((x) => x);
      expect(e).toBeInstanceOf(McpError);
      expect(e.code).toBe(-32602);
    } finally {
      await s.close();
    }
    const { answers } = rawSession(dir, [init(), rpc(1, "tools/call", { name: "nope" }), rpc(2, "tools/call", {})]);
    expect(answers[1]).toMatchObject({ id: 1, error: { code: -32602, data: { valid_options: expect.arrayContaining(["take_next"]) } } });
    expect(answers[2]).toMatchObject({ id: 2, error: { code: -32602 } });
  });

  test("stdout carries one message per line and nothing else; a partial last line is still answered", () => {
    const { stdout, answers } = rawSession(dir, [init(), rpc(1, "tools/list"), rpc(2, "tools/call", { name: "workspace", arguments: {} })]);
    expect(stdout.endsWith("\n")).toBe(true);
    expect(stdout.trim().split("\n").length).toBe(3);
    expect(answers.map((a) => a.id).sort()).toEqual([0, 1, 2]);
    const partial = spawnSync(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "a" }), input: `${init()}\r\n${rpc(1, "ping")}`, encoding: "utf8" });
    expect(partial.stdout.trim().split("\n").map((l) => JSON.parse(l).id)).toEqual([0, 1]);
  });
});

describe("start-up", () => {
  test("without an actor it still answers, as HTTP does: reads work, a write is an actor_required tool result naming the fix", () => {
    const noUser = makeWorkspace((f) => { delete (f["definitions/workspace.json"] as any).settings.default_user; });
    const r = rawSession(noUser, [
      init(),
      rpc(1, "tools/call", { name: "list_cards", arguments: {} }),
      rpc(2, "tools/call", { name: "create_task", arguments: { title: "nobody's" } }),
      rpc(3, "tools/call", { name: "take_next", arguments: {} }),
    ], {});
    expect(r.code).toBe(0);
    const byId = new Map(r.answers.map((a) => [a.id, a]));
    expect(byId.get(0).result.instructions).toContain("No actor is set");
    expect(byId.get(1).result.isError).toBeUndefined();
    expect(byId.get(1).result.structuredContent.items).toEqual([]);
    for (const id of [2, 3]) {
      const res = byId.get(id).result;
      expect(res.isError).toBe(true);
      expect(res.structuredContent).toMatchObject({ error: "actor_required", hint: expect.stringContaining("CARDS_ACTOR") });
    }
    expect(r.stderr).toContain("no actor");
    // nothing was written
    const after = rawSession(noUser, [init(), rpc(1, "tools/call", { name: "list_cards", arguments: {} })], { CARDS_ACTOR: "ada" });
    expect(after.answers.find((a) => a.id === 1).result.structuredContent.items).toEqual([]);
  });

  test("an actor over 200 characters is refused at start, as on every surface; a line that is not UTF-8 is -32700", () => {
    for (const env of [{ CARDS_ACTOR: "a".repeat(5000) }]) {
      const r = rawSession(dir, [init()], env);
      expect([r.code, r.stdout]).toEqual([2, ""]);
      expect(JSON.parse(r.stderr.trim().split("\n").at(-1)!)).toMatchObject({ error: "bad_request", field: "actor", message: "the actor is 5000 characters; at most 200" });
    }
    // one holding ", " too, as over HTTP (a hook could not call back as it: before, it was taken)
    const joined = rawSession(dir, [init()], { CARDS_ACTOR: "ann, bee" });
    expect([joined.code, joined.stdout]).toEqual([2, ""]);
    expect(JSON.parse(joined.stderr.trim().split("\n").at(-1)!)).toMatchObject({ error: "bad_request", field: "actor" });
    const bytes = Buffer.concat([Buffer.from(`${init()}\n`), Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"raw '), Buffer.from([0xff, 0xfe]), Buffer.from(' bytes"}}}\n')]);
    const r = spawnSync(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "agent-1" }), input: bytes, encoding: "utf8", timeout: 20_000 });
    const answers = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    // before: the card was created with "raw \uFFFD\uFFFD bytes"
    expect(answers.filter((a) => a.id !== 0)).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: the message is not valid UTF-8" } }]);
  });

  test("settings.default_user is the fallback actor; CARDS_ACTOR wins over it", async () => {
    const one = rawSession(dir, [init(), rpc(1, "tools/call", { name: "create_task", arguments: { title: "by default" } })], {});
    expect(one.answers[1].result.structuredContent.created_by).toBe("ada");
    const two = rawSession(dir, [init(), rpc(1, "tools/call", { name: "create_task", arguments: { title: "by env" } })], { CARDS_ACTOR: "agent-9" });
    expect(two.answers[1].result.structuredContent.created_by).toBe("agent-9");
  });

  test("SIGTERM with stdin still open ends the server promptly with exit 0", async () => {
    const p = spawn(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "a" }), stdio: ["pipe", "pipe", "pipe"] });
    const first = new Promise<string>((r) => p.stdout!.once("data", (b) => r(String(b))));
    p.stdin!.write(`${rpc(1, "ping")}\n`);
    expect(JSON.parse(await first)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    const exited = new Promise<number | null>((r) => p.once("exit", (code) => r(code)));
    p.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  test("SIGTERM while input never pauses (</dev/zero: one line without end) still ends the server (before: it never heard the signal)", async () => {
    const zero = openSync("/dev/zero", "r");
    const p = spawn(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "a" }), stdio: [zero, "pipe", "pipe"] });
    closeSync(zero);
    const exited = new Promise<number | null>((r) => p.once("exit", (code) => r(code)));
    await Bun.sleep(1000); // reading for a while
    p.kill("SIGTERM");
    const code = await Promise.race([exited, Bun.sleep(5000).then(() => "still running")]);
    if (code === "still running") p.kill("SIGKILL");
    expect(code).toBe(0);
  });

  test("a missing workspace fails before serving: envelope on stderr, nothing on stdout", () => {
    const r = rawSession("/nonexistent/cards-ws", [init()]);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stderr.trim().split("\n").at(-1)!).error).toBeString();
    expect(r.stdout).toBe("");
  });
});
