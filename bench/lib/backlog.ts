/**
 * The Backlog.md peer (npm package `backlog.md`): installed once into `$WORK/cache/backlog`,
 * a fresh git repo per run, tasks written straight in Backlog.md's on-disk format (as
 * `backlog task create` writes them in v1.52; after ../shared/bench/lib/gen-backlog-tasks.ts)
 * so a repo grows to 1,000 tasks in a second.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rng, title, body, TAGS } from "./corpus.ts";
import { cacheDir, run } from "./util.ts";

export const BACKLOG_VERSION = process.env.BACKLOG_VERSION ?? "1.52.0";

/** Installs backlog.md with npm (once); returns the installed `backlog` command (the Node launcher). */
export async function installBacklog(): Promise<{ launcher: string; native?: string }> {
  const dir = cacheDir(`backlog-${BACKLOG_VERSION}`);
  const launcher = join(dir, "node_modules", ".bin", "backlog");
  if (!existsSync(launcher)) {
    writeFileSync(join(dir, "package.json"), '{"name":"bench-peer","private":true}');
    await run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", `backlog.md@${BACKLOG_VERSION}`], { cwd: dir, timeoutMs: 300_000 });
  }
  const nm = join(dir, "node_modules");
  const platformPkg = readdirSync(nm).find((d) => d.startsWith("backlog.md-"));
  const native = platformPkg && existsSync(join(nm, platformPkg, "backlog")) ? join(nm, platformPkg, "backlog") : undefined;
  return { launcher, native };
}

/** A git repo with an initialised Backlog.md project. */
export async function initBacklogRepo(launcher: string, repo: string): Promise<void> {
  mkdirSync(repo, { recursive: true });
  const git = (...a: string[]) => run(["git", ...a], { cwd: repo, timeoutMs: 30_000 });
  await git("init", "-q");
  await git("config", "user.email", "bench@example.invalid");
  await git("config", "user.name", "bench");
  await run([launcher, "init", "peer", "--defaults", "--integration-mode", "none", "--check-branches", "false"], { cwd: repo, timeoutMs: 60_000 });
  await commitAll(repo, "init");
}

export async function commitAll(repo: string, msg: string): Promise<void> {
  await run(["git", "add", "-A"], { cwd: repo });
  await run(["git", "commit", "-qm", msg, "--allow-empty"], { cwd: repo });
}

/** Writes TASK-first..TASK-last into backlog/tasks. */
export function writeBacklogTasks(repo: string, first: number, last: number, seed = 7): void {
  const dir = join(repo, "backlog", "tasks");
  mkdirSync(dir, { recursive: true });
  const r = rng(seed + first);
  const STAT = ["To Do", "To Do", "To Do", "In Progress", "Done"];
  const pad = (n: number) => String(n).padStart(2, "0");
  const yamlList = (xs: string[]) => (xs.length ? "\n" + xs.map((x) => `  - '${x}'`).join("\n") : " []");
  for (let id = first; id <= last; id++) {
    const t = title(r);
    const slug = t.replace(/[^A-Za-z0-9 -]/g, "").trim().replace(/\s+/g, "-").replace(/-+/g, "-");
    const d = new Date(Date.UTC(2026, 0, 1) + id * 60_000);
    const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
    const labels = [...new Set([r.pick(TAGS), r.pick(TAGS)])].slice(0, r.int(3));
    const status = r.pick(STAT);
    const assignee = status === "To Do" ? [] : [`@agent${1 + r.int(8)}`];
    const md = `---
id: TASK-${id}
title: ${t}
status: ${status}
assignee:${yamlList(assignee)}
created_date: '${date}'
labels:${yamlList(labels)}
dependencies: []
priority: ${r.pick(["high", "medium", "low"])}
ordinal: ${id * 1000}
---

## Description

<!-- SECTION:DESCRIPTION:BEGIN -->
${body(r)}
<!-- SECTION:DESCRIPTION:END -->
`;
    writeFileSync(join(dir, `task-${id} - ${slug}.md`), md);
  }
}
