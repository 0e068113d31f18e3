/**
 * Figure 2: `cards serve` throughput and latency under wrk, beside the h3 + bun:sqlite floor
 * server (bench/fixtures/floor-server.ts) in the same run, targets interleaved per rep.
 *   POST /v1/cards      full create: validation, card row, event, a unique Idempotency-Key each
 *   GET  /v1/cards/{id} random id out of 1,000 seeded ones
 *
 *   bun bench/http.ts
 *
 * Env: DUR (5 s per run, after a 1 s warm-up), REPS (3), CONNS (32), N_CARDS (10000 in the
 * workspace and the floor), CARDS_BIN, WORK. Writes only under $WORK/http.
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { cardsBinary, cleanEnv, compile, envNum, int, machineNote, median, ms, ratio, report, requireTools, startServer, workDir, wrk, type Row, type WrkResult } from "./lib/util.ts";
import { initWorkspace, seedCards } from "./lib/seed.ts";
import { createFloor } from "./lib/floor-db.ts";

requireTools("wrk");
const DIR = workDir("http");
const DUR = envNum("DUR", 5);
const REPS = envNum("REPS", 3);
const CONNS = envNum("CONNS", 32);
const N = envNum("N_CARDS", 10_000);
const bin = await cardsBinary();
const floorBin = await compile("floor-server.ts", join(DIR, "floor-server"));

const ws = join(DIR, "ws");
await initWorkspace(bin, ws);
const { ids } = await seedCards(ws, { n: N, kind: "mixed", how: "batch", seed: 21 });
const wsDb = join(ws, ".cards", "cards.db");
const readDb = join(DIR, "floor-read.db"); // the floor reads the very same rows
copyFileSync(wsDb, readDb);
const writeDb = join(DIR, "floor-write.db");
createFloor(writeDb, N);

// ------------------------------------------------------------------ wrk scripts
const sample = Array.from({ length: 1000 }, (_, i) => ids[Math.floor((i * ids.length) / 1000)]!);
const getLua = join(DIR, "get.lua");
await Bun.write(getLua, `
local ids = { ${sample.map((i) => `"${i}"`).join(", ")} }
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/v1/cards/" .. ids[math.random(1, #ids)])
end
`);
const body = JSON.stringify({
  type_id: "task", title: "Fix the login redirect loop on Safari after the OAuth callback",
  fields: { priority: "high", description: "Users land on /login again after a successful OAuth callback. Seen in `src/auth/session.ts` with error E4312: the session cookie is set on the wrong path, so the redirect loops until the rate limiter answers 429." },
});
let luaRun = 0;
/** A fresh create script per wrk run: Idempotency-Key = run prefix + request counter, never reused. */
async function createLua(): Promise<string> {
  const f = join(DIR, `create-${++luaRun}.lua`);
  await Bun.write(f, `
local counter = 0
local prefix = "bench-${Date.now().toString(36)}-${luaRun}-" .. tostring(math.random(1, 1000000000))
local body = '${body.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'
request = function()
  counter = counter + 1
  return wrk.format("POST", "/v1/cards", {
    ["Content-Type"] = "application/json", ["X-Service-Actor"] = "ada",
    ["Idempotency-Key"] = prefix .. "-" .. counter }, body)
end
`);
  return f;
}

// ------------------------------------------------------------------ run
const cards = await startServer([bin, "serve", "--dir", ws, "--port", "0"], cleanEnv());
const floor = await startServer([floorBin], { READ_DB: readDb, WRITE_DB: writeDb, PORT: "0" });
type Target = { name: string; url: string; lua: () => Promise<string> };
const targets: Target[] = [
  { name: "cards POST", url: cards.url + "/v1/cards", lua: createLua },
  { name: "floor POST", url: floor.url + "/v1/cards", lua: createLua },
  { name: "cards GET", url: cards.url + "/", lua: async () => getLua },
  { name: "floor GET", url: floor.url + "/", lua: async () => getLua },
];
const res = new Map<string, WrkResult[]>();
const notes: string[] = [];
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const t of targets) {
      await wrk(t.url, { conns: CONNS, dur: 1, lua: await t.lua() }); // warm-up
      const r = await wrk(t.url, { conns: CONNS, dur: DUR, lua: await t.lua() });
      if (r.non2xx || r.errors) notes.push(`${t.name} rep ${rep + 1}: ${r.non2xx} non-2xx ${r.errors}`);
      res.set(t.name, [...(res.get(t.name) ?? []), r]);
    }
  }
} finally {
  await cards.stop();
  await floor.stop();
}

// created cards check: every POST made one card (no replays, no losses)
const db = new Database(wsDb, { readonly: true });
const created = Number((db.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n) - N;
const keys = Number((db.query("SELECT count(*) AS n FROM idempotency").get() as { n: number } | null)?.n ?? 0);
db.close();

const agg = (name: string) => {
  const rs = res.get(name)!;
  return { rps: median(rs.map((r) => r.rps)), min: Math.min(...rs.map((r) => r.rps)), max: Math.max(...rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)) };
};
const row = (figure: string, ours: string, fl: string, floorName: string, minRatio: number, maxP99: number, note: string): Row => {
  const a = agg(ours), f = agg(fl);
  const r = a.rps / f.rps;
  return {
    figure, note,
    value: `${int(a.rps)} req/s (${int(a.min)}–${int(a.max)}), p50 ${ms(a.p50)} / p99 ${ms(a.p99)} ms (p99 by rep: ${res.get(ours)!.map((x) => ms(x.p99)).join(", ")})`,
    floor: `${floorName}: ${int(f.rps)} req/s, p50 ${ms(f.p50)} / p99 ${ms(f.p99)} ms (by rep: ${res.get(fl)!.map((x) => ms(x.p99)).join(", ")})`,
    ratio: ratio(r), target: `≥ ${minRatio}x, p99 ≤ ${maxP99} ms`, pass: r >= minRatio && a.p99 <= maxP99,
  };
};
const rows: Row[] = [
  row("`POST /v1/cards`", "cards POST", "floor POST", "h3+sqlite insert floor", 0.5, 15,
    `validation, card_created event (indexed for search off the request path), unique Idempotency-Key per request; the workspace grows by every card created, rep after rep; ${int(created)} cards created, ${int(keys)} idempotency records`),
  row("`GET /v1/cards/{id}`", "cards GET", "floor GET", "h3+sqlite point-read floor", 0.5, 3, `random id of ${int(N)} cards, with links and comments`),
];
report("http", `Figure 2: HTTP, wrk -t1 -c${CONNS}, ${DUR} s after a 1 s warm-up, ${REPS} reps interleaved, medians`, rows,
  (notes.length ? `Notes: ${notes.join("; ")}. ` : "") + `Floor: h3 v2 on Bun.serve + bun:sqlite, no validation/FTS/idempotency; server and wrk share the machine. ${machineNote()}`);
