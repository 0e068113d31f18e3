/** The cold path's POSIX path helpers give node:path's answers (domain/paths.ts). */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { posix } from "node:path";
import { joinPath, normalizePath, parentPath, resolvePath } from "../../src/domain/paths.ts";

const segment = fc.constantFrom("a", "b", "cards.db", ".cards", ".", "..", "", "x y", "définitions");
const path = fc.array(segment, { maxLength: 6 }).chain((parts) =>
  fc.boolean().map((abs) => (abs ? "/" : "") + parts.join("/")));
const absolute = path.map((p) => (p.startsWith("/") ? p : `/${p}`));

describe("paths", () => {
  test("normalizePath = posix.normalize without a trailing slash", () => {
    fc.assert(fc.property(path, (p) => {
      const want = posix.normalize(p);
      expect(normalizePath(p)).toBe(want.length > 1 && want.endsWith("/") ? want.slice(0, -1) : want);
    }), { numRuns: 2000 });
  });

  test("joinPath = posix.join (up to a trailing slash)", () => {
    fc.assert(fc.property(fc.array(path, { maxLength: 4 }), (parts) => {
      const want = posix.join(...parts);
      expect(joinPath(...parts)).toBe(want.length > 1 && want.endsWith("/") ? want.slice(0, -1) : want);
    }), { numRuns: 2000 });
  });

  test("resolvePath = posix.resolve from an absolute cwd", () => {
    fc.assert(fc.property(absolute, path, (cwd, p) => {
      expect(resolvePath(cwd, p)).toBe(posix.resolve(cwd, p));
    }), { numRuns: 2000 });
    expect(resolvePath("/work/ws")).toBe("/work/ws");
  });

  test("parentPath = posix.dirname of normalized paths (what resolvePath and joinPath give)", () => {
    fc.assert(fc.property(path, (raw) => {
      const p = normalizePath(raw);
      expect(parentPath(p)).toBe(posix.dirname(p));
    }), { numRuns: 2000 });
    for (const p of ["/", "/a", "a", "/a/b/", "a/b", ""]) expect(parentPath(p)).toBe(posix.dirname(p));
  });
});
