/**
 * Search and list at 100,000 cards, through the service in-process (listCards, the code
 * behind GET /v1/cards), beside the same SQL run raw on bun:sqlite in the same process;
 * then the CLI binary once for reference (hyperfine, next to the read floor and a
 * 1,000-card workspace: "flat with size").
 *
 *   bun bench/search.ts
 *
 * Env: N_CARDS (100000), ITER (30 timed calls per figure, after 3 warm-ups), RUNS (10,
 * hyperfine), CLI=0 skips the CLI part, CARDS_BIN, WORK. The seeded workspace is cached in
 * $WORK/cache (keyed by the schema and seeding code); everything else under $WORK/search.
 */
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { openService } from "../src/platform/open.ts";
import { countBoardCards, listCards, type Service } from "../src/service/index.ts";
import { cachedMixedWorkspace, initWorkspace, seedCards } from "./lib/seed.ts";
import { cardsBinary, compile, envFlag, envNum, hyperfine, int, machineNote, ms, quantile, ratio, report, workDir, type Row } from "./lib/util.ts";

const DIR = workDir("search");
const N = envNum("N_CARDS", 100_000);
const ITER = envNum("ITER", 30);
const bin = await cardsBinary();

// ------------------------------------------------------------------ the 100k workspace (cached)
const { ws, someId, seeded } = await cachedMixedWorkspace(bin, N);
const dbPath = join(ws, ".cards", "cards.db");

// ------------------------------------------------------------------ the search index (its own file), built before any timing
const svc: Service = await openService({ dir: ws, cwd: ws, env: {}, mode: "serve" });
const built = performance.now();
await svc.store.prepareSearch();
const indexSeconds = (performance.now() - built) / 1000;

// ------------------------------------------------------------------ pick the terms by their real hit counts
const raw = new Database(dbPath, { readonly: true });
raw.query("ATTACH DATABASE ? AS s").run(join(ws, ".cards", "search.db"));
const hits = (t: string) => Number((raw.query("SELECT count(*) AS n FROM s.cards_fts WHERE cards_fts MATCH ?").get(`"${t}"*`) as { n: number }).n);
const common = ["cache", "users", "test", "when", "log", "webhook", "payment", "server", "request"]
  .map((t) => ({ t, n: hits(t) })).sort((a, b) => Math.abs(a.n - N / 2) - Math.abs(b.n - N / 2))[0]!;
let rare = { t: "e1234", n: 0 };
for (let code = 1000; code < 1300 && !(rare.n >= 2 && rare.n <= 20); code++) rare = { t: `e${code}`, n: hits(`e${code}`) };

// ------------------------------------------------------------------ in-process timings
// a server's costly reads (a search) answer from its read thread: awaited
async function time(fn: () => unknown): Promise<{ p50: number; p90: number; max: number }> {
  for (let i = 0; i < 3; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < ITER; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return { p50: quantile(xs, 0.5), p90: quantile(xs, 0.9), max: Math.max(...xs) };
}
const decode = (rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, fields: JSON.parse(r.fields as string), tags: JSON.parse(r.tags as string) }));
const sqlQ = raw.query("SELECT * FROM cards c WHERE c.seq IN (SELECT rowid FROM s.cards_fts WHERE cards_fts MATCH ?) ORDER BY c.updated_at DESC, c.id DESC LIMIT 51");
const sqlList = raw.query("SELECT * FROM cards c ORDER BY c.updated_at DESC, c.id DESC LIMIT 51");
const sqlCounts = raw.query("SELECT status, count(*) AS n FROM cards GROUP BY status");
const sqlTodo = raw.query("SELECT * FROM cards c WHERE c.status IN ('todo') ORDER BY c.updated_at DESC, c.id DESC LIMIT 51");

