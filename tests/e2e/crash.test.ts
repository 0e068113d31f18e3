/**
 * Crash safety: 8 writers (4 HTTP clients, 4 embedded CLI process loops) work on one
 * workspace while the server is SIGKILLed at random moments and restarted. Afterwards:
 * every acknowledged write is present, each card's version equals its number of
 * mutations in the durable log, event ids have no gaps, and no card has two owners.
 */
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { assertBinary, cleanEnv, serve, type Server } from "../helpers/binary.ts";
import { BIN, makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { DURABLE_CARD_EVENTS } from "../../src/domain/types.ts";

const KILLS = 6;

test(`${KILLS} SIGKILLs under 8 writers lose nothing acknowledged and leave no half-applied write`, async () => {
  assertBinary();
  const dir = makeWorkspace();
  let server: Server = await serve(dir);
  let running = true;
  const acked = new Map<string, number>(); // card id -> highest acknowledged version
  const ack = (id: string, version: number) => acked.set(id, Math.max(acked.get(id) ?? 0, version));
  const claims: Array<{ id: string; owner: string }> = [];

  const httpWriter = async (n: number) => {
    const actor = `http-${n}`;
    while (running) {
      try {
        const call = (path: string, method: string, body: unknown) =>
          fetch(`${server.url}/v1${path}`, { method, headers: { "content-type": "application/json", "x-service-actor": actor }, body: JSON.stringify(body) });
        const c = await call("/cards", "POST", { type_id: "task", title: `${actor} card` });
        if (c.status !== 201) continue;
        const card = (await c.json()) as any;
        ack(card.id, 1);
        await Bun.sleep(2);
        const p = await call(`/cards/${card.id}`, "PATCH", { version: 1, title: `${actor} card, renamed` });
        if (p.status === 200) ack(card.id, ((await p.json()) as any).version);
        await Bun.sleep(2);
        const t = await call("/cards/take-next", "POST", { type_id: "task" });
        if (t.status === 200) {
          const got = ((await t.json()) as any).card;
          if (got) { ack(got.id, got.version); claims.push({ id: got.id, owner: got.owner }); }
        }
      } catch {
        await Bun.sleep(20); // the server is down or restarting
      }
    }
  };

  const cliWriter = async (n: number) => {
    const actor = `cli-${n}`;
    const cli = (args: string[]) => new Promise<any>((resolve) => {
      const p = spawn(BIN, ["--dir", dir, "--actor", actor, ...args], { env: cleanEnv(), stdio: ["ignore", "pipe", "ignore"] });
      let out = "";
      p.stdout.setEncoding("utf8").on("data", (d: string) => { out += d; });
      p.on("exit", (code) => resolve(code === 0 ? JSON.parse(out) : null));
    });
    while (running) {
      const card = await cli(["cards", "create", "--type", "task", "--title", `${actor} card`]);
      if (!card) continue;
      ack(card.id, 1);
      await Bun.sleep(2);
      const patched = await cli(["cards", "patch", card.id, "--version", "1", "--status", "todo"]);
      if (patched) ack(card.id, patched.version);
    }
  };

  const writers = [0, 1, 2, 3].map(httpWriter).concat([0, 1, 2, 3].map(cliWriter));
  for (let i = 0; i < KILLS; i++) {
    await Bun.sleep(150 + Math.random() * 350);
    server.proc.kill("SIGKILL");
    await new Promise((r) => server.proc.once("exit", r));
    server = await serve(dir);
  }
  await Bun.sleep(200);
  running = false;
  await Promise.all(writers);
  await server.stop();

  const svc = await openTestService(dir, "embedded");
  try {
    expect(acked.size).toBeGreaterThan(20);
    for (const [id, version] of acked) {
      const card = svc.store.getCard(id);
      expect(card).not.toBeNull();
      expect(card!.version).toBeGreaterThanOrEqual(version);
    }
    const events = [...svc.store.iterateEvents()];
    events.forEach((e, i) => expect(Number(e.id)).toBe(i + 1)); // no gaps
    const mutations = new Map<string, Set<string>>();
    for (const e of events) {
      if (!e.card_id || !(DURABLE_CARD_EVENTS as readonly string[]).includes(e.type)) continue;
      if (!mutations.has(e.card_id)) mutations.set(e.card_id, new Set());
      mutations.get(e.card_id)!.add(`${e.at}|${e.actor}`); // one write transaction = one (at, actor)
    }
    for (const card of svc.store.iterateCards()) {
      expect(mutations.get(card.id)?.size).toBe(card.version);
      const owned = events.filter((e) => e.card_id === card.id && e.type === "owner_changed" && (e.diff as any).after !== null);
      expect(owned.length).toBeLessThanOrEqual(1);
      if (owned.length === 1) expect(card.owner).toBe((owned[0]!.diff as any).after);
    }
    const claimed = new Set<string>();
    for (const c of claims) {
      expect(claimed.has(c.id)).toBe(false);
      claimed.add(c.id);
      expect(svc.store.getCard(c.id)!.owner).toBe(c.owner);
    }
  } finally {
    svc.close();
  }
}, 120_000);
