/**
 * Requests in a server run against a pinned view of the service (one definitions set from
 * start to end). State the service keeps across writes lives on the service itself, so
 * housekeeping that runs every N writes runs in a server too.
 */
import { describe, expect, test } from "bun:test";
import { dispatch } from "../../src/api/dispatch.ts";
import { openTestService } from "../helpers/workspace.ts";
import { pruneDue, PRUNE_EVERY } from "../../src/service/service.ts";

describe("pinned service views", () => {
  test("old idempotency records are pruned after 200 writes made through requests; a day-old one is kept", async () => {
    const svc = await openTestService(undefined, "serve");
    try {
      const old = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();
      await svc.store.write((tx) => tx.putIdempotency({ key: "ancient", actor: "ada", request_hash: "h", status: 201, body: "{}", created_at: old }));
      // a day old: within the 7 days a key is kept
      const recent = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
      await svc.store.write((tx) => tx.putIdempotency({ key: "recent", actor: "ada", request_hash: "h", status: 201, body: "{}", created_at: recent }));
      expect(svc.store.getIdempotency("ancient")).not.toBeNull();
      for (let i = 0; i < 200; i++) {
        const r = await dispatch(svc, {
          method: "POST", path: "/cards", query: {}, headers: { "x-service-actor": "ada" },
          body: JSON.stringify({ type_id: "task", title: `t${i}` }),
        });
        expect(r.status).toBe(201);
      }
      expect(svc.store.getIdempotency("ancient")).toBeNull();
      expect(svc.store.getIdempotency("recent")).not.toBeNull();
    } finally {
      svc.close();
    }
  });

  test("pruning is due every 200th write, and at a process's first write by a 1-in-200 draw (one-shot CLI calls)", () => {
    expect(pruneDue(PRUNE_EVERY, 0.99)).toBe(true);
    expect(pruneDue(2 * PRUNE_EVERY, 0.99)).toBe(true);
    expect(pruneDue(1, 0.001)).toBe(true);
    expect(pruneDue(1, 1 / PRUNE_EVERY)).toBe(false);
    expect(pruneDue(2, 0)).toBe(false);
    expect(pruneDue(199, 0)).toBe(false);
  });

  test("requests share one view per definitions set; a reload gives the next ones a new view", async () => {
    const svc = await openTestService(undefined, "serve");
    try {
      const a = svc.pin();
      expect(svc.pin()).toBe(a);
      expect(a.defs).toBe(svc.defs);
      svc.defs = { ...svc.defs };
      const b = svc.pin();
      expect(b).not.toBe(a);
      expect(b.defs).toBe(svc.defs);
      expect(a.defs).not.toBe(svc.defs); // a request that started before keeps its set
    } finally {
      svc.close();
    }
  });
});
