/**
 * bench/portability: `cards dump` and `cards restore` of 100,000 cards with 300,000 events:
 * wall seconds and peak RSS of each direction (GNU time), plus a check that the restored
 * workspace dumps to the same lines. Env: CARDS (100000), EVENTS_PER_CARD (3)
 */
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { cardsBinary, envNum, int, machineNote, report, workDir } from "./lib/util.ts";
import { initWorkspace, openEmbedded, seedCards } from "./lib/seed.ts";

const CARDS = envNum("CARDS", 100_000);
const PER_CARD = envNum("EVENTS_PER_CARD", 3);

const bin = await cardsBinary();
const base = workDir("portability");
const src = join(base, "src");
await initWorkspace(bin, src);
const { ids, seconds: seedSecs } = await seedCards(src, { n: CARDS, kind: "mixed", how: "batch" });
// top up the log to PER_CARD events per card with realistic field updates
const svc = await openEmbedded(src);
const t0 = performance.now();
const extra = CARDS * PER_CARD - ids.length;
for (let done = 0; done < extra; ) {
  const n = Math.min(20_000, extra - done);
  await svc.store.write((tx) => {
    for (let i = 0; i < n; i++) {
      const id = ids[(done + i) % ids.length]!;
      tx.appendEvent({ type: "field_updated", actor: "agent-1", at: new Date().toISOString(), card_id: id, scope: "card", diff: { field: "description", before: null, after: `note ${done + i}` } });
    }
  });
  done += n;
}
svc.close();
const topUpSecs = (performance.now() - t0) / 1000;

/** Runs the binary under GNU time; returns seconds and peak RSS in MiB. */
function timed(args: string[], cwd: string): { secs: number; rssMiB: number } {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", bin, ...args], { cwd, encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr.slice(-2000)}`);
  const [secs, kb] = r.stderr.trim().split("\n").at(-1)!.split(" ").map(Number);
  return { secs: secs!, rssMiB: kb! / 1024 };
}

if (!statSync("/usr/bin/time", { throwIfNoEntry: false })) throw new Error("needs GNU time: apt-get install time");
const file = join(base, "dump.jsonl");
const dump = timed(["dump", "--out", file], src);
const dst = join(base, "dst");
await initWorkspace(bin, dst);
const restore = timed(["restore", "--in", file], dst);
const again = join(base, "again.jsonl");
timed(["dump", "--out", again], dst);
const body = (p: string) => readFileSync(p, "utf8").split("\n").slice(1).join("\n");
const same = body(file) === body(again);
const lines = readFileSync(file, "utf8").split("\n").length - 1;

report("portability", `dump and restore: ${int(CARDS)} cards, ${int(CARDS * PER_CARD)} events`, [
  { figure: "cards dump: seconds", value: `${dump.secs.toFixed(1)} s`, target: "< 20 s", pass: dump.secs < 20 },
  { figure: "cards dump: peak RSS", value: `${dump.rssMiB.toFixed(0)} MiB`, target: "< 200 MB", pass: dump.rssMiB < 190 },
  { figure: "cards restore: seconds", value: `${restore.secs.toFixed(1)} s`, target: "< 20 s", pass: restore.secs < 20 },
  { figure: "cards restore: peak RSS", value: `${restore.rssMiB.toFixed(0)} MiB`, target: "< 200 MB", pass: restore.rssMiB < 190 },
  { figure: "round trip: dump -> restore -> dump identical", value: same ? "yes" : "NO", note: `${int(lines)} lines, ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB`, pass: same },
], `${machineNote()}; seeding ${seedSecs.toFixed(1)} s + ${topUpSecs.toFixed(1)} s`);
