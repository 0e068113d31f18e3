/**
 * Shared helpers for the bench scripts: work dirs, the binary under test, subprocesses
 * with time limits, compiled floor fixtures, hyperfine and wrk wrappers, statistics and
 * the result table every script prints. Nothing here runs in the test suite.
 */
import { spawn, type Subprocess } from "bun";
import { mkdirSync, rmSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir, cpus, totalmem, loadavg } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
export const BENCH = join(ROOT, "bench");
export const BUN = process.execPath;
/** Base of every scratch dir; each script wipes and uses `$WORK/<name>`. */
export const WORK = process.env.WORK ?? join(tmpdir(), "cards-bench");

/** `$WORK/<name>`, emptied first. */
export function workDir(name: string): string {
  const d = join(WORK, name);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d, { recursive: true });
  return d;
}

/** A dir under `$WORK/cache` that survives runs (npm installs, seeded templates). */
export function cacheDir(name: string): string {
  const d = join(WORK, "cache", name);
  mkdirSync(d, { recursive: true });
  return d;
}

export const envFlag = (name: string, def = true): boolean => {
  const v = process.env[name];
  return v === undefined ? def : !["0", "false", "no", ""].includes(v.toLowerCase());
};
export const envNum = (name: string, def: number): number => (process.env[name] ? Number(process.env[name]) : def);

/** process.env without the CARDS_* variables that would change which workspace a call opens. */
export function cleanEnv(): Record<string, string | undefined> {
  const { CARDS_URL: _u, CARDS_DIR: _d, CARDS_ACTOR: _a, ...rest } = process.env;
  return rest;
}

/** Runs a command to completion; throws on a non-zero exit or when it exceeds `timeoutMs`. */
export async function run(cmd: string[], o: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; quiet?: boolean } = {}): Promise<{ out: string; err: string }> {
  const p = spawn(cmd, { cwd: o.cwd, env: o.env ?? process.env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), o.timeoutMs ?? 300_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}${p.signalCode ? ` (${p.signalCode}: time limit?)` : ""}\n${err.slice(-2000)}`);
  return { out, err };
}

/**
 * The binary under test: $CARDS_BIN when set, else `build.ts` into `$WORK/bin/cards`
 * (the current source; dist/ is left alone).
 */
export async function cardsBinary(): Promise<string> {
  if (process.env.CARDS_BIN) return resolve(process.env.CARDS_BIN);
  const out = join(WORK, "bin", "cards");
  mkdirSync(join(WORK, "bin"), { recursive: true });
  await run([BUN, "build.ts"], { cwd: ROOT, env: { ...process.env, CARDS_OUTFILE: out }, timeoutMs: 120_000 });
  process.env.CARDS_BIN = out;
  return out;
}

/**
 * Compiles a floor program as build.ts compiles `cards`: bytecode, and no autoloading of
 * .env, bunfig.toml, tsconfig.json or package.json at run time. With autoloading on, a
 * compiled program lists its working folder's parents at start (a /tmp of 8,000 entries
 * cost the floors 5 ms), and the floors would measure the folder, not the least work.
 */
export async function compile(fixture: string, outfile: string): Promise<string> {
  const noAutoload = ["dotenv", "bunfig", "tsconfig", "package-json"].map((f) => `--no-compile-autoload-${f}`);
  await run([BUN, "build", "--compile", "--minify", "--bytecode", "--format", "esm", ...noAutoload, join(BENCH, "fixtures", fixture), "--outfile", outfile], { cwd: ROOT, timeoutMs: 120_000 });
  return outfile;
}

// ---------------------------------------------------------------- statistics

export const quantile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
export const ms = (x: number): string => (Number.isNaN(x) ? "n/a" : x < 1 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(0));
export const int = (x: number): string => Math.round(x).toLocaleString("en-US");
export const ratio = (x: number): string => (x >= 10 ? x.toFixed(0) : x.toFixed(2)) + "x";

// ---------------------------------------------------------------- hyperfine

export interface Timing { median: number; min: number; max: number; runs: number }

/** One hyperfine call (-N, so no shell) over named commands; times in ms. */
/**
 * Times commands with hyperfine (-N). With `rounds` > 1 the runs are split into that many
 * hyperfine calls, the command order rotating each round, and the figures are taken over
 * all runs: every command then samples the whole period, so a noisy stretch of this
 * shared machine lands on all of them alike instead of on whichever ran during it.
 */
export async function hyperfine(cmds: Array<{ name: string; cmd: string }>, o: { runs: number; warmup: number; dir: string; tag: string; timeoutMs?: number; cwd?: string; rounds?: number }): Promise<Map<string, Timing>> {
  const rounds = Math.max(1, Math.min(o.rounds ?? 1, o.runs));
  const times = new Map<string, number[]>(cmds.map((c) => [c.name, []]));
  for (let round = 0; round < rounds; round++) {
    const json = join(o.dir, `hf-${o.tag}${rounds > 1 ? `-${round + 1}` : ""}.json`);
    const runs = Math.floor(o.runs / rounds) + (round < o.runs % rounds ? 1 : 0);
    const args = ["hyperfine", "-N", "-w", String(round === 0 ? o.warmup : 1), "-r", String(Math.max(2, runs)), "--export-json", json];
    const order = cmds.map((_, i) => cmds[(i + round) % cmds.length]!);
    for (const c of order) args.push("-n", c.name, c.cmd);
    await run(args, { timeoutMs: o.timeoutMs ?? 600_000, cwd: o.cwd, env: cleanEnv() });
    const data = (await Bun.file(json).json()) as { results: Array<{ command: string; times: number[] }> };
    for (const r of data.results) times.get(r.command)!.push(...r.times.map((t) => t * 1000));
  }
  return new Map([...times].map(([name, t]) => [name, { median: median(t), min: Math.min(...t), max: Math.max(...t), runs: t.length }]));
}

// ---------------------------------------------------------------- servers and wrk

export interface Server { url: string; proc: Subprocess; stop(): Promise<void> }

/** Spawns a server that logs `listening on http://…` to stderr and waits for that line. */
export async function startServer(cmd: string[], env: Record<string, string | undefined> = {}, timeoutMs = 15_000): Promise<Server> {
  const proc = spawn(cmd, { env: { ...process.env, ...env }, stdout: "ignore", stderr: "pipe" });
  const reader = proc.stderr.getReader();
  let buf = "";
  const deadline = Date.now() + timeoutMs;
  const timer = setTimeout(() => proc.kill(), timeoutMs);
  while (!/listening on (http:\/\/\S+)/.test(buf)) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`${cmd.join(" ")} did not start: ${buf}`);
    buf += new TextDecoder().decode(value);
  }
  clearTimeout(timer);
  // keep draining stderr so a chatty server never blocks on a full pipe
  void (async () => { try { for (;;) { const r = await reader.read(); if (r.done) break; } } catch { /* closed */ } })();
  const url = /listening on (http:\/\/\S+)/.exec(buf)![1]!;
  return {
    url, proc,
    async stop() {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

export interface WrkResult { rps: number; p50: number; p99: number; non2xx: number; errors: string }

const toMs = (v: string): number => {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "ms" ? 1 : 1000);
};

/** wrk, one thread, `--latency`; p50/p99 in ms. */
export async function wrk(url: string, o: { conns: number; dur: number; lua?: string }): Promise<WrkResult> {
  const args = ["wrk", "-t1", `-c${o.conns}`, `-d${o.dur}s`, "--latency", ...(o.lua ? ["-s", o.lua] : []), url];
  const { out } = await run(args, { timeoutMs: (o.dur + 30) * 1000 });
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? ""),
    p99: toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? ""),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    errors: /Socket errors:.*/.exec(out)?.[0] ?? "",
  };
}

