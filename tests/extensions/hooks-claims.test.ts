/** Hook claims against a host whose write lock the test holds: shutdown while a claim waits, quiesce called twice. */
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHooks, type HookHost } from "../../src/extensions/hooks.ts";
import type { CardEvent, ExtensionDef } from "../../src/domain/types.ts";

/** A host with one card type, a once-key set in memory and a write lock the test opens. */
function gatedHost(exts: ExtensionDef[]) {
  const claimCalls: string[] = [];
  const claimed = new Set<string>();
  let listeners: Array<(e: CardEvent) => void> = [];
  let gate: Promise<void> = Promise.resolve();
  const host: HookHost = {
    root: mkdtempSync(join(tmpdir(), "hooks-claims-")),
    defs: { fingerprint: "fp-test", extensions: exts, boards: new Map() },
    store: {
      getCard: () => ({ type_id: "task" }),
      listEvents: () => [],
      async write(fn) {
        await gate;
        return fn({ claimOnce: (key: string) => { claimCalls.push(key); if (claimed.has(key)) return false; claimed.add(key); return true; } });
      },
    },
    subscribe(fn) { listeners.push(fn); return () => { listeners = listeners.filter((l) => l !== fn); }; },
  };
  let n = 0;
  const publish = () => {
    const e = { id: String(++n).padStart(12, "0"), type: "card_created", actor: "ada", at: new Date().toISOString(), card_id: "card_1", scope: "card", diff: { card: { type_id: "task" } } } as unknown as CardEvent;
    for (const l of listeners) l(e);
  };
  return { host, publish, claimCalls, hold: () => { let open!: () => void; gate = new Promise((r) => { open = r; }); return open; } };
}
const hook = (run: string[]): ExtensionDef => ({ id: "h", kind: "hook", on: ["card_created"], run } as ExtensionDef);

test("a claim still waiting for the write lock when the hooks stop claims nothing: the event stays another server's to take", async () => {
  const g = gatedHost([hook(["true"])]);
  const logs: string[] = [];
  const hooks = startHooks(g.host, { log: (m) => logs.push(m) });
  const open = g.hold();
  g.publish();
  await Bun.sleep(10);
  await hooks.stop();
  open();
  await Bun.sleep(50);
  // before: the once-key was recorded, then the run dropped ("1 claimed hook run(s) dropped")
  expect(g.claimCalls).toEqual([]);
  expect(logs).toEqual([]);
});

test("quiesce() twice answers one promise, resolved once the run ends (the first call's never resolved)", async () => {
  const g = gatedHost([hook(["sleep", "0.2"])]);
  const hooks = startHooks(g.host, { log: () => {} });
  g.publish();
  await Bun.sleep(50);
  const first = hooks.quiesce();
  const second = hooks.quiesce();
  expect(second).toBe(first);
  await first;
  expect(hooks.busy()).toBe(0);
  await hooks.stop();
});
