/**
 * A one-shot CLI call runs its JavaScript once, in JSC's interpreter. A function it calls
 * once per row of a page crosses JSC's tier-up threshold, and JSC then starts compiler
 * threads and compiles it: ~0.45 ms of a ~7 ms `cards list`. The hot commands map whole
 * pages in one function instead (store/sqlite/rows.ts). This checks the outcome
 * directly, with JSC's own report of what it compiles: no timing is involved.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { makeWorkspace } from "../helpers/workspace.ts";
import { assertBinary, run } from "../helpers/binary.ts";

assertBinary();

/** Dates every definitions file a minute back, so the cached definitions are trusted at once. */
function ageDefinitions(dir: string): void {
  const past = new Date(Date.now() - 60_000);
  const walk = (p: string): void => {
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
    utimesSync(p, past, past);
  };
  walk(join(dir, "definitions"));
}

describe("the hot one-shot commands stay in JSC's interpreter", () => {
  test("list, get, create, patch, take-next and events compile nothing, with full pages", () => {
    const dir = makeWorkspace();
    ageDefinitions(dir);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const r = run(["cards", "create", "--type", "task", "--title", `card ${i}`, "--status", "todo"], { cwd: dir });
      expect(r.code).toBe(0);
      ids.push(r.json.id);
    }
    const verbose = { BUN_JSC_verboseCompilation: "1" };
    const calls: string[][] = [
      ["cards", "list"],
      ["cards", "list", "--limit", "200"],
      ["cards", "get", ids[0]!],
      ["cards", "create", "--type", "task", "--title", "one more"],
      ["cards", "patch", ids[1]!, "--version", "1", "--title", "renamed"],
      ["cards", "take-next", "--actor", "ada"],
      ["events", "--limit", "100"],
    ];
    for (const args of calls) {
      const r = run(args, { cwd: dir, env: verbose });
      expect({ args: args.join(" "), code: r.code, err: r.code ? r.stderr.slice(-300) : "" }).toEqual({ args: args.join(" "), code: 0, err: "" });
      const compiled = r.stderr.split("\n").filter((l) => l.includes("compiling"));
      expect({ args: args.join(" "), compiled }).toEqual({ args: args.join(" "), compiled: [] });
    }
  }, 60_000);
});
