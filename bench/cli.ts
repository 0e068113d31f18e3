/**
 * Figure 1: CLI cold start in embedded mode, beside compiled floors in ONE hyperfine call,
 * then Backlog.md (the peer) side by side at 100 and 1,000 items.
 *
 *   bun bench/cli.ts
 *
 * Env: RUNS (40), WARMUP (3), ROUNDS (20: the runs are spread over that many hyperfine calls,
 * command order rotating, so floors and commands sample the same stretch of this noisy
 * machine); BACKLOG=0 skips the peer; PEER_RUNS (10); BACKLOG_VERSION
 * (1.52.0); CARDS_BIN (default: build the current source into $WORK/bin/cards); WORK.
 * Writes only under $WORK/cli (npm install of the peer is cached in $WORK/cache).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { compile, cardsBinary, run, envFlag, envNum, hyperfine, machineNote, ms, ratio, report, requireTools, workDir, type Row, type Timing } from "./lib/util.ts";
import { initWorkspace, seedCards } from "./lib/seed.ts";
import { createFloor } from "./lib/floor-db.ts";
import { commitAll, initBacklogRepo, installBacklog, writeBacklogTasks, BACKLOG_VERSION } from "./lib/backlog.ts";

requireTools("hyperfine");
const DIR = workDir("cli");
const RUNS = envNum("RUNS", 40);
const ROUNDS = envNum("ROUNDS", 20);
const WARMUP = envNum("WARMUP", 3);
const bin = await cardsBinary();

// ------------------------------------------------------------------ part 1: floors
const hello = await compile("hello.ts", join(DIR, "hello"));
const readFloor = await compile("read-floor.ts", join(DIR, "read-floor"));
const writeFloor = await compile("write-floor.ts", join(DIR, "write-floor"));
const ws = join(DIR, "ws-1000");
await initWorkspace(bin, ws);
const { ids } = await seedCards(ws, { n: 1000, kind: "mixed", how: "batch", seed: 11 });
const id = ids[500]!;
await settleDefinitions(ws);
const floorDb = join(DIR, "floor.db");
createFloor(floorDb, 1000);
const cards = `${bin} --dir ${ws}`;

/**
 * The steady state: the definitions cache trusts file stamps only once the files are
 * 2 s old (docs/decisions.md, racy rule); until then each call re-reads the files.
 */
async function settleDefinitions(dir: string): Promise<void> {
  await Bun.sleep(2100);
  await run([bin, "--dir", dir, "workspace"], { timeoutMs: 30_000 });
}

const cmds = [
  { name: "hello", cmd: hello },
  { name: "read floor", cmd: `${readFloor} ${join(ws, ".cards", "cards.db")} ${id}` },
  { name: "write floor", cmd: `${writeFloor} ${floorDb} x` },
  { name: "cards --version", cmd: `${bin} --version` },
  { name: "cards get", cmd: `${cards} cards get ${id}` },
  { name: "cards list", cmd: `${cards} cards list` },
  { name: "cards create", cmd: `${cards} cards create --type task --title x` },
];
const t = await hyperfine(cmds, { runs: RUNS, warmup: WARMUP, dir: DIR, tag: "figure1", rounds: ROUNDS });
const get = (n: string): Timing => t.get(n)!;
const show = (x: Timing) => `${ms(x.median)} ms (${ms(x.min)}–${ms(x.max)})`;
const vs = (figure: string, name: string, floorName: string, max: number, note?: string): Row => {
  const r = get(name).median / get(floorName).median;
  return { figure, value: show(get(name)), floor: `${floorName}: ${ms(get(floorName).median)} ms`, ratio: ratio(r), target: `≤ ${max}x`, pass: r <= max, note };
};
const rows: Row[] = [
  { figure: "compiled hello world (bc)", value: show(get("hello")), note: "floor for --version" },
  { figure: "embedded read floor (bc): open WAL db + 1 point SELECT + print", value: show(get("read floor")), note: "same workspace database file" },
  { figure: "embedded write floor (bc): open db + BEGIN IMMEDIATE insert card + event + print", value: show(get("write floor")) },
  vs("`cards --version`", "cards --version", "hello", 1.5),
  vs("`cards cards get <id>`", "cards get", "read floor", 1.5, "with links and comments"),
  vs("`cards cards list`", "cards list", "read floor", 1.5, "50 cards, ~60 KB of JSON"),
  vs("`cards cards create --type task --title x`", "cards create", "write floor", 1.5, "validation, card row, event (search indexes it when next asked)"),
];
report("cli", `Figure 1: CLI cold start, embedded, 1,000 cards (hyperfine -N, ${RUNS} runs in ${ROUNDS} rounds of rotating order, ${WARMUP} warm-ups; median (min–max))`, rows);