// ---------------------------------------------------------------- the result table

/** One line of a result table: a figure beside the floor (or peer) measured in the same run. */
export interface Row {
  figure: string;
  value: string;
  floor?: string;
  ratio?: string;
  target?: string;
  pass?: boolean;
  note?: string;
}

export function table(rows: Row[]): string {
  const lines = ["| figure | value | floor / peer (same run) | ratio | target | result |", "|---|---|---|---|---|---|"];
  for (const r of rows) {
    const result = r.pass === undefined ? "" : r.pass ? "pass" : "**FAIL**";
    const figure = r.note ? `${r.figure} <br><sub>${r.note}</sub>` : r.figure;
    lines.push(`| ${figure} | ${r.value} | ${r.floor ?? ""} | ${r.ratio ?? ""} | ${r.target ?? ""} | ${result} |`);
  }
  return lines.join("\n");
}

/** Prints the section and, under `bench/run.ts`, hands the rows over as JSON. */
export function report(script: string, title: string, rows: Row[], extra = ""): void {
  console.log(`\n## ${title}\n\n${table(rows)}\n${extra ? "\n" + extra + "\n" : ""}`);
  const out = process.env.BENCH_RESULTS;
  if (out) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, `${script}.json`), JSON.stringify({ script, title, rows, extra }, null, 1));
  }
}

export function machineNote(): string {
  const c = cpus();
  return `${c.length} vCPU ${c[0]?.model.trim() ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Bun ${Bun.version}, ${process.platform}, load ${loadavg()[0]!.toFixed(1)}`;
}

export function requireTools(...tools: string[]): void {
  const missing = tools.filter((t) => !Bun.which(t));
  if (missing.length) throw new Error(`needs ${missing.join(", ")} on PATH (apt-get install ${missing.join(" ")})`);
}

export { existsSync };
