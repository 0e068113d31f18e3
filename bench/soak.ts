/**
 * bench/soak: a bounded soak on loopback. CLIENTS HTTP clients mix reads (get, list,
 * search), writes (create, patch, comment) and claims (take-next, release), beside
 * SUBS SSE subscribers, for SECS seconds. Reports server RSS at start and end, errors
 * (5xx and transport failures), and p50/p99 latency per kind.
 * Env: SECS (60), CLIENTS (50), SUBS (10)
 */
import { readFileSync } from "node:fs";
import { cardsBinary, envNum, int, machineNote, median, ms, quantile, report, startServer, workDir } from "./lib/util.ts";
import { initWorkspace, seedCards } from "./lib/seed.ts";

const SECS = envNum("SECS", 60);
const CLIENTS = envNum("CLIENTS", 50);
const SUBS = envNum("SUBS", 10);

const bin = await cardsBinary();
const dir = workDir("soak");
await initWorkspace(bin, dir);
const { ids } = await seedCards(dir, { n: 2000, kind: "mixed", how: "batch" });
const server = await startServer([bin, "serve", "--dir", dir, "--port", "0"]);
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

const lat: Record<string, number[]> = { read: [], write: [], claim: [] };
let errors = 0;
let requests = 0;
const errorSamples: string[] = [];

async function call(kind: keyof typeof lat, method: string, path: string, body?: unknown, actor = "agent-1"): Promise<any> {
  const t = performance.now();
  try {
    const r = await fetch(`${server.url}/v1${path}`, {
      method, headers: { "content-type": "application/json", "x-service-actor": actor }, ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    lat[kind]!.push(performance.now() - t);
    requests++;
    if (r.status >= 500) { errors++; if (errorSamples.length < 5) errorSamples.push(`${method} ${path}: ${r.status} ${text.slice(0, 200)}`); }
    return r.status < 300 ? JSON.parse(text) : null;
  } catch (e) {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(`${method} ${path}: ${(e as Error).message}`);
    return null;
  }
}

try {
  await Bun.sleep(500);
  const rssStart = rss();
  const end = performance.now() + SECS * 1000;
  // RSS every 10 s: caches and the JIT warm up first; after that memory must stay flat
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rss()), 10_000);
  const subs = Array.from({ length: SUBS }, async () => {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream`, { signal: ac.signal });
    const reader = res.body!.getReader();
    try { while (performance.now() < end) { const r = await reader.read(); if (r.done) break; } } catch { /* aborted */ }
    ac.abort();
  });
  let n = 0;
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    const actor = c % 2 ? "agent-1" : "agent-2";
    while (performance.now() < end) {
      const roll = (n++ * 7919 + c) % 100;
      const id = ids[(n * 31 + c) % ids.length]!;
      if (roll < 40) await call("read", "GET", `/cards/${id}`);
      else if (roll < 55) await call("read", "GET", "/cards?limit=50");
      else if (roll < 60) await call("read", "GET", "/cards?q=webhook&limit=20");
      else if (roll < 75) {
        const card = await call("write", "POST", "/cards", { type_id: "task", title: `soak ${c}-${n}` }, actor);
        if (card) await call("write", "PATCH", `/cards/${card.id}`, { version: card.version, title: `soak ${c}-${n}!` }, actor);
      } else if (roll < 85) await call("write", "POST", `/cards/${id}/comments`, { body: "still here" }, actor);
      else {
        const got = await call("claim", "POST", "/cards/take-next", {}, actor);
        if (got?.card) await call("claim", "POST", `/cards/${got.card.id}/release`, {}, actor);
      }
    }
  });
  await Promise.all([...clients, ...subs]);
  clearInterval(sampler);
  await Bun.sleep(1000);
  const rssEnd = rss();
  const warm = samples[1] ?? samples[0] ?? rssStart; // at 20 s
  const row = (k: string, target?: string) => ({
    figure: `${k} latency p50 / p99`, value: `${ms(median(lat[k]!))} / ${ms(quantile(lat[k]!, 0.99))} ms`, note: `${int(lat[k]!.length)} requests`, target,
  });
  report("soak", `soak: ${CLIENTS} HTTP clients + ${SUBS} SSE subscribers for ${SECS} s`, [
    { figure: "requests", value: `${int(requests)} (${int(requests / SECS)}/s)` },
    { figure: "errors (5xx or transport)", value: String(errors), target: "0", pass: errors === 0, note: errorSamples.join("; ") || undefined },
    { figure: "server RSS: idle start, after 20 s of load, end", value: `${rssStart.toFixed(0)} / ${warm.toFixed(0)} / ${rssEnd.toFixed(0)} MiB`, note: `every 10 s: ${samples.map((x) => x.toFixed(0)).join(", ")} MiB`, target: "flat after warm-up (end < +15% of the 20 s mark)", pass: rssEnd < warm * 1.15 },
    row("read"), row("write"), row("claim"),
  ], machineNote());
} finally {
  await server.stop();
}