// ------------------------------------------------------------------ part 2: Backlog.md peer
if (!envFlag("BACKLOG", true)) {
  console.log("\n(Backlog.md peer skipped: BACKLOG=0)");
  process.exit(0);
}
requireTools("npm", "node", "git");
const PEER_RUNS = envNum("PEER_RUNS", 10);
const { launcher } = await installBacklog();
const repo = join(DIR, "peer-repo");
await initBacklogRepo(launcher, repo);
const ws100 = join(DIR, "ws-100");
await initWorkspace(bin, ws100);
const ids100 = (await seedCards(ws100, { n: 100, kind: "mixed", how: "batch", seed: 12 })).ids;
await settleDefinitions(ws100);

const peerRows: Row[] = [];
async function sideBySide(size: number, wsDir: string, cardId: string): Promise<void> {
  const c = `${bin} --dir ${wsDir}`;
  const pairs = [
    { op: "view one", peer: `${launcher} task view TASK-7 --plain`, ours: `${c} cards get ${cardId}` },
    { op: "list", peer: `${launcher} task list --plain`, ours: `${c} cards list` },
    { op: "search `webhook`", peer: `${launcher} search webhook --plain`, ours: `${c} cards list --q webhook` },
    { op: "create", peer: `${launcher} task create Benchmark-task -d bench -l perf`, ours: `${c} cards create --type task --title Benchmark-task` },
  ];
  const hf = await hyperfine(pairs.flatMap((p) => [{ name: `peer ${p.op}`, cmd: p.peer }, { name: `cards ${p.op}`, cmd: p.ours }]),
    { runs: PEER_RUNS, warmup: 1, dir: DIR, tag: `peer-${size}`, timeoutMs: 600_000, cwd: repo });
  for (const p of pairs) {
    const peer = hf.get(`peer ${p.op}`)!;
    const ours = hf.get(`cards ${p.op}`)!;
    const r = peer.median / ours.median;
    peerRows.push({
      figure: `${p.op} at ${size.toLocaleString("en-US")} items`, value: `cards ${ms(ours.median)} ms`,
      floor: `Backlog.md ${ms(peer.median)} ms (${ms(peer.min)}–${ms(peer.max)})`, ratio: `${ratio(r)} faster`,
      // issue 2 sets the 50x target at 1,000 items; the 100-item step is shown for the trend
      ...(size >= 1000 ? { target: "≥ 50x faster", pass: r >= 50 } : { note: "for reference (the target is at 1,000 items)" }),
    });
  }
}
writeBacklogTasks(repo, 1, 100);
await commitAll(repo, "100 tasks");
await sideBySide(100, ws100, ids100[7]!);
// the timed creates above took the next ids: continue after them, up to 1,000 tasks in all
writeBacklogTasks(repo, readdirSync(join(repo, "backlog", "tasks")).length + 1, 1000);
await commitAll(repo, "1000 tasks");
// sanity check that Backlog.md reads the generated files (a first call right after the bulk
// write once listed only part of them; the second is what the timed runs see)
const countListed = async () => (await run([launcher, "task", "list", "--plain"], { cwd: repo })).out.match(/TASK-\d+/g)?.length ?? 0;
const firstListed = await countListed();
const listed = await countListed();
await sideBySide(1000, ws, id);
report("cli-peer", `CLI vs Backlog.md ${BACKLOG_VERSION} (installed npm command), same hyperfine call per size (${PEER_RUNS} runs, 1 warm-up)`, peerRows,
  "Backlog.md rows run its npm launcher (Node script spawning its Bun binary) in a fresh git repo; tasks written in its own file format. " +
  `\`task list --plain\` listed ${listed} tasks at the 1,000 step${firstListed !== listed ? ` (${firstListed} on the first call)` : ""}. ` +
  "`cards` list prints the default 50-card page; Backlog.md prints every task. " + machineNote());
