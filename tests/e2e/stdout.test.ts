/**
 * What a shell script meets on stdout: a disk that cannot take the answer, a reader that
 * stops reading, `dump --out` onto what is not a regular file, and list flags repeated.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertBinary, cleanEnv, run } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";

let ws: string;
let uri: string;
const HAS_FULL = existsSync("/dev/full");

beforeAll(() => {
  assertBinary();
  ws = makeWorkspace();
  for (let i = 0; i < 3; i++) run(["cards", "create", "--type", "task", "--title", `t${i}`], { cwd: ws, env: { CARDS_ACTOR: "ada" } });
  const c = run(["cards", "create", "--type", "task", "--title", "art"], { cwd: ws, env: { CARDS_ACTOR: "ada" } }).json;
  const up = run(["api", "POST", `/cards/${c.id}/artifacts/output`, "--data", "@-"], { cwd: ws, env: { CARDS_ACTOR: "ada" }, input: "x".repeat(300_000) });
  uri = up.json.fields.output.uri;
});

/** Runs `cards ARGS` through sh with a redirection or pipe after it. */
function shell(args: string[], tail: string): { code: number; stdout: string; stderr: string } {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const r = spawnSync("bash", ["-c", `set -o pipefail; "$0" ${quoted} ${tail}`, BIN], { cwd: ws, env: cleanEnv({ CARDS_ACTOR: "ada" }), encoding: "utf8", timeout: 30_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe("stdout that cannot take the answer", () => {
  test.skipIf(!HAS_FULL)("a full disk is exit 7 with one envelope line, on reads, writes and bytes (before: exit 0 and no answer; artifacts: a stack)", () => {
    const count = () => run(["cards", "list", "--limit", "200"], { cwd: ws }).json.items.length;
    const before = count();
    for (const args of [["cards", "list"], ["workspace"], ["cards", "create", "--type", "task", "--title", "lost answer"], ["artifacts", "get", uri], ["api", "GET", `/${uri}`]]) {
      const r = shell(args, "> /dev/full");
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 7]);
      const lines = r.stderr.trim().split("\n");
      expect([args.join(" "), lines.length]).toEqual([args.join(" "), 1]);
      expect(JSON.parse(lines[0]!)).toMatchObject({ error: "unavailable" });
      expect(r.stderr).toContain("ENOSPC");
    }
    // the write was done; only its answer was lost, as the hint says
    expect(count()).toBe(before + 1);
  });

  test("a reader that stops reading ends the command quietly, exit 0 (before: artifacts printed a stack, exit 1; dump exit 7 with a disk hint)", () => {
    for (const args of [["artifacts", "get", uri], ["api", "GET", `/${uri}`], ["dump"], ["cards", "list", "--limit", "200"]]) {
      const r = shell(args, "| head -c 10 >/dev/null");
      expect([args.join(" "), r.code, r.stderr]).toEqual([args.join(" "), 0, ""]);
    }
  });
});

describe("dump --out", () => {
  test("a symbolic link is written through, never replaced (before: the link became a file and its target was never written)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-out-"));
    writeFileSync(join(dir, "target.jsonl"), "old");
    symlinkSync(join(dir, "target.jsonl"), join(dir, "link"));
    symlinkSync(join(dir, "new.jsonl"), join(dir, "dangling"));
    expect(run(["dump", "--out", join(dir, "link")], { cwd: ws }).code).toBe(0);
    expect(run(["dump", "--out", join(dir, "dangling")], { cwd: ws }).code).toBe(0);
    expect(lstatSync(join(dir, "link")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, "dangling")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, "target.jsonl"), "utf8")).toContain('"record":"header"');
    expect(readFileSync(join(dir, "new.jsonl"), "utf8")).toContain('"record":"header"');
    expect(readdirSync(dir).sort()).toEqual(["dangling", "link", "new.jsonl", "target.jsonl"]);
  });

  test("a device or a pipe is written as it is (before: /dev/null itself was replaced by a regular file)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-out-"));
    // through a link, so a binary that replaces what it names replaces the link, not /dev/null
    symlinkSync("/dev/null", join(dir, "null"));
    const r = run(["dump", "--out", join(dir, "null")], { cwd: ws });
    expect(r.code).toBe(0);
    expect(lstatSync(join(dir, "null")).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).toEqual(["null"]);
    expect(lstatSync("/dev/null").isCharacterDevice()).toBe(true);
    // a named pipe with a reader on the other end
    const fifo = join(dir, "fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const piped = spawnSync("sh", ["-c", `cat "$1" > "$1.out" & "$0" dump --out "$1"; wait`, BIN, fifo], { cwd: ws, env: cleanEnv(), encoding: "utf8" });
    expect([piped.status, piped.stderr]).toEqual([0, ""]);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readFileSync(`${fifo}.out`, "utf8")).toContain('"record":"header"');
  });

  test("a directory is a usage error, and nothing is written", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-out-"));
    const r = run(["dump", "--out", dir], { cwd: ws });
    expect([r.code, r.error.error, r.error.field]).toEqual([2, "usage", "--out"]);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("repeated flags", () => {
  test("a list flag given again adds up (before: --tags a --tags b stored only b)", () => {
    const made = run(["cards", "create", "--type", "task", "--title", "two tags", "--tags", "frontend", "--tags", "backend"], { cwd: ws, env: { CARDS_ACTOR: "ada" } });
    expect(made.json.tags).toEqual(["frontend", "backend"]);
    const patched = run(["cards", "patch", made.json.id, "--version", "1", "--tags", "docs", "--tags=infra"], { cwd: ws, env: { CARDS_ACTOR: "ada" } });
    expect(patched.json.tags).toEqual(["docs", "infra"]);
    run(["cards", "create", "--type", "task", "--title", "in todo", "--status", "todo"], { cwd: ws, env: { CARDS_ACTOR: "ada" } });
    const both = run(["cards", "list", "--status", "backlog", "--status", "todo", "--brief", "--limit", "200"], { cwd: ws }).json.items;
    const statuses = new Set(both.map((c: { status: string }) => c.status));
    const one = run(["cards", "list", "--status", "todo", "--brief", "--limit", "200"], { cwd: ws }).json.items;
    expect(both.length).toBeGreaterThan(one.length);
    expect([...statuses].every((s) => s === "backlog" || s === "todo")).toBe(true);
    // a flag that is not a list keeps its last value
    expect(run(["cards", "create", "--type", "task", "--title", "first", "--title", "last"], { cwd: ws, env: { CARDS_ACTOR: "ada" } }).json.title).toBe("last");
  });
});
