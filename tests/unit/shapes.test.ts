/**
 * The plain checks in front of the request shapes accept only bodies valibot accepts
 * unchanged, so the fast path can never let through what the schema refuses.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import * as v from "valibot";
import { ClaimBody, CreateCardBody, PatchCardBody, ReleaseBody, TakeNextBody, type Shape } from "../../src/service/shapes.ts";

const shapes: Record<string, { shape: Shape; keys: string[]; typical: object[] }> = {
  CreateCardBody: {
    shape: CreateCardBody, keys: ["type_id", "title", "status", "fields", "tags", "schema_version", "dry_run"],
    typical: [{ type_id: "task", title: "x" }, { type_id: "bug", title: "y", status: "todo", fields: { priority: "high" }, tags: ["a"], dry_run: true }],
  },
  PatchCardBody: {
    shape: PatchCardBody, keys: ["version", "title", "status", "owner", "tags", "fields", "force", "dry_run"],
    typical: [{ version: 3, status: "doing" }, { version: 1, owner: null, fields: { x: null } }],
  },
  ClaimBody: { shape: ClaimBody, keys: ["version", "status"], typical: [{ version: 2 }, { version: 2, status: "doing" }] },
  ReleaseBody: { shape: ReleaseBody, keys: ["version", "status", "force"], typical: [{}, { version: 4, status: "todo", force: true }] },
  TakeNextBody: {
    shape: TakeNextBody, keys: ["filter", "assign_to", "status", "type_id", "board_id", "dry_run"],
    typical: [{}, { filter: { blocked: false }, status: "doing" }, { board_id: "main", assign_to: "bo", dry_run: true }],
  },
};

const value = fc.oneof(
  fc.string({ maxLength: 3 }), fc.string({ minLength: 195, maxLength: 205 }), fc.constant(""),
  fc.integer({ min: -3, max: 5 }), fc.double({ noNaN: false }), fc.boolean(), fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  // nested objects, with the keys valibot's record() leaves out
  fc.dictionary(fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom("__proto__", "constructor", "prototype")), fc.integer(), { maxKeys: 2 }),
  fc.constantFrom(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"constructor":"x"}'), JSON.parse('{"prototype":1,"b":2}')),
);

describe("request shape fast path", () => {
  for (const [name, { shape, keys, typical }] of Object.entries(shapes)) {
    test(`${name}: whatever the plain check accepts, valibot accepts unchanged`, () => {
      const key = fc.oneof(fc.constantFrom(...keys), fc.constantFrom("owner_", "toString", "__proto__", "extra"));
      fc.assert(fc.property(fc.dictionary(key, value, { maxKeys: 5 }), (body) => {
        if (!shape.quick!(body)) return;
        const r = v.safeParse(shape(), body);
        expect(r.success).toBe(true);
        expect(r.output).toEqual(body);
      }), { numRuns: 3000 });
    });

    test(`${name}: the bodies agents send take the fast path`, () => {
      for (const body of typical) {
        expect(shape.quick!(body)).toBe(true);
        expect(v.safeParse(shape(), body).success).toBe(true);
      }
    });
  }

  test("a missing required key is left to valibot (which names it)", () => {
    expect(CreateCardBody.quick!({ type_id: "task" })).toBe(false);
    expect(ClaimBody.quick!({})).toBe(false);
  });
});
