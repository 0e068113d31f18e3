/**
 * Figure: the agent tool server's context cost and start-up.
 *  - tools/list for the sample workspace: bytes, bytes/4, and o200k tokens (gpt-tokenizer);
 *    target under 6,000 tokens (a known peer spends 10,500). Also `instructions` and `cards prime`.
 *  - median time from spawning `cards mcp` to the initialize answer and to the tools/list
 *    answer (initialize, initialized and tools/list written at once), beside spawning
 *    `cards --version` the same way as the process floor.
 *
 *   bun bench/mcp.ts
 *
 * Env: RUNS (20); CARDS_BIN (default: build the current source into $WORK/bin/cards); WORK.
 */
import { spawn } from "bun";
import { countTokens } from "gpt-tokenizer";
import { join } from "node:path";
import { cardsBinary, envNum, int, machineNote, median, ms, ratio, report, run, workDir, type Row } from "./lib/util.ts";
import { initWorkspace } from "./lib/seed.ts";

const RUNS = envNum("RUNS", 20);
const DIR = workDir("mcp");
const bin = await cardsBinary();
const ws = join(DIR, "ws");
await initWorkspace(bin, ws);
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CARDS_ACTOR: "agent-1" };

const lines = [
  { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
].map((m) => JSON.stringify(m) + "\n").join("");

interface Sample { init: number; list: number; answers: Map<number, any> }

/** Spawns `cards mcp`, writes the three lines, times the answers; stdin closes after tools/list. */
async function once(): Promise<Sample> {
  const t0 = performance.now();
  const p = spawn([bin, "mcp", "--dir", ws], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  p.stdin.write(lines);
  p.stdin.flush();
  const answers = new Map<number, any>();
  let init = NaN;
  let list = NaN;
  let buf = "";
  const decoder = new TextDecoder();
  for await (const chunk of p.stdout) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      answers.set(msg.id, msg);
      if (msg.id === 1) init = performance.now() - t0;
      if (msg.id === 2) list = performance.now() - t0;
    }
    if (answers.has(2)) break;
  }
  p.stdin.end();
  const code = await p.exited;
  if (code !== 0 || !answers.has(2)) throw new Error(`cards mcp exited ${code}: ${await new Response(p.stderr).text()}`);
  return { init, list, answers };
}

async function floorOnce(): Promise<number> {
  const t0 = performance.now();
  const p = spawn([bin, "--version"], { env, stdout: "pipe", stderr: "pipe" });
  await new Response(p.stdout).text();
  await p.exited;
  return performance.now() - t0;
}

await once(); // warm the page cache and the definitions cache
const samples: Sample[] = [];
const floors: number[] = [];
for (let i = 0; i < RUNS; i++) {
  samples.push(await once());
  floors.push(await floorOnce());
}

const first = samples[0]!.answers;
const toolsJson = JSON.stringify(first.get(2).result);
const instructions = String(first.get(1).result.instructions ?? "");
const tools: any[] = first.get(2).result.tools;
const prime = (await run([bin, "prime", "--dir", ws], { env })).out;
const bytes = (s: string): number => Buffer.byteLength(s);
const tokenRow = (figure: string, text: string, target?: number, note?: string): Row => {
  const o200k = countTokens(text);
  return {
    figure, value: `${int(o200k)} tokens (o200k)`, floor: `${int(bytes(text))} B, ${int(bytes(text) / 4)} bytes/4`,
    ...(target ? { target: `< ${int(target)} tokens`, pass: Math.max(o200k, bytes(text) / 4) < target } : {}), note,
  };
};
const initMed = median(samples.map((s) => s.init));
const listMed = median(samples.map((s) => s.list));
const floorMed = median(floors);
const biggest = [...tools].map((t) => [t.name, bytes(JSON.stringify(t))] as const).sort((a, b) => b[1] - a[1]).slice(0, 3);

const rows: Row[] = [
  tokenRow("tools/list result, sample workspace", toolsJson, 6000, `${tools.length} tools; largest: ${biggest.map(([n, b]) => `${n} ${int(b)} B`).join(", ")}; a known peer spends 10,500`),
  tokenRow("initialize instructions", instructions),
  tokenRow("cards prime, sample workspace", prime, 1500),
  { figure: "spawn -> initialize answer (median)", value: `${ms(initMed)} ms`, floor: `${ms(floorMed)} ms (cards --version)`, ratio: ratio(initMed / floorMed), note: `${RUNS} spawns` },
  { figure: "spawn -> tools/list answer (median)", value: `${ms(listMed)} ms`, floor: `${ms(floorMed)} ms (cards --version)`, ratio: ratio(listMed / floorMed), note: `min ${ms(Math.min(...samples.map((s) => s.list)))}, max ${ms(Math.max(...samples.map((s) => s.list)))} ms` },
];
report("mcp", "Tool server (cards mcp): context size and start-up", rows, machineNote());
