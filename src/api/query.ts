/**
 * A request's query parameters, for HTTP and `cards api` alike. A key given twice is never
 * silently narrowed to its last value: where a parameter takes a comma-separated list
 * (SPEC: type_id and status "matched as any", the stream's types, the feed's type and
 * types, include), repeats are that list, as OpenAPI clients send arrays by default
 * (`status=todo&status=doing`); any other is 400.
 */
import { badRequest } from "../domain/errors.ts";

const LIST_PARAMS: ReadonlySet<string> = new Set(["type_id", "status", "types", "include"]);

/** The feed's path, as the router takes it (a trailing slash is the same route). */
const FEED_PATH = /^\/events\/*$/;

/** `path` is relative to /v1: `type` is a list on the feed only (GET /breaches takes one kind). */
export function queryParams(params: URLSearchParams, path: string): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [k, v] of params) {
    if (!Object.hasOwn(query, k)) query[k] = v;
    else if (LIST_PARAMS.has(k) || (k === "type" && FEED_PATH.test(path))) query[k] = `${query[k]},${v}`;
    else throw badRequest(`query parameter ${JSON.stringify(k)} is given more than once`, { field: k, hint: `give ${k} once` });
  }
  return query;
}
