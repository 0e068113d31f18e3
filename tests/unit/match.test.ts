/** The route matcher agrees with rou3 (the router it replaced) over the whole route table. */
import { describe, expect, test } from "bun:test";
import { addRoute, createRouter, findRoute } from "rou3";
import { ROUTES, type Route } from "../../src/api/routes.ts";
import { RouteTable } from "../../src/api/match.ts";

const VALUES = ["card_1", "take-next", "append", "x%2Fy", "links", "sha256", ""];

/** Concrete paths for a pattern: every param replaced by each sample value. */
function pathsOf(pattern: string): string[] {
  let out = [""];
  for (const seg of pattern.split("/").slice(1)) {
    const options = seg.startsWith("**") ? ["sha256/ab/cd", "", "a"] : seg.startsWith(":") ? VALUES : [seg];
    out = out.flatMap((p) => options.map((o) => `${p}/${o}`));
  }
  return out;
}

describe("RouteTable", () => {
  const router = createRouter<Route>();
  for (const r of ROUTES) addRoute(router, r.method, r.path, r);
  const table = new RouteTable(ROUTES);
  const paths = new Set<string>(["/", "/nope", "/cards/", "/cards//claim", "/cards/a/b/c/d/e", "/artifacts", "/v1/cards"]);
  for (const r of ROUTES) for (const p of pathsOf(r.path)) paths.add(p);

  test("the same route and params as rou3 for every method and path", () => {
    let compared = 0;
    for (const method of ["GET", "POST", "PATCH", "DELETE"]) {
      for (const path of paths) {
        const ours = table.find(method, path);
        // one deliberate difference: a path that is another method's literal route is not
        // a param of this one (GET /cards/take-next is 405 there, not the card "take-next")
        if (ROUTES.some((r) => r.method !== method && r.path === path) && !ROUTES.some((r) => r.method === method && r.path === path)) {
          expect({ method, path, match: ours ?? null }).toEqual({ method, path, match: null });
          continue;
        }
        const theirs = findRoute(router, method, path);
        const a = ours ? { route: `${ours.data.method} ${ours.data.path}`, params: ours.params } : null;
        const b = theirs ? { route: `${theirs.data.method} ${theirs.data.path}`, params: { ...(theirs.params ?? {}) } } : null;
        expect({ method, path, match: a }).toEqual({ method, path, match: b });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  test("literal segments win over params", () => {
    expect(table.find("POST", "/cards/take-next")?.data.path).toBe("/cards/take-next");
    expect(table.find("POST", "/cards/card_1/fields/steps/append")?.data.path).toBe("/cards/:id/fields/:field/append");
    expect(table.find("PATCH", "/cards/card_1/fields/steps/e1")?.params).toEqual({ id: "card_1", field: "steps", entry_id: "e1" });
  });
});
