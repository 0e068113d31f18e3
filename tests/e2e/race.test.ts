/**
 * The no-double-claim guarantee across processes: two `cards serve` processes and
 * embedded CLI processes race take-next on one workspace file until it is drained.
 */
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { assertBinary, cleanEnv, serve } from "../helpers/binary.ts";
import { BIN, makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { createCard } from "../../src/service/index.ts";

const CARDS = 1000;

/** One embedded CLI worker: a fresh `cards` process per take-next until the queue is empty. */
function cliWorker(dir: string, actor: string, filter?: object): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // a tiny shell loop keeps process-start costs real: every claim is its own process
    const script = `while out=$("${BIN}" --dir "${dir}" --actor ${actor} cards take-next --type task${filter ? ` --filter '${JSON.stringify(filter)}'` : ""}); do
      case "$out" in *'"card":null'*) exit 0;; esac; printf '%s\\n' "$out"; done; exit 1`;
    const p = spawn("sh", ["-c", script], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => { out += d; });
    p.stderr.setEncoding("utf8").on("data", (d: string) => { err += d; });
    p.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`${actor} exited ${code}: ${err}`));
      resolve(out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).card.id));
    });
  });
}

async function httpWorker(url: string, actor: string, filter?: object): Promise<string[]> {
  const got: string[] = [];
  for (;;) {
    const r = await fetch(`${url}/v1/cards/take-next`, {
      method: "POST", headers: { "content-type": "application/json", "x-service-actor": actor }, body: JSON.stringify({ type_id: "task", ...(filter ? { filter } : {}) }),
    });
    if (r.status !== 200) throw new Error(`${actor}: ${r.status} ${await r.text()}`);
    const { card } = (await r.json()) as { card: { id: string; owner: string } | null };
    if (!card) return got;
    expect(card.owner).toBe(actor);
    got.push(card.id);
  }
}

/**
 * Seeds `n` tasks (`decoys` more that the filter leaves out), races 8 workers until the
 * queue is empty, and checks every matching card went out exactly once.
 */
async function race(n: number, filter?: object, decoys = 0): Promise<void> {
  {
    assertBinary();
    const dir = makeWorkspace();
    const seed = await openTestService(dir, "embedded");
    const ids = new Set<string>();
    for (let i = 0; i < n; i++) ids.add((await createCard(seed, { type_id: "task", title: `race ${i}`, fields: { priority: "high" } }, { actor: "ada" })).id);
    for (let i = 0; i < decoys; i++) await createCard(seed, { type_id: "task", title: `decoy ${i}`, fields: { priority: "low" } }, { actor: "ada" });
    seed.close();

    const [s1, s2] = await Promise.all([serve(dir), serve(dir)]);
    try {
      const results = await Promise.all([
        ...[0, 1, 2, 3].map((i) => cliWorker(dir, `cli-${i}`, filter).then((got) => ({ actor: `cli-${i}`, got }))),
        ...[0, 1].map((i) => httpWorker(s1!.url, `http-a${i}`, filter).then((got) => ({ actor: `http-a${i}`, got }))),
        ...[0, 1].map((i) => httpWorker(s2!.url, `http-b${i}`, filter).then((got) => ({ actor: `http-b${i}`, got }))),
      ]);
      const all = results.flatMap((r) => r.got);
      expect(all.length).toBe(n);
      expect(new Set(all).size).toBe(n);
      expect(new Set(all)).toEqual(ids);
      expect(results.filter((r) => r.actor.startsWith("cli")).some((r) => r.got.length > 0)).toBe(true);

      // the database agrees: one owner per card, the one who got it, and one claim event each
      const check = await openTestService(dir, "embedded");
      try {
        const owners = new Map(results.flatMap((r) => r.got.map((id) => [id, r.actor] as const)));
        for (const id of ids) {
          const card = check.store.getCard(id)!;
          expect(card.owner).toBe(owners.get(id)!);
          expect(card.version).toBe(2);
          const claims = check.store.listEvents({ cardId: id, types: ["owner_changed"], limit: 10 });
          expect(claims.length).toBe(1);
          expect(claims[0]!.actor).toBe(owners.get(id)!);
        }
      } finally {
        check.close();
      }
    } finally {
      await Promise.all([s1?.stop(), s2?.stop()]);
    }
  }
}

describe("take-next races across processes", () => {
  test(`8 workers (4 embedded CLI processes, 4 HTTP clients on 2 servers) drain ${CARDS} cards: each exactly once`, () => race(CARDS), 120_000);

  // a filter's candidates are read before the write lock and re-checked by id under it;
  // racers that lost them all fall back to a read under the lock: still each card once
  test("the same with a filter: every matching card exactly once, none of the others", () => race(300, { "fields.priority": "high", blocked: false }, 100), 120_000);
});

describe("many processes opening a fresh workspace at once", () => {
  test("servers and CLI calls racing the first open (schema creation) all succeed", async () => {
    assertBinary();
    for (let round = 0; round < 3; round++) {
      const dir = makeWorkspace();
      const cli = () => new Promise<number>((resolve) => {
        const p = spawn(BIN, ["--dir", dir, "cards", "create", "--type", "task", "--title", "first"], { env: cleanEnv(), stdio: "ignore" });
        p.on("exit", (code) => resolve(code ?? -1));
      });
      const [servers, codes] = await Promise.all([
        Promise.all([serve(dir), serve(dir), serve(dir)]),
        Promise.all([cli(), cli(), cli(), cli()]),
      ]);
      try {
        expect(codes).toEqual([0, 0, 0, 0]);
        for (const s of servers) expect((await fetch(`${s.url}/v1/health`)).status).toBe(200);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
  }, 60_000);
});
