/**
 * Figure 3: take-next under racing callers, every race checked in the database
 * (bench/lib/race.ts: no double claims, every pool card claimed exactly once).
 *   raw:   bun:sqlite claim-transaction loop, one process, no app code (lib/floor-db.ts)
 *   HTTP:  P concurrent callers against `cards serve`, P = 1, 4, 8, 16 (beside the h3 floor server)
 *   CLI:   P racing `cards --dir D cards take-next --actor wN` processes, P = 1, 4, 8
 *          (beside a compiled open + claim + print floor binary racing the same way)
 *
 *   bun bench/take-next.ts
 *
 * Env: HTTP_P (1,4,8,16), CLI_P (1,4,8), HTTP_POOL (3000), CLI_POOL (200), RAW_POOL (20000),
 * FLOORS=0 skips the racing floors, CARDS_BIN, WORK. Writes only under $WORK/take-next.
 */
import { cpSync, readdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { openFloor, createFloor, makeClaim } from "./lib/floor-db.ts";
import { initWorkspace, seedCards } from "./lib/seed.ts";
import { cliTake, httpTake, race, checkDb, type RaceResult, type Take } from "./lib/race.ts";
import { cardsBinary, cleanEnv, compile, envFlag, envNum, int, machineNote, ms, quantile, ratio, report, run, startServer, workDir, type Row } from "./lib/util.ts";

const DIR = workDir("take-next");
const list = (name: string, def: string) => (process.env[name] ?? def).split(",").map(Number).filter((n) => n > 0);
const HTTP_P = list("HTTP_P", "1,4,8,16");
const CLI_P = list("CLI_P", "1,4,8");
const HTTP_POOL = envNum("HTTP_POOL", 3000);
const CLI_POOL = envNum("CLI_POOL", 200);
const RAW_POOL = envNum("RAW_POOL", 20_000);
const FLOORS = envFlag("FLOORS", true);
const bin = await cardsBinary();
const claimBin = await compile("claim-floor.ts", join(DIR, "claim-floor"));
const floorServer = await compile("floor-server.ts", join(DIR, "floor-server"));

// pool templates: a workspace whose every card is an unowned task in todo, oldest first
async function template(name: string, n: number): Promise<string> {
  const d = join(DIR, name);
  await initWorkspace(bin, d);
  await seedCards(d, { n, kind: "pool", how: "batch", seed: 31 });
  return d;
}
/**
 * A copy of a pool workspace. Its definition files and folders keep the template's
 * times: a copy stamped "just now" looks like freshly edited definitions, which every
 * call re-reads for 2 s (the racy rule of docs/decisions.md) - not what agents meet.
 */
const fresh = (tpl: string, name: string): string => {
  const d = join(DIR, name);
  rmSync(d, { recursive: true, force: true });
  cpSync(tpl, d, { recursive: true, preserveTimestamps: true });
  const keepTimes = (rel: string): void => {
    const s = statSync(join(tpl, rel));
    if (s.isDirectory()) for (const n of readdirSync(join(tpl, rel))) keepTimes(join(rel, n));
    utimesSync(join(d, rel), s.atime, s.mtime);
  };
  keepTimes("definitions");
  return d;
};
const httpTpl = await template("tpl-http", HTTP_POOL);
const cliTpl = await template("tpl-cli", CLI_POOL);
const dbOf = (ws: string) => join(ws, ".cards", "cards.db");

// ------------------------------------------------------------------ raw claim loop
const rawDb = join(DIR, "raw.db");
createFloor(rawDb, RAW_POOL, { pool: true });
const raw = (() => {
  const db = openFloor(rawDb);
  const claim = makeClaim(db);
  const lat: number[] = [];
  const t0 = performance.now();
  for (;;) {
    const t = performance.now();
    const c = claim("raw");
    if (!c) break;
    lat.push(performance.now() - t);
  }
  const wall = (performance.now() - t0) / 1000;
  db.close();
  return { rate: lat.length / wall, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), n: lat.length };
})();

// ------------------------------------------------------------------ races
const results = new Map<string, RaceResult>();
async function runRace(key: string, P: number, take: Take, dbPath: string, pool: number, stop?: () => Promise<void>): Promise<void> {
  let r: RaceResult;
  let got: Array<{ caller: string; id: string }> = [];
  try {
    ({ result: r, got } = await race(P, take, { timeLimitMs: 60_000 }));
  } finally {
    await stop?.();
  }
  r.problems.push(...checkDb(dbPath, pool, got));
  results.set(key, r);
  console.error(`${key}: ${int(r.rate)} claims/s, p99 ${ms(r.p99)} ms, ${r.problems.length ? r.problems.join("; ") : "ok"}`);
}

