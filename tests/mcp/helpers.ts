/** Driving `dist/cards mcp` with the official SDK client, and with raw JSON-RPC lines. */
import { expect } from "bun:test";
import { spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { cleanEnv } from "../helpers/binary.ts";
import { BIN } from "../helpers/workspace.ts";

export interface Session {
  client: Client;
  /** calls a tool; returns structuredContent and isError */
  call(name: string, args?: Record<string, unknown>): Promise<{ data: any; isError: boolean; text: string }>;
  /** tool lists the client refetched after notifications/tools/list_changed */
  changes: Tool[][];
  stderr(): string;
  close(): Promise<void>;
}

export async function connect(dir: string, actor: string | undefined = "agent-1"): Promise<Session> {
  const transport = new StdioClientTransport({
    command: BIN, args: ["mcp", "--dir", dir], env: cleanEnv({ CARDS_ACTOR: actor }), stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => { err += b.toString(); });
  const changes: Tool[][] = [];
  const client = new Client({ name: "cards-tests", version: "1.0.0" }, {
    listChanged: { tools: { debounceMs: 0, onChanged: (e, tools) => { if (!e && tools) changes.push(tools); } } },
  });
  await client.connect(transport);
  return {
    client, changes,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
      expect(JSON.parse(text)).toEqual(r.structuredContent as any); // the same JSON both ways
      return { data: r.structuredContent as any, isError: r.isError === true, text };
    },
    stderr: () => err,
    close: () => client.close(),
  };
}

/** Sends raw lines to `cards mcp` (stdin closes after them) and returns every answer line, parsed. */
export function rawSession(dir: string, lines: string[], env: Record<string, string | undefined> = { CARDS_ACTOR: "agent-1" }): { answers: any[]; code: number; stderr: string; stdout: string } {
  const r = spawnSync(BIN, ["mcp", "--dir", dir], { env: cleanEnv(env), input: lines.map((l) => `${l}\n`).join(""), encoding: "utf8", timeout: 20_000 });
  const answers = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { answers, code: r.status ?? -1, stderr: r.stderr, stdout: r.stdout };
}

export const rpc = (id: number | string | null, method: string, params?: unknown): string =>
  JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });

export const init = (version = "2025-06-18"): string =>
  rpc(0, "initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1" } });

/** Polls until `check` returns a value other than undefined, or fails after `ms`. */
export async function waitFor<T>(check: () => T | undefined, ms = 5000, what = "condition"): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
