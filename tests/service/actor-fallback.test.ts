/** actor resolution (Service.resolveActor). */
import { expect, test } from "bun:test";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

// A1 (a blank X-Service-Actor header wins over CARDS_ACTOR / default_user)
test("a blank or whitespace-only actor header falls back to CARDS_ACTOR", async () => {
  const svc = await openTestService(makeWorkspace(), "serve", { CARDS_ACTOR: "env-actor" });
  try {
    expect(svc.resolveActor("   ")).toBe("env-actor");
    expect(svc.resolveActor("")).toBe("env-actor");
    expect(svc.requireActor(" ")).toBe("env-actor");
  } finally {
    svc.close();
  }
});
