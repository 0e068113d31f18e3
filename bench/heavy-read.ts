/**
 * A costly read beside everyone else's requests, at 100,000 cards on `cards serve`: one
 * client runs a read that tests every card (a board's counts of blocked cards, its
 * breaches; a take-next dry run with a filter of many conditions) while another reads one card
 * (GET /v1/cards/{id}) in a closed loop. The figure is how long that other client waits
 * meanwhile: a server reads costly lists on a thread of its own (docs/decisions.md).
 *
 *   bun bench/heavy-read.ts
 *
 * Env: N_CARDS (100000), BASE_BIN (an older binary, run the same way beside it),
 * CARDS_BIN, WORK. The workspace is the cached one of bench/search.ts.
 */
import { join } from "node:path";
import { cachedMixedWorkspace } from "./lib/seed.ts";
import { cardsBinary, envNum, machineNote, ms, quantile, report, startServer, workDir, type Row } from "./lib/util.ts";

workDir("heavy-read");
const N = envNum("N_CARDS", 100_000);
const bin = await cardsBinary();
const { ws, someId, seeded } = await cachedMixedWorkspace(bin, N);

/** 40 conditions on a field that no card meets: each reads every task's JSON (docs/limits.md). */
const costly = { $or: Array.from({ length: 40 }, (_, i) => ({ "fields.branch": { $gt: `zzz${i}` } })) };

interface Measure { call: string; callMs: number; p99: number; max: number; n: number }

async function measure(binary: string): Promise<Measure[]> {
  const srv = await startServer([binary, "serve", "--dir", ws, "--port", "0"], { CARDS_ACTOR: "ada" });
  try {
    const calls: Array<{ call: string; run: () => Promise<Response> }> = [
      { call: "GET /v1/boards/main/counts?blocked=true", run: () => fetch(`${srv.url}/v1/boards/main/counts?blocked=true`) },
      { call: "GET /v1/breaches?board_id=main", run: () => fetch(`${srv.url}/v1/breaches?board_id=main`) },
      { call: "POST /v1/cards/take-next (dry run, 40 conditions on a field)", run: () => fetch(`${srv.url}/v1/cards/take-next`, { method: "POST", body: JSON.stringify({ type_id: "task", filter: costly, dry_run: true }) }) },
    ];
    for (const c of calls) await (await c.run()).arrayBuffer(); // warm: the thread, the page cache
    const out: Measure[] = [];
    for (const c of calls) {
      let stop = false;
      const lat: number[] = [];
      const other = (async () => {
        while (!stop) {
          const t0 = performance.now();
          await (await fetch(`${srv.url}/v1/cards/${someId}`)).arrayBuffer();
          lat.push(performance.now() - t0);
        }
      })();
      await Bun.sleep(200);
      const t0 = performance.now();
      const r = await c.run();
      await r.arrayBuffer();
      const callMs = performance.now() - t0;
      if (r.status !== 200) throw new Error(`${c.call}: ${r.status}`);
      stop = true;
      await other;
      out.push({ call: c.call, callMs, p99: quantile(lat, 0.99), max: Math.max(...lat), n: lat.length });
    }
    return out;
  } finally {
    await srv.stop();
  }
}

const now = await measure(bin);
const base = process.env.BASE_BIN ? await measure(process.env.BASE_BIN) : undefined;
const rows: Row[] = now.map((m, i) => ({
  figure: `GET /v1/cards/{id} while ${m.call} reads`,
  value: `p99 ${ms(m.p99)} / max ${ms(m.max)} ms`,
  floor: base ? `BASE_BIN: p99 ${ms(base[i]!.p99)} / max ${ms(base[i]!.max)} ms` : "",
  note: `the costly call took ${ms(m.callMs)} ms${base ? ` (BASE_BIN ${ms(base[i]!.callMs)} ms)` : ""}; ${m.n} reads of one card meanwhile`,
}));
report("heavy-read", `A costly read beside other requests, ${N.toLocaleString("en-US")} cards, cards serve`, rows,
  `Workspace ${seeded} (${join("$WORK/cache/search", ws.split("/").pop()!)}). ${machineNote()}`);
