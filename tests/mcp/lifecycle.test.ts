/** `cards mcp` across sessions and time: racing take_next, definition reloads, schema upgrades, artifacts. */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertBinary, cleanEnv } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";
import { connect, rawSession, waitFor, type Session } from "./helpers.ts";

beforeAll(() => assertBinary());

describe("two clients racing take_next on one workspace", () => {
  test("every card goes to exactly one of them", async () => {
    const dir = makeWorkspace();
    const [a, b] = await Promise.all([connect(dir, "agent-1"), connect(dir, "agent-2")]);
    try {
      const N = 30;
      for (let i = 0; i < N; i++) await a.call("create_task", { title: `job ${i}`, status: "todo" });
      const drain = async (s: Session): Promise<string[]> => {
        const got: string[] = [];
        for (;;) {
          const r = await s.call("take_next", { filter: { blocked: false }, status: "doing" });
          if (r.isError) throw new Error(r.text);
          if (!r.data.card) return got;
          got.push(r.data.card.id);
        }
      };
      const [ga, gb] = await Promise.all([drain(a), drain(b)]);
      const all = [...ga, ...gb];
      expect(new Set(all).size).toBe(all.length); // never the same card twice
      const rest = await drain(a); // a lost race reads like an empty queue: sweep what is left
      expect(all.length + rest.length).toBe(N);
      expect(ga.length).toBeGreaterThan(0);
      expect(gb.length).toBeGreaterThan(0);
      const owners = (await a.call("list_cards", { type_id: "task", limit: 200 })).data.items;
      for (const c of owners) expect(c.owner).toBe(gb.includes(c.id) ? "agent-2" : "agent-1");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 30_000);
});

/** The sample task at schema_version 1: priority optional, plus a field v2 drops. */
function taskV1(files: Record<string, any>): void {
  const t = files["definitions/card-types/task.json"];
  t.schema_version = 1;
  delete t.migrations;
  const p = t.fields.find((f: any) => f.id === "priority");
  delete p.required;
  delete p.default;
  t.fields.push({ id: "legacy", type: "string" });
}

describe("definitions change while the server runs", () => {
  test("tools/list_changed after a good edit; a bad edit keeps the old tools and says why on stderr", async () => {
    const dir = makeWorkspace();
    const s = await connect(dir);
    try {
      const note = { id: "note", name: "Note", schema_version: 1, fields: [{ id: "body", type: "text", required: true, description: "What to remember." }] };
      writeFileSync(join(dir, "definitions/card-types/note.json"), JSON.stringify(note));
      const tools = await waitFor(() => s.changes.at(-1), 5000, "tools/list_changed");
      const create = tools.find((t) => t.name === "create_note")!;
      expect((create.inputSchema as any).properties.fields).toMatchObject({ required: ["body"], properties: { body: { description: "What to remember." } } });
      expect((await s.call("create_note", { title: "n", fields: { body: "x" } })).data.type_id).toBe("note");

      writeFileSync(join(dir, "definitions/card-types/note.json"), "{ not json");
      await waitFor(() => (s.stderr().includes("not reloaded") ? true : undefined), 5000, "the reload failure on stderr");
      expect(s.changes.length).toBe(1);
      expect((await s.client.listTools()).tools.map((t) => t.name)).toContain("create_note");
      expect((await s.call("create_note", { title: "still", fields: { body: "y" } })).isError).toBe(false);
    } finally {
      await s.close();
    }
  }, 20_000);
});

describe("upgrade_schema", () => {
  test("previews unless confirm is true; confirm applies field_defaults and drops removed fields", async () => {
    const dir = makeWorkspace(taskV1);
    const s = await connect(dir);
    try {
      const old = (await s.call("create_task", { title: "old", fields: { legacy: "keep?" } })).data;
      expect(old).toMatchObject({ schema_version: 1, fields: { legacy: "keep?" } });
      const same = (await s.call("upgrade_schema", { card_id: old.id })).data;
      expect(same).toMatchObject({ applied: false, report: { from: 1, to: 1, fields_dropped: [] } });
      // confirming an upgrade to the version the card already has changes nothing: not applied
      const current = (await s.call("upgrade_schema", { card_id: old.id, confirm: true })).data;
      expect(current).toMatchObject({ applied: false, card: { version: old.version } });

      const v2 = makeWorkspace(); // the sample files hold task v2 with a migration
      writeFileSync(join(dir, "definitions/card-types/task.json"), readFileSync(join(v2, "definitions/card-types/task.json"), "utf8"));
      await waitFor(() => s.changes.at(-1), 5000, "tools/list_changed");

      const preview = (await s.call("upgrade_schema", { card_id: old.id })).data;
      expect(preview).toMatchObject({
        applied: false,
        report: { from: 1, to: 2, defaults_applied: { priority: "normal" }, fields_dropped: ["legacy"] },
        card: { schema_version: 2, fields: { priority: "normal" } },
      });
      const stored = (await s.call("get_card", { card_id: old.id })).data;
      expect(stored).toMatchObject({ schema_version: 1, version: old.version, fields: { legacy: "keep?" } });

      const done = (await s.call("upgrade_schema", { card_id: old.id, confirm: true })).data;
      expect(done).toMatchObject({ applied: true, report: { from: 1, to: 2 }, card: { schema_version: 2, version: old.version + 1 } });
      expect(done.card.fields.legacy).toBeUndefined();
      const history = (await s.call("history", { card_id: old.id })).data.items;
      expect(history.at(-1).type).toBe("schema_upgraded");

      const down = await s.call("upgrade_schema", { card_id: old.id, target_version: 1, confirm: true });
      expect(down).toMatchObject({ isError: true, data: { error: "schema_version_mismatch", valid_options: [2] } });
    } finally {
      await s.close();
    }
  }, 20_000);
});

describe("artifacts", () => {
  test("attach_artifact and get_artifact round-trip text and binary bytes", async () => {
    const s = await connect(makeWorkspace());
    try {
      const card = (await s.call("create_task", { title: "with output" })).data;
      const text = "# Report\n\nAll green.\n";
      const attached = await s.call("attach_artifact", { card_id: card.id, field: "output", content_base64: Buffer.from(text).toString("base64") });
      expect(attached.isError).toBe(false);
      const meta = attached.data.fields.output;
      const uri: string = meta.uri;
      expect(uri).toStartWith("artifacts/sha256/");
      expect(meta).toMatchObject({ size: text.length, sha256: uri.split("/").at(-1) });
      const read = (await s.call("get_artifact", { uri })).data;
      expect(read).toMatchObject({ uri, size: text.length, text });

      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const bin = (await s.call("attach_artifact", { card_id: card.id, field: "output", content_base64: bytes.toString("base64") })).data.fields.output;
      const back = (await s.call("get_artifact", { uri: bin.uri })).data;
      expect(back.text).toBeUndefined();
      expect(Buffer.from(back.content_base64, "base64").equals(bytes)).toBe(true);

      expect((await s.call("attach_artifact", { card_id: card.id, field: "output", content_base64: "not base64!" })).data.error).toBe("validation_failed");
      const bug = (await s.call("create_bug", { title: "b", fields: { steps: "run it" } })).data;
      expect((await s.call("attach_artifact", { card_id: bug.id, field: "logs", content_base64: "aGk=" })).data.error).toBe("validation_failed");
      expect((await s.call("attach_artifact", { card_id: card.id, field: "branch", content_base64: "aGk=" })).data).toMatchObject({ valid_options: ["output"] });
      expect((await s.call("get_artifact", { uri: "artifacts/../../definitions/workspace.json" })).data.error).toBe("not_found");
    } finally {
      await s.close();
    }
  }, 20_000);
});

describe("the session's actor", () => {
  test("an actor that is not registered is named on stderr at start (its claims would fail); a registered one is not", async () => {
    const dir = makeWorkspace();
    const ghost = rawSession(dir, [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })], { CARDS_ACTOR: "ghost-x" });
    expect(ghost.answers[0]).toMatchObject({ id: 1, result: {} });
    expect(ghost.stderr).toContain('actor "ghost-x" is not a registered user');
    expect(ghost.stderr).toContain("cards users add ghost-x");
    const known = rawSession(dir, [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })], { CARDS_ACTOR: "agent-1" });
    expect(known.stderr).not.toContain("not a registered user");
  });
});

