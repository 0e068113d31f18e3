/**
 * Matching a request path against the route table. A hand-written matcher instead of
 * rou3 here: building a rou3 router of the ~45 routes cost ~1 ms on every CLI call
 * (docs/benchmarks.md, "CLI cold path"), while this one only splits each route path once.
 *
 * Paths are `/`-separated segments: a literal, `:name` (one segment) or a trailing
 * `**:name` (the rest: one segment or more). When several routes match, the one whose
 * segments are the most literal from the left wins (`/cards/take-next` over
 * `/cards/:id`), as in rou3. Params are returned as they appear in the path (undecoded).
 */

interface Pattern<T> {
  segs: string[];
  /** name of a trailing `**:name`, if any */
  rest?: string;
  data: T;
}

export interface RouteMatch<T> {
  data: T;
  params: Record<string, string>;
}

export class RouteTable<T extends { method: string; path: string }> {
  /** patterns per method, split on first use (a one-shot CLI call uses one method) */
  private readonly byMethod = new Map<string, Pattern<T>[]>();

  constructor(private readonly routes: readonly T[]) {}

  find(method: string, path: string): RouteMatch<T> | undefined {
    const parts = path.split("/").slice(1);
    if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
    let best: { p: Pattern<T>; rank: string } | undefined;
    for (const p of this.patternsOf(method)) {
      const rank = rankOf(p, parts);
      if (rank !== undefined && (!best || rank < best.rank)) best = { p, rank };
    }
    if (!best) return undefined;
    // a path that is another method's literal route names that route, not a param:
    // `GET /cards/take-next` is 405 (POST only), never the card "take-next"
    if (best.rank.includes("1")) {
      const literal = `/${parts.join("/")}`;
      if (this.routes.some((r) => r.method !== method && r.path === literal)) return undefined;
    }
    const params: Record<string, string> = {};
    const segs = best.p.segs;
    for (let i = 0; i < segs.length; i++) if (segs[i]!.startsWith(":")) params[segs[i]!.slice(1)] = parts[i]!;
    if (best.p.rest) params[best.p.rest] = parts.slice(segs.length).join("/");
    return { data: best.p.data, params };
  }

  private patternsOf(method: string): Pattern<T>[] {
    let patterns = this.byMethod.get(method);
    if (!patterns) {
      patterns = [];
      for (const r of this.routes) if (r.method === method) patterns.push(compile(r));
      this.byMethod.set(method, patterns);
    }
    return patterns;
  }
}

function compile<T extends { method: string; path: string }>(r: T): Pattern<T> {
  const segs = r.path.split("/").slice(1);
  const last = segs[segs.length - 1];
  if (last?.startsWith("**")) return { segs: segs.slice(0, -1), rest: last.slice(3) || "_", data: r };
  return { segs, data: r };
}

/** Per segment 0 (literal), 1 (param), 2 (rest): smaller is more specific; undefined when no match. */
function rankOf<T>(p: Pattern<T>, parts: string[]): string | undefined {
  if (p.rest === undefined ? parts.length !== p.segs.length : parts.length <= p.segs.length) return undefined;
  let rank = "";
  for (let i = 0; i < p.segs.length; i++) {
    const s = p.segs[i]!;
    if (s.startsWith(":")) {
      if (parts[i] === "") return undefined;
      rank += "1";
    } else if (s === parts[i]) {
      rank += "0";
    } else {
      return undefined;
    }
  }
  return p.rest === undefined ? rank : `${rank}2`;
}
