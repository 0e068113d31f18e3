/**
 * Seeds a workspace with N cards fast. Two ways, both through the project's own code:
 *   "service": createCard() per card (full validation, one transaction each; ~1-2k/s)
 *   "batch":   cards built in the shape createCard produces (canonicalCard, same fields),
 *              inserted with the Store port's insertCard + a card_created event, many per
 *              write transaction; insertCard also fills the FTS index. Used for 100k.
 * Usage as a script: bun bench/lib/seed.ts DIR N [pool|mixed] [service|batch]
 */
import { openService } from "../../src/platform/open.ts";
import { createCard, type Service } from "../../src/service/index.ts";
import { canonicalCard } from "../../src/domain/card.ts";
import { newCardId } from "../../src/domain/ids.ts";
import type { Card } from "../../src/domain/types.ts";
import { rng, title, body, type Rng } from "./corpus.ts";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { cacheDir, ROOT, run } from "./util.ts";

export interface SeedOptions {
  n: number;
  /** "pool": every card unowned in todo (a take-next pool); "mixed": a realistic spread */
  kind?: "pool" | "mixed";
  how?: "service" | "batch";
  seed?: number;
  /** cards per write transaction in batch mode */
  batch?: number;
}

const PRIORITIES = ["low", "normal", "normal", "high", "urgent"] as const;
const STATUS_W = ["backlog", "todo", "todo", "doing", "review", "done", "done", "done", "done", "done"] as const;
const OWNERS = ["ada", "agent-1", "agent-2"] as const;
const TAGS = ["frontend", "backend", "infra", "docs", "security", "performance", "flaky"] as const;

function tagsFor(r: Rng): string[] {
  const s = new Set<string>();
  for (let i = r.int(3); i > 0; i--) s.add(r.pick(TAGS));
  return [...s];
}

/** `cards init DIR` with the binary under test. */
export async function initWorkspace(bin: string, dir: string): Promise<void> {
  await run([bin, "init", dir], { timeoutMs: 30_000 });
}

export async function openEmbedded(dir: string): Promise<Service> {
  const d = resolve(dir);
  return openService({ dir: d, cwd: d, env: {}, mode: "embedded" });
}

/**
 * A workspace of `n` "mixed" cards, seeded once and kept in $WORK/cache (keyed by the
 * schema and the seeding code): bench/search.ts and bench/heavy-read.ts share it.
 * `someId` is a card in the middle; `seeded` says whether it was seeded now.
 */
export async function cachedMixedWorkspace(bin: string, n: number): Promise<{ ws: string; someId: string; seeded: string }> {
  const key = Bun.hash(["src/store/sqlite/schema.ts", "src/store/sqlite/rows.ts", "src/store/sqlite/search-index.ts", "bench/lib/seed.ts", "bench/lib/corpus.ts"]
    .map((f) => readFileSync(join(ROOT, f), "utf8")).join("\0")).toString(36);
  const ws = join(cacheDir("search"), `ws-${n}-${key}`);
  let seeded = "cached";
  if (!existsSync(join(ws, ".cards", "ok"))) {
    rmSync(ws, { recursive: true, force: true });
    await initWorkspace(bin, ws);
    const s = await seedCards(ws, { n, kind: "mixed", how: "batch", seed: 41, batch: 5000 });
    await Bun.write(join(ws, ".cards", "ok"), s.ids[Math.floor(n / 2)]!);
    seeded = `seeded in ${s.seconds.toFixed(1)} s`;
  }
  return { ws, someId: readFileSync(join(ws, ".cards", "ok"), "utf8"), seeded };
}

/** Seeds `o.n` cards into the workspace at `dir`; returns their ids (oldest first). */
export async function seedCards(dir: string, o: SeedOptions): Promise<{ ids: string[]; seconds: number }> {
  const t0 = performance.now();
  const svc = await openEmbedded(dir);
  try {
    const ids = (o.how ?? (o.n > 5000 ? "batch" : "service")) === "service" ? await viaService(svc, o) : await viaBatch(svc, o);
    return { ids, seconds: (performance.now() - t0) / 1000 };
  } finally {
    svc.close();
  }
}

async function viaService(svc: Service, o: SeedOptions): Promise<string[]> {
  const r = rng(o.seed ?? 1);
  const ids: string[] = [];
  for (let i = 0; i < o.n; i++) {
    const fields = { priority: r.pick(PRIORITIES), description: body(r) };
    const tags = o.kind === "pool" ? [] : tagsFor(r);
    const c = await createCard(svc, { type_id: "task", title: title(r), fields, tags }, { actor: "ada" });
    ids.push(c.id);
  }
  // "mixed" statuses need owners/moves; in service mode they stay in the type's first column.
  return ids;
}

async function viaBatch(svc: Service, o: SeedOptions): Promise<string[]> {
  const r = rng(o.seed ?? 1);
  const type = svc.cardType("task");
  const ws = svc.defs.workspace;
  const ids: string[] = [];
  const batch = o.batch ?? 5000;
  // timestamps one second apart, ending now, so take-next and list order follow creation
  const base = Date.now() - o.n * 1000 - 1000;
  for (let start = 0; start < o.n; start += batch) {
    await svc.store.write((tx) => {
      for (let i = start; i < Math.min(o.n, start + batch); i++) {
        const at = new Date(base + i * 1000).toISOString();
        const status = o.kind === "pool" ? "todo" : r.pick(STATUS_W);
        const owner = o.kind !== "pool" && (status === "doing" || status === "review") ? r.pick(OWNERS) : undefined;
        const card: Card = canonicalCard({
          id: newCardId(), workspace_id: ws.id, type_id: type.id, schema_version: type.schema_version,
          title: title(r), status, owner,
          fields: { priority: r.pick(PRIORITIES), description: body(r) },
          tags: o.kind === "pool" ? [] : tagsFor(r), version: 1,
          created_at: at, updated_at: at, status_since: at, created_by: "ada",
        } as Card);
        tx.insertCard(card);
        tx.appendEvent({ type: "card_created", actor: "ada", at, card_id: card.id, scope: "card", diff: { card } });
        ids.push(card.id);
      }
    });
  }
  return ids;
}

if (import.meta.main) {
  const [dir, n, kind, how] = process.argv.slice(2);
  if (!dir || !n) {
    console.error("usage: bun bench/lib/seed.ts DIR N [pool|mixed] [service|batch]");
    process.exit(2);
  }
  const res = await seedCards(dir, { n: Number(n), kind: (kind as SeedOptions["kind"]) ?? "mixed", how: how as SeedOptions["how"] });
  console.log(JSON.stringify({ seeded: res.ids.length, seconds: Number(res.seconds.toFixed(2)), first: res.ids[0], last: res.ids.at(-1) }));
}
