/** Helpers for the extension tests: fixture paths, workspaces declaring extensions, polling. */
import { mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionDef } from "../../src/domain/types.ts";
import { makeWorkspace, ROOT } from "../helpers/workspace.ts";

export const FIXTURES = join(ROOT, "tests/fixtures");

/** `["/bin/sh", <absolute fixture path>, ...args]` */
export const sh = (fixture: string, ...args: string[]): string[] => ["/bin/sh", join(FIXTURES, fixture), ...args];

/** A sample workspace whose extensions file declares `exts` (JSON is valid YAML). */
export function workspaceWith(exts: Array<Partial<ExtensionDef> & Pick<ExtensionDef, "id" | "kind" | "run">>): string {
  return makeWorkspace((f) => {
    f["definitions/extensions.yaml"] = JSON.stringify(exts, null, 2);
  });
}

/** A fresh directory for hook records inside the workspace (realpath, as `pwd -P` reports). */
export function recordDir(ws: string, name = "rec"): string {
  const d = join(ws, name);
  mkdirSync(d, { recursive: true });
  return realpathSync(d);
}

export interface HookRecord { stdin: any; env: Record<string, string>; file: string }

/** The records written by tests/fixtures/record.sh, parsed. */
export function records(dir: string): HookRecord[] {
  return readdirSync(dir).filter((n) => n.endsWith(".txt")).sort().map((n) => {
    const env: Record<string, string> = {};
    let stdin: any;
    for (const line of readFileSync(join(dir, n), "utf8").split("\n")) {
      const eq = line.indexOf("=");
      if (eq < 0) continue;
      const [k, v] = [line.slice(0, eq), line.slice(eq + 1)];
      if (k === "stdin") stdin = JSON.parse(v);
      else env[k] = v;
    }
    return { stdin, env, file: n };
  });
}

/** Polls until `pred` holds; fails with `what` after `ms`. */
export async function waitFor(pred: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** True when a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