for (const P of HTTP_P) {
  const ws = fresh(httpTpl, `http-${P}`);
  const srv = await startServer([bin, "serve", "--dir", ws, "--port", "0"], cleanEnv());
  await runRace(`http ${P}`, P, httpTake(srv.url), dbOf(ws), HTTP_POOL, () => srv.stop());
  if (FLOORS) {
    const db = join(DIR, `floor-http-${P}.db`);
    createFloor(db, HTTP_POOL, { pool: true });
    const fs = await startServer([floorServer], { WRITE_DB: db, PORT: "0" });
    await runRace(`floor http ${P}`, P, httpTake(fs.url), db, HTTP_POOL, () => fs.stop());
  }
}
/** Stores the definition stamps of a copy (an untimed call), as in a workspace agents have used before. */
async function settle(ws: string): Promise<void> {
  const newest = Math.max(...["", "card-types", "boards", "views"].map((f) => statSync(join(ws, "definitions", f), { throwIfNoEntry: false })?.mtimeMs ?? 0));
  await Bun.sleep(Math.max(0, newest + 2100 - Date.now()));
  await run([bin, "--dir", ws, "workspace"], { env: cleanEnv() });
}
for (const P of CLI_P) {
  const ws = fresh(cliTpl, `cli-${P}`);
  await settle(ws);
  await runRace(`cli ${P}`, P, cliTake((a) => [bin, "--dir", ws, "cards", "take-next", "--actor", a], cleanEnv()), dbOf(ws), CLI_POOL);
  if (FLOORS) {
    const db = join(DIR, `floor-cli-${P}.db`);
    createFloor(db, CLI_POOL, { pool: true });
    await runRace(`floor cli ${P}`, P, cliTake((a) => [claimBin, db, a], cleanEnv()), db, CLI_POOL);
  }
}

// ------------------------------------------------------------------ table
const lat = (r: RaceResult) => `p50 ${ms(r.p50)} / p99 ${ms(r.p99)} / max ${ms(r.max)} ms`;
const check = (r: RaceResult) => (r.problems.length ? `FAILED: ${r.problems.join("; ")}` : "0 double claims, all claimed once");
const rows: Row[] = [{
  figure: "raw bun:sqlite claim loop (1 process, no app code)", value: `${int(raw.rate)} claims/s, p50 ${ms(raw.p50)} / p99 ${ms(raw.p99)} ms`,
  note: `${int(raw.n)}-card pool, BEGIN IMMEDIATE + guarded UPDATE + event`,
}];
for (const P of HTTP_P) {
  const r = results.get(`http ${P}`)!;
  const f = results.get(`floor http ${P}`);
  const x = r.rate / raw.rate;
  const gate = P === 8;
  rows.push({
    figure: `HTTP take-next, ${P} racing client${P > 1 ? "s" : ""}`, value: `${int(r.rate)} claims/s, ${lat(r)}`,
    floor: `raw ${int(raw.rate)}/s${f ? `; h3 floor ${int(f.rate)}/s, p99 ${ms(f.p99)} ms` : ""}`,
    ratio: `${ratio(x)} raw${f ? `, ${ratio(r.rate / f.rate)} h3` : ""}`,
    target: gate ? "≥ 0.4x raw, p99 ≤ 10 ms, 0 double" : "0 double claims",
    pass: r.problems.length === 0 && (!f || f.problems.length === 0) && (!gate || (x >= 0.4 && r.p99 <= 10)),
    note: `${int(HTTP_POOL)}-card pool; ${check(r)}`,
  });
}
for (const P of CLI_P) {
  const r = results.get(`cli ${P}`)!;
  const f = results.get(`floor cli ${P}`);
  const gate = P === 8;
  rows.push({
    figure: `CLI take-next, ${P} racing process${P > 1 ? "es" : ""}`, value: `${int(r.rate)} claims/s, ${lat(r)}`,
    floor: f ? `compiled claim floor: ${int(f.rate)}/s, p99 ${ms(f.p99)} / max ${ms(f.max)} ms` : "",
    ratio: f ? `${ratio(r.rate / f.rate)} rate` : "",
    target: gate ? "p99 ≤ 100 ms, max ≤ 250 ms, 0 double" : "0 double claims",
    pass: r.problems.length === 0 && (!f || f.problems.length === 0) && (!gate || (r.p99 <= 100 && r.max <= 250)),
    note: `${int(CLI_POOL)}-card pool; ${check(r)}`,
  });
}
report("take-next", "Figure 3: take-next races (claims/s over the whole race; per-call latency seen by the caller)", rows,
  `Every race starts from a fresh copy of a pool workspace and is checked in its database afterwards. ${machineNote()}`);
