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

/**
 * `search` is the URL's query string, as sent. `path` is relative to /v1: `type` is a list
 * on the feed only (GET /breaches takes one kind). Escapes that are not UTF-8 (`jos%E9`,
 * `%FF`) are 400, as in the path and the body: URLSearchParams reads them as U+FFFD.
 */
export function queryParams(search: string, path: string): Record<string, string> {
  for (const pair of search.replace(/^\?/, "").split("&")) {
    if (utf8(pair) !== undefined) continue;
    const key = pair.split("=")[0]!;
    const name = utf8(key.replace(/\+/g, " ")) ?? key;
    throw badRequest(`query parameter ${JSON.stringify(name)} holds percent-escapes that are not UTF-8 (${JSON.stringify(pair.length > 100 ? `${pair.slice(0, 100)}…` : pair)})`, {
      field: name, hint: "percent-encode the text's UTF-8 bytes (é is %C3%A9, as encodeURIComponent and curl --data-urlencode write it)",
    });
  }
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search)) {
    if (!Object.hasOwn(query, k)) query[k] = v;
    else if (LIST_PARAMS.has(k) || (k === "type" && FEED_PATH.test(path))) query[k] = `${query[k]},${v}`;
    else throw badRequest(`query parameter ${JSON.stringify(k)} is given more than once`, { field: k, hint: `give ${k} once` });
  }
  return query;
}

/** The escapes of `raw` decoded, or undefined when they are not UTF-8 (a `%` that starts no escape stays itself, as URLSearchParams reads it). */
function utf8(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/%(?![0-9a-f]{2})/gi, "%25"));
  } catch {
    return undefined;
  }
}
