/**
 * take-next race driver (after ../shared/bench/take-next-race.ts) plus a database check:
 * P callers claim until the pool is empty (MAX_EMPTY null answers in a row each), then
 *   - no card id was handed to two callers, and each returned card is owned by its caller;
 *   - in the database every pool card has exactly one owner_changed event with after != null,
 *     whose actor is the card's owner, and no card is left unowned.
 */
import { spawn } from "bun";
import { Database } from "bun:sqlite";
import { quantile } from "./util.ts";

export type Take = (actor: string) => Promise<{ id: string | null; owner?: string }>;
export interface RaceResult { P: number; claims: number; nulls: number; wall: number; rate: number; p50: number; p99: number; max: number; problems: string[] }

const pick = (out: string): { id: string | null; owner?: string } => {
  const j = JSON.parse(out) as { card?: { id: string; owner?: string } | null };
  return j.card ? { id: j.card.id, owner: j.card.owner } : { id: null };
};

/** A CLI caller: one process per call; argv(actor) builds the command line. */
export function cliTake(argv: (actor: string) => string[], env: Record<string, string | undefined>): Take {
  return async (actor) => {
    const p = spawn(argv(actor), { env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) throw new Error(`take-next exited ${code}: ${err.trim().slice(0, 500)}`);
    return pick(out);
  };
}

/** An HTTP caller: POST {base}/v1/cards/take-next with X-Service-Actor. */
export function httpTake(base: string): Take {
  return async (actor) => {
    const r = await fetch(`${base}/v1/cards/take-next`, {
      method: "POST", headers: { "content-type": "application/json", "x-service-actor": actor }, body: "{}",
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`take-next ${r.status}: ${text.slice(0, 500)}`);
    return pick(text);
  };
}

export async function race(P: number, take: Take, o: { timeLimitMs?: number; maxEmpty?: number } = {}): Promise<{ result: RaceResult; got: Array<{ caller: string; id: string }> }> {
  const got: Array<{ caller: string; id: string; owner?: string }> = [];
  const lat: number[] = [];
  const problems: string[] = [];
  let nulls = 0;
  const t0 = performance.now();
  const deadline = t0 + (o.timeLimitMs ?? 60_000);
  await Promise.all(Array.from({ length: P }, async (_, i) => {
    const actor = `w${i + 1}`;
    let empty = 0;
    while (empty < (o.maxEmpty ?? 3) && performance.now() < deadline) {
      const t = performance.now();
      const c = await take(actor);
      lat.push(performance.now() - t);
      if (c.id) { empty = 0; got.push({ caller: actor, id: c.id, owner: c.owner }); } else { empty++; nulls++; }
    }
  }));
  const wall = (performance.now() - t0) / 1000;
  if (performance.now() >= deadline) problems.push("time limit reached before the pool drained");
  const seen = new Map<string, string>();
  for (const c of got) {
    if (seen.has(c.id)) problems.push(`${c.id} handed to ${seen.get(c.id)} and ${c.caller}`);
    seen.set(c.id, c.caller);
    if (c.owner !== undefined && c.owner !== c.caller) problems.push(`${c.id} returned to ${c.caller} owned by ${c.owner}`);
  }
  return {
    result: { P, claims: got.length, nulls, wall, rate: got.length / wall, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: Math.max(...lat), problems },
    got,
  };
}

/** Checks the database after a race over a pool of `pool` cards (all unowned before). */
export function checkDb(dbPath: string, pool: number, got: Array<{ caller: string; id: string }>): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const n = (sql: string) => Number((db.query(sql).get() as { n: number }).n);
    const problems: string[] = [];
    const claimEv = "FROM events WHERE type = 'owner_changed' AND json_extract(diff, '$.after') IS NOT NULL";
    const double = n(`SELECT count(*) AS n FROM (SELECT card_id ${claimEv} GROUP BY card_id HAVING count(*) > 1)`);
    const claimed = n(`SELECT count(DISTINCT card_id) AS n ${claimEv}`);
    const unowned = n("SELECT count(*) AS n FROM cards WHERE owner IS NULL");
    const mismatch = n(`SELECT count(*) AS n FROM events e JOIN cards c ON c.id = e.card_id
      WHERE e.type = 'owner_changed' AND json_extract(e.diff, '$.after') IS NOT NULL AND (c.owner IS NOT e.actor OR json_extract(e.diff, '$.after') IS NOT c.owner)`);
    if (double) problems.push(`${double} double claims`);
    if (claimed !== pool) problems.push(`${claimed} of ${pool} cards claimed`);
    if (unowned) problems.push(`${unowned} cards left unowned`);
    if (mismatch) problems.push(`${mismatch} claim events disagree with the card's owner`);
    if (got.length !== pool) problems.push(`callers reported ${got.length} claims for ${pool} cards`);
    const owner = db.query("SELECT owner FROM cards WHERE id = ?");
    const wrong = got.filter((g) => (owner.get(g.id) as { owner: string | null } | null)?.owner !== g.caller).length;
    if (wrong) problems.push(`${wrong} reported claims not owned by their caller in the database`);
    return problems;
  } finally {
    db.close();
  }
}
