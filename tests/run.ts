/**
 * Runs the whole bun:test suite and ends with the plain line `N passed, N failed`
 * (read from the junit report), exiting non-zero when anything failed.
 * Tests make their workspaces under one temporary folder (TMPDIR) that is removed at
 * the end, so runs leave nothing behind (thousands of folders in /tmp slow every
 * process start: Bun reads the current folder's entries).
 * Usage: bun tests/run.ts [bun test args...]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const scratch = mkdtempSync(join(tmpdir(), "cards-tests-"));
const report = join(scratch, "junit.xml");
const r = spawnSync(process.execPath, ["test", "--reporter=junit", `--reporter-outfile=${report}`, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, TMPDIR: scratch },
});

let passed = 0;
let failed = 0;
if (existsSync(report)) {
  const xml = readFileSync(report, "utf8");
  const top = xml.match(/<testsuites\b[^>]*>/)?.[0] ?? "";
  const num = (name: string) => Number(top.match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0);
  const skipped = num("skipped");
  failed = num("failures") + num("errors");
  passed = num("tests") - failed - skipped;
}
rmSync(scratch, { recursive: true, force: true });
const code = r.status ?? 1;
if (code !== 0 && failed === 0) failed = 1; // a crash or a load error counts as a failure
console.log(`${passed} passed, ${failed} failed`);
process.exit(code === 0 && failed === 0 ? 0 : 1);
