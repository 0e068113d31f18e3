/** actor resolution (Service.resolveActor). */
import { expect, test } from "bun:test";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

// A1 (a blank X-Service-Actor header wins over CARDS_ACTOR / default_user)
test("an empty actor header falls back to CARDS_ACTOR; spaces and tabs at its ends are dropped, as HTTP drops them", async () => {
  const svc = await openTestService(makeWorkspace(), "serve", { CARDS_ACTOR: "env-actor" });
  try {
    expect(svc.resolveActor("")).toBe("env-actor");
    expect(svc.resolveActor(undefined)).toBe("env-actor");
    expect(svc.requireActor(" \tbob \t")).toBe("bob");
  } finally {
    svc.close();
  }
});

test("a blank actor (spaces, NBSP, U+3000) or one with other whitespace at its ends is 400, never passed over for CARDS_ACTOR or default_user (before: trimmed away)", async () => {
  const svc = await openTestService(makeWorkspace(), "serve", { CARDS_ACTOR: "env-actor" });
  const refusal = (f: () => unknown) => { try { f(); } catch (e: any) { return [e.code, e.extra.field, e.message]; } return "taken"; };
  try {
    expect(refusal(() => svc.resolveActor("   "))).toEqual(["bad_request", "actor", 'the actor "   " is blank (U+0020)']);
    expect(refusal(() => svc.requireActor("\u3000"))).toEqual(["bad_request", "actor", 'the actor "\u3000" is blank (U+3000)']);
    expect(refusal(() => svc.requireActor("\u00a0bob"))).toEqual(["bad_request", "actor", 'the actor "\u00a0bob" starts or ends with whitespace (U+00A0)']);
    expect(refusal(() => svc.requireActor("bob\u3000"))).toEqual(["bad_request", "actor", 'the actor "bob\u3000" starts or ends with whitespace (U+3000)']);
    // inside the name it is part of the name
    expect(svc.requireActor("ada\u00a0lovelace")).toBe("ada\u00a0lovelace");
  } finally {
    svc.close();
  }
  // the service's own CARDS_ACTOR the same (a default_user would have acted instead)
  const blankEnv = await openTestService(makeWorkspace(), "serve", { CARDS_ACTOR: "\u3000" });
  try {
    expect(refusal(() => blankEnv.requireActor(undefined))).toEqual(["bad_request", "actor", 'CARDS_ACTOR "\u3000" is blank (U+3000)']);
    expect(blankEnv.requireActor("ada")).toBe("ada");
  } finally {
    blankEnv.close();
  }
});
