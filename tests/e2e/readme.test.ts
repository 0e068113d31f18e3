/** The README's "Using it" block runs as written, in a shell, from a fresh directory. */
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { assertBinary, cleanEnv } from "../helpers/binary.ts";
import { BIN, ROOT } from "../helpers/workspace.ts";

test("every command of README's `Using it` runs (a server, stdin and placeholder ids aside)", () => {
  assertBinary();
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = readme.slice(readme.indexOf("## Using it"));
  const lines = block.split("\n").slice(1).filter((l) => l.startsWith("    ")).map((l) => l.trim());
  const end = lines.findIndex((l) => l.startsWith("cards mcp"));
  const commands = lines.slice(0, end + 1)
    // needs a running server, waits on stdin, or names a card id that exists nowhere
    .filter((l) => !l.includes("CARDS_URL=") && !l.startsWith("cards mcp") && !l.includes(" ID "))
    .map((l) => l.replace(/\s+#.*$/, ""));
  expect(commands[0]).toStartWith("export PATH=");
  expect(commands.length).toBeGreaterThan(8);
  // the README runs them in the checkout, the workspace `npm start` serves: a copy of its
  // definitions stands in for it (the test writes no cards into the repository), one
  // folder down so `cards init ../queue` stays inside the scratch directory
  const cwd = join(mkdtempSync(join(tmpdir(), "cards-readme-")), "checkout");
  cpSync(join(ROOT, "definitions"), join(cwd, "definitions"), { recursive: true });
  // `$PWD/dist` of the README is the checkout's dist/: run from a directory holding it
  const script = ["set -e", `cd ${JSON.stringify(dirname(dirname(BIN)))}`, commands[0]!, `cd ${JSON.stringify(cwd)}`, ...commands.slice(1).map((c) => `${c} > /dev/null`)].join("\n");
  const r = spawnSync("bash", ["-c", script], { env: cleanEnv({}), encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
});