describe("the workspace it serves", () => {
  test("CARDS_URL alone is refused (before: the tools wrote to the workspace of the working directory); --dir or CARDS_DIR name one", () => {
    const dir = makeWorkspace();
    const { spawnSync } = require("node:child_process");
    const ping = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`;
    const viaUrl = spawnSync(BIN, ["mcp"], { cwd: dir, env: cleanEnv({ CARDS_URL: "http://127.0.0.1:9/" }), input: ping, encoding: "utf8", timeout: 20_000 });
    expect(viaUrl.status).toBe(2);
    expect(viaUrl.stdout).toBe("");
    expect(JSON.parse(viaUrl.stderr.trim().split("\n").at(-1))).toMatchObject({ error: "usage", field: "CARDS_URL" });
    for (const env of [{ CARDS_URL: "http://127.0.0.1:9/", CARDS_DIR: dir }]) {
      const r = spawnSync(BIN, ["mcp"], { cwd: "/", env: cleanEnv(env), input: ping, encoding: "utf8", timeout: 20_000 });
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toMatchObject({ id: 1, result: {} });
    }
    const withDir = spawnSync(BIN, ["mcp", "--dir", dir], { cwd: "/", env: cleanEnv({ CARDS_URL: "http://127.0.0.1:9/" }), input: ping, encoding: "utf8", timeout: 20_000 });
    expect(withDir.status).toBe(0);
  });
});

describe("the client goes away", () => {
  test("a closed stdout (EPIPE) stops the server cleanly: exit 0, one line on stderr, no stack", async () => {
    const { spawn } = await import("node:child_process");
    const { BIN } = await import("../helpers/workspace.ts");
    const { cleanEnv } = await import("../helpers/binary.ts");
    const dir = makeWorkspace();
    const child = spawn(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "agent-1" }), stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => { stderr += d; });
    child.stdout.destroy(); // the reading end is gone: the server's first answer meets EPIPE
    const call = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`;
    child.stdin.write(call(1));
    const code = await new Promise<number | null>((resolve) => {
      child.on("exit", resolve);
      setTimeout(() => { if (child.exitCode === null) child.stdin.write(call(2)); }, 300);
      setTimeout(() => child.kill("SIGKILL"), 10_000);
    });
    expect(stderr).toContain("stdout closed");
    expect(stderr).not.toContain("    at ");
    expect(code).toBe(0);
  }, 15_000);
});

