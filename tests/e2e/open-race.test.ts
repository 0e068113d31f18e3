/**
 * Processes that open a brand-new workspace at the same moment all succeed (two `cards mcp`
 * servers, each with a writer and a reader connection, met it most often): creating the
 * database, switching it to WAL and migrating it are retried when SQLite answers
 * SQLITE_BUSY without waiting (a lock upgrade two openers cannot both make).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";
import { assertBinary, cleanEnv } from "../helpers/binary.ts";

beforeAll(() => assertBinary());

const INIT = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

/** Runs `cards ARGS`; with `mcp`, sends initialize and ends once it is answered. */
function cardsAsync(args: string[]): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(BIN, args, { env: cleanEnv({ CARDS_ACTOR: "ada" }), stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    p.stderr.on("data", (b: Buffer) => { stderr += b.toString(); });
    p.stdout.on("data", (b: Buffer) => { stdout += b.toString(); if (args[0] === "mcp" && stdout.includes("\n")) p.stdin.end(); });
    if (args[0] === "mcp") p.stdin.write(INIT); else p.stdin.end();
    p.on("exit", (code) => resolve({ ok: code === 0 && (args[0] !== "mcp" || stdout.includes('"result"')), stderr }));
  });
}

describe("opening a new workspace from several processes at once", () => {
  test("every process gets in; none answers `database is locked`", async () => {
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      const dir = makeWorkspace();
      const results = await Promise.all([cardsAsync(["mcp", "--dir", dir]), cardsAsync(["mcp", "--dir", dir])]);
      for (const r of results) if (!r.ok) failures.push(r.stderr.trim());
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
