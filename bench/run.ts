/**
 * Runs every bench script in sequence (never in parallel: the figures are ratios to floors
 * measured in the same run, on a small shared machine) and prints one combined table.
 *
 *   npm run bench                       # = bun bench/run.ts
 *   bun bench/run.ts --write-docs       # also rewrites docs/benchmarks.md with the results
 *
 * Env: SKIP=cli,http,take-next,search,heavy-read,... (any subset) or ONLY=...; BENCH_TIMEOUT (minutes per
 * script, default 20); every script's own env passes through (BACKLOG=0, DUR, REPS, ...).
 * Builds the current source once into $WORK/bin/cards unless CARDS_BIN is set.
 */
import { spawn } from "bun";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BENCH, BUN, ROOT, cardsBinary, run, envNum, machineNote, table, workDir, type Row } from "./lib/util.ts";

const SCRIPTS = ["cli", "http", "take-next", "search", "heavy-read", "sse", "portability", "soak", "mcp"] as const;
const only = process.env.ONLY?.split(",").filter(Boolean);
const skip = new Set(process.env.SKIP?.split(",").filter(Boolean) ?? []);
const chosen = SCRIPTS.filter((s) => !skip.has(s) && (!only || only.includes(s)));
const timeoutMin = envNum("BENCH_TIMEOUT", 20);
const writeDocs = process.argv.includes("--write-docs");

const results = workDir("results");
const bin = await cardsBinary();
const started = new Date();
const loadAtStart = loadavg().map((x) => x.toFixed(1)).join(" / ");
const status = new Map<string, string>();
for (const s of chosen) {
  console.log(`\n# bench/${s}.ts`);
  const t0 = performance.now();
  const p = spawn([BUN, join(BENCH, `${s}.ts`)], {
    cwd: ROOT, env: { ...process.env, CARDS_BIN: bin, BENCH_RESULTS: results }, stdout: "inherit", stderr: "inherit",
  });
  const timer = setTimeout(() => p.kill(), timeoutMin * 60_000);
  const code = await p.exited;
  clearTimeout(timer);
  const secs = ((performance.now() - t0) / 1000).toFixed(0);
  status.set(s, code === 0 ? `ok (${secs} s)` : `failed: exit ${code}${p.signalCode ? ` (${p.signalCode}, over ${timeoutMin} min?)` : ""} after ${secs} s`);
}

interface Section { script: string; title: string; rows: Row[]; extra: string }
const sections: Section[] = [];
for (const s of chosen) {
  for (const part of [s, `${s}-peer`, `${s}-cli`]) {
    const f = join(results, `${part}.json`);
    if (existsSync(f)) sections.push(JSON.parse(readFileSync(f, "utf8")) as Section);
  }
}
const combined = [
  "| bench | figure | value | floor / peer (same run) | ratio | target | result |",
  "|---|---|---|---|---|---|---|",
  ...sections.flatMap((sec) => table(sec.rows).split("\n").slice(2).map((line) => `| ${sec.script} ${line}`)),
].join("\n");
const runs = chosen.map((s) => `${s}: ${status.get(s)}`).join("; ");
console.log(`\n# Combined (${started.toISOString()}; ${machineNote()})\n\n${combined}\n\nScripts: ${runs}`);
const failed = sections.flatMap((s) => s.rows.filter((r) => r.pass === false).map((r) => `${s.script}: ${r.figure}`));
if (failed.length) console.log(`\nTargets missed (${failed.length}):\n${failed.map((f) => `- ${f}`).join("\n")}`);