const figs: Array<{ figure: string; max: number; svc: () => unknown; sql: () => unknown; floor?: string }> = [
  { figure: `\`GET /cards?q=${common.t}\` (${int(common.n)} hits, ${((100 * common.n) / N).toFixed(0)}% of cards)`, max: 20,
    svc: () => listCards(svc, { q: common.t }), sql: () => decode(sqlQ.all(`"${common.t}"*`) as Record<string, unknown>[]) },
  { figure: `\`GET /cards?q=${rare.t}\` (${int(rare.n)} hits)`, max: 5,
    svc: () => listCards(svc, { q: rare.t }), sql: () => decode(sqlQ.all(`"${rare.t}"*`) as Record<string, unknown>[]) },
  { figure: "`GET /cards` default 50-card page", max: 5,
    svc: () => listCards(svc, {}), sql: () => decode(sqlList.all() as Record<string, unknown>[]) },
  { figure: "`GET /cards?status=todo` 50-card page", max: 5,
    svc: () => listCards(svc, { status: "todo" }), sql: () => decode(sqlTodo.all() as Record<string, unknown>[]) },
  { figure: "`GET /boards/main/counts` (every card, per column)", max: 20,
    svc: () => countBoardCards(svc, "main", {}), sql: () => sqlCounts.all(), floor: "GROUP BY status of every card, raw" },
];
const rows: Row[] = [];
for (const f of figs) {
  const a = await time(f.svc);
  const b = await time(f.sql);
  rows.push({
    figure: f.figure, value: `${ms(a.p50)} ms (p90 ${ms(a.p90)}, max ${ms(a.max)})`, floor: `${f.floor ?? "same SQL, raw bun:sqlite + JSON.parse"}: ${ms(b.p50)} ms`,
    ratio: ratio(a.p50 / b.p50), target: `< ${f.max} ms`, pass: a.p50 < f.max,
  });
}
svc.close();
raw.close();
report("search", `Search and list at ${int(N)} cards, in-process listCards (median of ${ITER} after 3 warm-ups)`, rows,
  `Workspace ${seeded}; search index ${indexSeconds < 0.05 ? "current" : `built from the cards in ${indexSeconds.toFixed(1)} s`} before timing; terms chosen by their FTS hit count (the last token is matched as a prefix). ${machineNote()}`);

// ------------------------------------------------------------------ CLI reference
if (envFlag("CLI", true)) {
  const RUNS = envNum("RUNS", 10);
  const readFloor = await compile("read-floor.ts", join(DIR, "read-floor"));
  const small = join(DIR, "ws-1000");
  await initWorkspace(bin, small);
  const smallId = (await seedCards(small, { n: 1000, kind: "mixed", how: "batch", seed: 41 })).ids[500]!;
  const c = `${bin} --dir ${ws}`;
  const hf = await hyperfine([
    { name: "read floor", cmd: `${readFloor} ${dbPath} ${someId}` },
    { name: "get 1k", cmd: `${bin} --dir ${small} cards get ${smallId}` },
    { name: "get", cmd: `${c} cards get ${someId}` },
    { name: "list 1k", cmd: `${bin} --dir ${small} cards list` },
    { name: "list", cmd: `${c} cards list` },
    { name: "q common", cmd: `${c} cards list --q ${common.t}` },
    { name: "q rare", cmd: `${c} cards list --q ${rare.t}` },
  ], { runs: RUNS, warmup: 2, dir: DIR, tag: "cli" });
  const m = (n: string) => hf.get(n)!.median;
  const fl = m("read floor");
  const cli: Row[] = [
    { figure: `embedded read floor at ${int(N)}`, value: `${ms(fl)} ms` },
    { figure: "`cards cards get <id>`", value: `${ms(m("get"))} ms`, floor: `read floor ${ms(fl)} ms; same at 1,000 cards ${ms(m("get 1k"))} ms`, ratio: `${ratio(m("get") / fl)} floor, ${ratio(m("get") / m("get 1k"))} 1k`, target: "≤ 1.2x the 1,000-card figure", pass: m("get") / m("get 1k") <= 1.2 },
    { figure: "`cards cards list`", value: `${ms(m("list"))} ms`, floor: `read floor ${ms(fl)} ms; same at 1,000 cards ${ms(m("list 1k"))} ms`, ratio: `${ratio(m("list") / fl)} floor, ${ratio(m("list") / m("list 1k"))} 1k`, target: "≤ 1.2x the 1,000-card figure", pass: m("list") / m("list 1k") <= 1.2 },
    { figure: `\`cards cards list --q ${common.t}\``, value: `${ms(m("q common"))} ms`, floor: `read floor ${ms(fl)} ms`, ratio: ratio(m("q common") / fl) },
    { figure: `\`cards cards list --q ${rare.t}\``, value: `${ms(m("q rare"))} ms`, floor: `read floor ${ms(fl)} ms`, ratio: ratio(m("q rare") / fl) },
  ];
  report("search-cli", `CLI at ${int(N)} cards, for reference (hyperfine -N, ${RUNS} runs, one call)`, cli);
}
