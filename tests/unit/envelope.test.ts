/** The error envelope names a long input instead of repeating it, and maps a failing machine to `unavailable`. */
import { describe, expect, test } from "bun:test";
import { CardsError, fromEnvironment, isCardsError, toEnvelope } from "../../src/domain/errors.ts";

describe("long echoed values", () => {
  test("value and its copies in message are cut, with the length said (before: a 120 KB argument made a 240 KB line)", () => {
    const long = "a".repeat(120_000);
    const env = toEnvelope(new CardsError("not_found", `card ${JSON.stringify(long)} not found`, { value: long }));
    const short = `${"a".repeat(100)}… (120000 characters)`;
    expect(env.value).toBe(short);
    expect(env.message).toBe(`card "${short}" not found`);
  });

  test("a cut never splits a surrogate pair (a lone surrogate is refused by strict JSON readers)", () => {
    const long = `${"a".repeat(99)}😀${"b".repeat(300)}`;
    const env = toEnvelope(new CardsError("bad_request", "x", { value: long }));
    expect(env.value).toBe(`${"a".repeat(99)}… (401 characters)`);
  });

  test("a message long for another reason is cut; short ones and non-string values are left alone", () => {
    const env = toEnvelope(new CardsError("usage", `unexpected ${"x".repeat(5000)}`));
    expect(env.message).toBe(`unexpected ${"x".repeat(989)}… (5011 characters)`);
    const n = toEnvelope(new CardsError("bad_request", "limit must be at most 500", { value: 501, valid_options: ["a".repeat(300)] }));
    expect(n).toEqual({ error: "bad_request", message: "limit must be at most 500", value: 501, valid_options: ["a".repeat(300)] });
    expect(toEnvelope(new CardsError("bad_request", "x", { value: "b".repeat(200) })).value).toBe("b".repeat(200));
  });
});

describe("fromEnvironment", () => {
  const err = (code: string, message = "boom") => Object.assign(new Error(message), { code });

  test("a damaged database, no descriptors left, a full disk and a file that cannot be opened or read are unavailable with what to do", () => {
    for (const [code, says] of [["SQLITE_CORRUPT", "damaged"], ["SQLITE_CORRUPT_INDEX", "damaged"], ["SQLITE_NOTADB", "damaged"], ["EMFILE", "ulimit -n"], ["ENFILE", "ulimit -n"], ["ENOSPC", "free disk space"], ["SQLITE_FULL", "free disk space"], ["SQLITE_CANTOPEN", "permissions"], ["SQLITE_IOERR_READ", "check the disk"], ["SQLITE_READONLY", "permissions"], ["EROFS", "check the disk"], ["EIO", "check the disk"]] as const) {
      const e = fromEnvironment(err(code));
      expect([code, isCardsError(e) && e.code]).toEqual([code, "unavailable"]);
      expect(JSON.stringify(toEnvelope(e))).toContain(says);
    }
  });

  test("anything else is left as it is (an internal error, logged with its stack)", () => {
    const other = err("EACCES");
    expect(fromEnvironment(other)).toBe(other);
    const plain = new TypeError("x is undefined");
    expect(fromEnvironment(plain)).toBe(plain);
    const mine = new CardsError("not_found", "no");
    expect(fromEnvironment(mine)).toBe(mine);
    expect(fromEnvironment("a string")).toBe("a string");
  });
});
