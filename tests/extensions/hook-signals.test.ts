/**
 * hook once-keys of condition signals (src/extensions/hooks.ts).
 */
import { afterEach, expect, test } from "bun:test";
import { startHooks } from "../../src/extensions/hooks.ts";
import { openTestService } from "../helpers/workspace.ts";
import { recordDir, records, sh, waitFor, workspaceWith } from "./util.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

// H2 (once-key of a signal from a hash of its JSON instead of its row number)
test("identical condition signals written within one millisecond each run the hook", async () => {
  const ws = workspaceWith([]);
  const svc = await openTestService(ws, "serve");
  const rec = recordDir(ws);
  svc.defs = { ...svc.defs, extensions: [{ id: "rej", kind: "hook", on: ["transition_rejected"], run: sh("record.sh"), env: { RECORD_DIR: rec } }] };
  const hooks = startHooks(svc, { log: () => {} });
  cleanup.push(() => svc.close(), () => hooks.stop());
  const n = 30;
  // the same signal, written at once: they share their `at` millisecond
  await Promise.all(Array.from({ length: n }, () => svc.signal({ actor: "ada" } as never, { type: "transition_rejected", diff: { reason: "same" } } as never)));
  const ats = new Set(svc.store.listSignals(0, 100).map((s) => s.event.at));
  expect(ats.size).toBeLessThan(n); // precondition: some signals are byte-identical
  await waitFor(() => records(rec).length >= n, `${n} records`, 10_000).catch(() => {});
  await Bun.sleep(300);
  expect(records(rec).length).toBe(n);
}, 20_000);
