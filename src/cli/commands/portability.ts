/**
 * `cards dump [--out F]` and `cards restore [--in F]` (JSONL, DECISIONS format). They open
 * the workspace files directly (a running server may keep serving meanwhile: the dump
 * reads one snapshot), so they refuse CARDS_URL / --url. A progress line goes to stderr
 * when stderr is a terminal.
 */
import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { defineCommand } from "../define.ts";
import { CardsError } from "../../domain/errors.ts";
import { backupWorkspace, dumpWorkspace, restoreWorkspace, type PortCounts } from "../../service/index.ts";
import { openService } from "../../platform/open.ts";
import { serverUrl, type CliGlobals } from "../client.ts";

const FLUSH_BYTES = 256 * 1024;

export const dump = defineCommand({
  meta: { name: "dump", description: "Write the whole workspace as JSONL (header, users, cards with comments and links, events)" },
  args: {
    out: { type: "string", description: "file to write (default: stdout)" },
    jsonl: { type: "boolean", description: "JSON Lines: a dump always is (accepted for scripts that ask)" },
  },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "dump");
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    const fd = args.out ? openSync(args.out, "w") : 1;
    let buf = "";
    const flush = () => { if (buf) { writeSync(fd, buf); buf = ""; } };
    try {
      const n = dumpWorkspace(svc, (line) => { buf += line + "\n"; if (buf.length >= FLUSH_BYTES) flush(); }, progress("dumped"));
      flush();
      done(n, "dumped");
      return args.out ? { out: args.out, ...n } : undefined;
    } finally {
      if (args.out) closeSync(fd);
      svc.close();
    }
  },
});

export const restore = defineCommand({
  meta: { name: "restore", description: "Load a JSONL dump into a workspace that holds no cards (all or nothing)" },
  args: { in: { type: "string", description: "dump file to read (default: stdin)" } },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "restore");
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    try {
      let input;
      try {
        input = args.in ? createReadStream(args.in) : createReadStream("", { fd: 0 });
        await new Promise<void>((resolve, reject) => { input!.once("open", () => resolve()); input!.once("error", reject); if (!args.in) resolve(); });
      } catch (e) {
        throw new CardsError("usage", `cannot read ${args.in}: ${(e as Error).message}`, { field: "--in" });
      }
      const lines = createInterface({ input, crlfDelay: Infinity });
      const n = await restoreWorkspace(svc, lines, progress("restored"));
      done(n, "restored");
      return { restored: n };
    } finally {
      svc.close();
    }
  },
});

export const backup = defineCommand({
  meta: { name: "backup", description: "Write a consistent online copy of the database (safe while writers run); see docs/backup.md" },
  args: { out: { type: "string", description: "the new backup file", required: true } },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "backup");
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    try {
      return backupWorkspace(svc, args.out);
    } finally {
      svc.close();
    }
  },
});

function local(g: CliGlobals, what: string): CliGlobals {
  if (serverUrl(g)) {
    throw new CardsError("usage", `${what} works on the workspace files, not through a server`, {
      hint: `run it with --dir on the machine that holds the workspace (a running server may stay up), without CARDS_URL / --url`,
    });
  }
  return g;
}

/** A progress line on stderr, only when stderr is a terminal. */
function progress(verb: string): (n: PortCounts) => void {
  if (!process.stderr.isTTY) return () => {};
  return (n) => process.stderr.write(`\r${verb} ${n.users} users, ${n.cards} cards, ${n.events} events`);
}

function done(_n: PortCounts, _verb: string): void {
  if (process.stderr.isTTY) process.stderr.write("\n");
}