describe("a client that stops reading answers", () => {
  test("the server stops reading requests until stdout drains, then answers every one (it read on, piling answers up in memory)", async () => {
    const { spawn, spawnSync } = await import("node:child_process");
    const { closeSync, constants, openSync, writeSync } = await import("node:fs");
    const dir = makeWorkspace();
    const N = 20_000;
    const lines = [JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "slow", version: "1" } } })];
    for (let i = 1; i <= N; i++) lines.push(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "workspace", arguments: {} } }));
    const input = Buffer.from(`${lines.join("\n")}\n`);
    // stdin is a FIFO we write without blocking: what the pipe takes is what the server read
    const fifo = join(dir, "requests.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeEnd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const child = spawn(BIN, ["mcp", "--dir", dir], { env: cleanEnv({ CARDS_ACTOR: "agent-1" }), stdio: [readEnd, "pipe", "ignore"] });
    closeSync(readEnd);
    const out = child.stdout!;
    let sent = 0;
    const pushInput = (): void => {
      while (sent < input.length) {
        try {
          sent += writeSync(writeEnd, input, sent, Math.min(16_384, input.length - sent));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "EAGAIN") return;
          throw e;
        }
      }
    };
    const feeder = setInterval(pushInput, 20);
    try {
      out.pause(); // read nothing yet
      await new Promise((r) => setTimeout(r, 2500));
      // each answer is a few KB: the server paused once its stdout was full, and the pipe
      // to it filled (a pipe holds 64 KiB)
      expect(sent).toBeLessThan(input.length / 4);
      // reading again: every request is answered
      let text = "";
      out.on("data", (b: Buffer) => { text += b.toString(); });
      out.resume();
      await waitFor(() => ((text.match(/\n/g) ?? []).length >= N + 1 ? true : undefined), 60_000, "every answer");
      const ids = text.split("\n").filter(Boolean).map((l) => JSON.parse(l).id);
      expect(new Set(ids).size).toBe(N + 1);
    } finally {
      clearInterval(feeder);
      closeSync(writeEnd);
      child.kill();
    }
  }, 90_000);
});