if (writeDocs) {
  // the hand-written findings between the markers survive a regeneration
  const NOTES_START = "<!-- notes: kept by bench/run.ts -->";
  const NOTES_END = "<!-- /notes -->";
  const docPath = join(ROOT, "docs", "benchmarks.md");
  const old = existsSync(docPath) ? readFileSync(docPath, "utf8") : "";
  const kept = old.includes(NOTES_START) ? old.slice(old.indexOf(NOTES_START) + NOTES_START.length, old.indexOf(NOTES_END)).trim() : "";
  const notes = kept || "## Findings\n\n(none written yet)";
  const rev = await revision();
  const doc = `# Benchmarks

Latest run: ${started.toISOString().slice(0, 16).replace("T", " ")} UTC, \`bun bench/run.ts --write-docs\`, source ${rev}.
Machine: ${machineNote().replace(/, load [\d.]+$/, "")}; load average ${loadAtStart} (1/5/15 min) at the start: other work shares it. The machine is small, shared and noisy: absolute numbers move by
±30% between runs, so every target is a **ratio to a floor measured in the same run**
(\`../shared/research/perf-baselines.md\`, beside this repository), and figures are medians. Speed is never asserted in tests.

Scripts: ${runs}.

## Summary

${combined}

## Sections

${sections.map((s) => `- **${s.script}**: ${s.title}.${s.extra ? ` ${s.extra}` : ""}`).join("\n")}

${NOTES_START}
${notes}
${NOTES_END}

## What the scripts measure

| script | what | time |
|---|---|---|
| \`bench/cli.ts\` | figure 1: one hyperfine call (-N, 30 runs) with compiled floors (hello, open + point SELECT, open + insert txn) and \`cards --version\`, \`get\`, \`list\`, \`create\` on 1,000 cards; then Backlog.md (npm \`backlog.md\`) vs \`cards\`: view, list, search, create at 100 and 1,000 items | ~2 min (+ npm install once) |
| \`bench/http.ts\` | figure 2: wrk -t1 -c32 on \`cards serve\`: \`POST /v1/cards\` (unique Idempotency-Key per request) and \`GET /v1/cards/{id}\`, interleaved with an h3 + bun:sqlite floor server | ~1.5 min |
| \`bench/take-next.ts\` | figure 3: take-next races over HTTP (1/4/8/16 clients) and CLI processes (1/4/8) beside a raw claim loop and racing floors; every race checked in the database | ~1 min |
| \`bench/search.ts\` | \`q=\` search (a ~50% term, a rare term) and 50-card lists at 100,000 cards in-process, beside the same SQL raw; CLI reference incl. 1k-vs-100k flatness | ~1 min (+ 20 s seeding once) |
| \`bench/heavy-read.ts\` | at 100,000 cards on \`cards serve\`: how long one client's reads of a card wait while another's costly read (counts of blocked cards; a take-next filter of 40 conditions) runs; \`BASE_BIN\` runs an older binary beside it | ~20 s |
| \`bench/run.ts\` | all of the above in sequence, one combined table; \`--write-docs\` rewrites this file | ~6 min |

Helpers: \`bench/lib/\` (seeding through the service or the Store port, floor database, race
driver and checker, Backlog.md setup, hyperfine/wrk wrappers); \`bench/fixtures/\` (the
floor programs, compiled with \`--compile --minify --bytecode --format esm\` like \`cards\`).

## Reproducing

Needs bun (the devDependency: \`export PATH="$PWD/node_modules/.bin:$PATH"\` after
\`npm install\`, or prefix each command with \`npx\`), hyperfine, wrk, git, node + npm (for
the Backlog.md peer).

    npm run bench                                  # everything, ~6 min
    bun bench/run.ts --write-docs                  # and rewrite docs/benchmarks.md
    SKIP=search BACKLOG=0 bun bench/run.ts         # skip a script / the peer
    bun bench/http.ts                              # one script; DUR=5 REPS=3 CONNS=32
    CARDS_BIN=dist/cards bun bench/cli.ts          # an existing binary instead of a fresh build

Scratch space: \`$WORK\` (default \`/tmp/cards-bench\`); each script wipes its own subdir;
\`$WORK/cache\` keeps the Backlog.md install and the seeded 100k workspace. Run one
benchmark at a time, and compare ratios from the same run, never absolute numbers
across runs.
`;
  writeFileSync(docPath, doc);
  console.log("\nwrote docs/benchmarks.md");
}

/** HEAD's short hash, marked when the working tree differs from it (others edit src/ concurrently). */
async function revision(): Promise<string> {
  try {
    const head = (await run(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT })).out.trim();
    const dirty = (await run(["git", "status", "--porcelain", "--", "src"], { cwd: ROOT })).out.trim() !== "";
    return `\`${head}\`${dirty ? " + uncommitted changes in src/" : ""}`;
  } catch {
    return "unknown";
  }
}
