/** Line framing of the tool server's JSON-RPC: long lines in many chunks, and lines past the limit. */
import { expect, test } from "bun:test";
import { MAX_ANSWER_CHARS, MAX_BATCH, RpcPeer } from "../../src/mcp/jsonrpc.ts";
import { instructions } from "../../src/mcp/server.ts";
import { fixedTools } from "../../src/mcp/fixed.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

function peer(maxLineChars?: number) {
  const out: any[] = [];
  const p = new RpcPeer({ dispatch: async (method, params) => ({ method, size: JSON.stringify(params).length }), write: (l) => out.push(JSON.parse(l)), log: () => {}, maxLineChars });
  return { p, out };
}

test("a line over the limit is answered with -32600 and skipped to its end; the next line is served", async () => {
  const { p, out } = peer(1000);
  const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "echo", params: { x: "y".repeat(5000) } });
  for (let i = 0; i < big.length; i += 300) p.feed(big.slice(i, i + 300)); // arrives in chunks
  p.feed("\n");
  p.feed(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "echo", params: {} })}\n`);
  await p.drain();
  expect(out[0]).toMatchObject({ id: 1, error: { code: -32600, message: expect.stringContaining("longer than 1000 characters") } });
  expect(out[1]).toMatchObject({ id: 2, result: { method: "echo" } });
  expect(out).toHaveLength(2);
});

test("a long line in many small chunks is read whole (each chunk scanned once)", async () => {
  const { p, out } = peer();
  const msg = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "echo", params: { x: "z".repeat(2_000_000) } });
  for (let i = 0; i < msg.length; i += 4096) p.feed(msg.slice(i, i + 4096));
  p.feed("\n");
  await p.drain();
  expect(out).toEqual([{ jsonrpc: "2.0", id: 7, result: { method: "echo", size: 2_000_008 } }]);
});

test("the instructions name the workspace's own columns (a workspace without todo gets no call that would be refused)", () => {
  const ws = { columns: [{ id: "inbox" }, { id: "active" }, { id: "checking" }, { id: "shipped" }], settings: {} } as any;
  const text = instructions("agent-1", { workspace: ws, boards: new Map(), cardTypes: new Map() });
  // the work column is the one named for work in progress (active); the queue the one before it
  expect(text).toContain('take_next {"filter":{"blocked":false,"status":"inbox"},"status":"active"}');
  expect(text).not.toContain("todo");
  expect(text).not.toContain("Reviewers"); // no review column
});

test("take_next's description names the workspace's own queue and work columns, as the instructions do", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const columns = [{ id: "inbox" }, { id: "active" }, { id: "checking" }, { id: "shipped" }];
    // no board: the loop follows the workspace's columns
    const defs = { ...svc.defs, workspace: { ...svc.defs.workspace, columns }, boards: new Map() } as typeof svc.defs;
    const takeNext = fixedTools(defs).find((t) => t.spec.name === "take_next")!.spec.description;
    expect(takeNext).toContain('{"blocked":false,"status":"inbox"}, status "active"');
    expect(takeNext).not.toContain("todo");
  } finally {
    svc.close();
  }
});

test("a request id is a string or an integer: null and 1.5 are refused (MCP)", async () => {
  const { p, out } = peer();
  p.feed('{"jsonrpc":"2.0","id":null,"method":"ping"}\n{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n{"jsonrpc":"2.0","id":"a","method":"ping"}\n{"jsonrpc":"2.0","id":-3,"method":"ping"}\n');
  await p.drain();
  expect(out.slice(0, 2).map((a) => a.error?.code)).toEqual([-32600, -32600]);
  expect(out.slice(2).map((a) => a.id)).toEqual(["a", -3]);
});

test("a line over the limit is answered under its id when the id stands at its start or its end", async () => {
  for (const [msg, id] of [
    [`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"x":"${"y".repeat(5000)}"}}`, 7],
    [`{"method":"echo","params":{"card_id":"c1","x":"${"y".repeat(5000)}"},"jsonrpc":"2.0","id":"req-9"}`, "req-9"],
    // an id inside params is not the message's
    [`{"method":"echo","params":{"x":"${"y".repeat(5000)}","id":3}}`, null],
  ] as const) {
    const { p, out } = peer(1000);
    for (let i = 0; i < msg.length; i += 300) p.feed(msg.slice(i, i + 300));
    p.feed("\n");
    await p.drain();
    expect(out).toEqual([{ jsonrpc: "2.0", id, error: { code: -32600, message: expect.stringContaining("longer than 1000") } }]);
  }
});

test("after the client is gone, a partly received line is dropped, not run", async () => {
  const { p, out } = peer();
  p.feed('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"tools/call"');
  p.feed(',"params":{}}'); // complete JSON, but its line never ended
  p.discardUnread();
  await p.drain();
  expect(out.map((a) => a.id)).toEqual([1]);
});

test("a line that is not UTF-8 is answered -32700 and not run; the lines around it are (bytes split anywhere)", async () => {
  const calls: string[] = [];
  const out: any[] = [];
  const p = new RpcPeer({ dispatch: async (_m, params) => { calls.push((params as { t: string }).t); return {}; }, write: (l) => out.push(JSON.parse(l)), log: () => {} });
  const enc = (t: string) => new TextEncoder().encode(t);
  const line = (id: number, t: string) => enc(`{"jsonrpc":"2.0","id":${id},"method":"m","params":{"t":"${t}"}}\n`);
  const bad = new Uint8Array([...enc('{"jsonrpc":"2.0","id":2,"method":"m","params":{"t":"raw '), 0xff, 0xfe, ...enc(' bytes"}}\n')]);
  const all = new Uint8Array([...line(1, "caf\u00e9 ok"), ...bad, ...line(3, "\u{1F680} after")]);
  // fed a few bytes at a time: a character split across chunks is still one character
  for (let i = 0; i < all.length; i += 3) p.feedBytes(all.subarray(i, i + 3));
  await p.drain();
  // before: decoded lossily, the middle line ran with "raw \uFFFD\uFFFD bytes"
  expect(calls).toEqual(["caf\u00e9 ok", "\u{1F680} after"]);
  expect(out.filter((a) => a.error)).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error: the message is not valid UTF-8" } }]);
  // a line ending in half a character is not UTF-8 either
  p.feedBytes(new Uint8Array([...enc('{"jsonrpc":"2.0","id":4,"method":"m","params":{"t":"x"}}'), 0xe2, 0x82, 0x0a]));
  await p.drain();
  expect(out.at(-1).error.code).toBe(-32700);
  // so is a last line without its newline, whether the bad bytes come alone or with it
  for (const tail of [[0xe2, 0x82], [0xff]]) {
    const before = calls.length;
    p.feedBytes(enc('{"jsonrpc":"2.0","id":5,"method":"m","params":{"t":"y"}}'));
    p.feedBytes(new Uint8Array(tail));
    await p.drain();
    expect([calls.length, out.at(-1).error?.code]).toEqual([before, -32700]);
  }
});

test("notifications/cancelled: a request still running gets no answer; others do; initialize is never cancelled", async () => {
  const out: any[] = [];
  const gates = new Map<string, () => void>();
  const p = new RpcPeer({
    dispatch: (method) => new Promise((resolve) => gates.set(method, () => resolve({ method }))),
    write: (l) => out.push(JSON.parse(l)), log: () => {},
  });
  const send = (m: object) => p.feed(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  send({ id: 1, method: "slow" });
  send({ id: 2, method: "other" });
  send({ id: 3, method: "initialize" });
  send({ method: "notifications/cancelled", params: { requestId: 1, reason: "timed out" } });
  send({ method: "notifications/cancelled", params: { requestId: 3 } });
  send({ method: "notifications/cancelled", params: { requestId: 99 } }); // unknown: ignored
  for (const open of gates.values()) open();
  await p.drain();
  expect(out.map((a) => a.id).sort()).toEqual([2, 3]);
});

test("a second request under the id of one still running is refused; a cancel reaches the first (before: the cancel silenced the wrong one)", async () => {
  const out: any[] = [];
  const gates: Array<() => void> = [];
  const p = new RpcPeer({
    dispatch: (method) => new Promise((resolve) => gates.push(() => resolve({ method }))),
    write: (l) => out.push(JSON.parse(l)), log: () => {},
  });
  const send = (m: object) => p.feed(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  send({ id: "dup", method: "slow" });
  send({ id: "dup", method: "ping" });
  send({ method: "notifications/cancelled", params: { requestId: "dup" } });
  for (const open of gates) open();
  await p.drain();
  expect(out).toHaveLength(1);
  expect(out[0]).toMatchObject({ id: "dup", error: { code: -32600, message: expect.stringContaining("in use by a request still running") } });
  // once answered, the id may be used again
  send({ id: "dup", method: "ping" });
  for (const open of gates) open();
  await p.drain();
  expect(out[1]).toMatchObject({ id: "dup", result: { method: "ping" } });
});

test("an integer id past 2^53 is refused with a message that says why (it was \"must be an integer\")", async () => {
  const { p, out } = peer();
  p.feed('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}\n');
  await p.drain();
  expect(out[0]).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("send it as a string") } });
});

test("an actor that cannot be a user id (josé) is told to register an ASCII id with its name as display_name, not itself (before: `cards users add josé`, which is refused)", () => {
  const workspace = { columns: [{ id: "backlog" }, { id: "todo" }, { id: "doing" }, { id: "review" }, { id: "done" }], settings: {} } as any;
  const text = instructions("jos\u00e9", { workspace, boards: new Map(), cardTypes: new Map() }, false);
  expect(text).toContain('"jos\u00e9" is not a registered user: claim and owner changes fail; "jos\u00e9" cannot be a user id (user ids are 1-64 ASCII');
  expect(text).toContain('`cards users add jose --kind agent --display-name "jos\u00e9"`');
  expect(text).not.toContain("cards users add jos\u00e9");
});

test("the instructions tell an actor that is not registered so, and teach review in place (review 2026-11-25)", () => {
  const workspace = { columns: [{ id: "backlog" }, { id: "todo" }, { id: "doing" }, { id: "review" }, { id: "done" }], settings: {} } as any;
  const ws = { workspace, boards: new Map(), cardTypes: new Map() };
  expect(instructions("agent-3", ws, false)).toContain('"agent-3" is not a registered user: claim and owner changes fail until `cards users add agent-3 --kind agent`');
  expect(instructions("agent-1", ws)).not.toContain("not a registered user");
  // a reviewer's take_next no longer moves the card to done before it is reviewed
  expect(instructions("agent-1", ws)).toContain('take_next {"filter":{"status":"review"}} claims in place; approve: release {card_id, version, status:"done"}');
  expect(instructions("agent-1", ws)).not.toContain('"status":"done"}.');
});

test("a batch past MAX_BATCH runs nothing and answers each of its requests (a batch of 20,000 ran out of memory and answered none)", async () => {
  const ran: string[] = [];
  const out: any[] = [];
  const p = new RpcPeer({ dispatch: async (method) => { ran.push(method); return {}; }, write: (l) => out.push(JSON.parse(l)), log: () => {} });
  const batch = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "work" }));
  batch.push({ jsonrpc: "2.0", method: "notifications/x" } as never); // a notification is not answered
  p.feed(`${JSON.stringify(batch)}\n`);
  const full = Array.from({ length: MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: `ok${i}`, method: "work" }));
  p.feed(`${JSON.stringify(full)}\n`);
  await p.drain();
  expect(out[0].map((a: { id: number }) => a.id)).toEqual(batch.slice(0, MAX_BATCH + 1).map((m) => m.id));
  expect(out[0].every((a: { error?: { code: number; message: string } }) => a.error?.code === -32600 && a.error.message.includes(`at most ${MAX_BATCH}`))).toBe(true);
  expect(ran).toHaveLength(MAX_BATCH); // the second batch only
  expect(out[1]).toHaveLength(MAX_BATCH);
});

test("an answer too large to send is an error under its id; in a batch, the others still go (the line failed to build and nothing was answered)", async () => {
  const out: any[] = [];
  const huge = "x".repeat(MAX_ANSWER_CHARS);
  const p = new RpcPeer({ dispatch: async (method) => (method === "huge" ? { huge } : { small: true }), write: (l) => out.push(JSON.parse(l)), log: () => {} });
  p.feed(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "huge" })}\n`);
  p.feed(`${JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "small" }, { jsonrpc: "2.0", id: 3, method: "huge" }, { jsonrpc: "2.0", id: 4, method: "small" }])}\n`);
  await p.drain();
  expect(out[0]).toMatchObject({ id: 1, error: { code: -32603, message: expect.stringContaining("the request ran, but its answer cannot be sent") } });
  expect(out[1].map((a: { id: number; result?: unknown; error?: unknown }) => [a.id, a.result !== undefined])).toEqual([[2, true], [3, false], [4, true]]);
});
