/**
 * In-process dispatch of an ApiRequest through the route table (the embedded CLI's
 * client). Errors become the same status + envelope HTTP would send.
 */
import { logInternalError } from "./internal-log.ts";
import { CardsError, fromEnvironment, toEnvelope, isCardsError } from "../domain/errors.ts";
import type { Service } from "../service/service.ts";
import { RouteCall } from "./call.ts";
import { ROUTES } from "./routes.ts";
import { RouteTable } from "./match.ts";
import type { ApiRequest, ApiResponse } from "./types.ts";

const table = new RouteTable(ROUTES);

/** Answers a request; synchronously when its route does (a server's reads, once loaded). */
export function dispatch(svc: Service, req: ApiRequest): ApiResponse | Promise<ApiResponse> {
  try {
    const match = table.find(req.method, req.path);
    if (!match) throw routeMiss(req);
    const route = match.data;
    if (req.method === "DELETE" && req.body !== undefined && req.body.trim() !== "") {
      // SPEC: DELETE guards go in the query; a body (say {"version":5}) would be ignored
      throw new CardsError("bad_request", "DELETE takes no request body", {
        hint: "send the version guard as a query parameter: ?version=N",
      });
    }
    if (req.method !== "GET") {
      // a write's options go in its body; a query key it does not take (`?dry_run=true`)
      // is refused before anything is written, not ignored
      const allowed = route.writeQuery ?? [];
      for (const k of Object.keys(req.query)) {
        if (!allowed.includes(k)) {
          // a DELETE takes no body (its guard is in the query): no body to point at
          const body = req.method === "DELETE" ? "" : allowed.length ? "; the rest goes in the JSON body" : "; send options in the JSON body";
          throw new CardsError("bad_request", `unknown query parameter ${JSON.stringify(k)}`, {
            field: k, ...(allowed.length ? { valid_options: allowed } : {}),
            hint: allowed.length
              ? `${req.method} ${req.path} takes only ${allowed.join(", ")} in the query${body}`
              : `${req.method} ${req.path} takes no query parameters${body}`,
          });
        }
      }
    }
    if (route.serveOnly && svc.mode !== "serve") {
      throw new CardsError("serve_only", `${route.method} ${route.path} exists only on a running server`, {
        hint: "start `cards serve` and call it with CARDS_URL or --url",
      });
    }
    const params: Record<string, string> = {};
    for (const k in match.params) params[k] = safeDecode(match.params[k]!);
    const res = route.handle(new RouteCall(svc.pin(), req, params));
    return res instanceof Promise ? res.catch((e) => errorResponse(e, `${req.method} /v1${req.path}`)) : res;
  } catch (e) {
    return errorResponse(e, `${req.method} /v1${req.path}`);
  }
}

/** True when the route for this request takes its body as raw bytes (do not read it as text). */
export function isRawRoute(method: string, path: string): boolean {
  return table.find(method, path)?.data.rawBody === true;
}

/** True when the route for this request answers with raw bytes (artifact downloads). */
export function answersRaw(method: string, path: string): boolean {
  return table.find(method, path)?.data.rawResponse === true;
}

export function errorResponse(caught: unknown, where?: string): ApiResponse {
  const e = fromEnvironment(caught);
  if (!isCardsError(e)) logInternalError(e, where);
  const env = toEnvelope(e);
  const status = isCardsError(e) ? e.status : 500;
  return { status, body: env };
}

/**
 * 405 when another method has a route at this path, else 404. A card path counts only
 * when its id is a card id: `POST /cards/batch` ([proposed], absent) is 404, not a 405
 * that would say GET, PATCH and DELETE exist there.
 */
function routeMiss(req: ApiRequest): CardsError {
  const routed = (m: string): boolean => {
    const match = table.find(m, req.path);
    return match !== undefined && (match.params.id === undefined || safeDecode(match.params.id).startsWith("card_"));
  };
  const methods = ["GET", "POST", "PATCH", "DELETE"].filter((m) => m !== req.method && routed(m));
  if (methods.length) {
    return new CardsError("method_not_allowed", `${req.method} is not allowed on ${req.path}`, { valid_options: methods });
  }
  return new CardsError("not_found", `no route ${req.method} ${req.path}`, { hint: "paths are relative to /v1; see GET /v1/openapi.json" });
}

function safeDecode(v: string): string {
  try { return decodeURIComponent(v); } catch { return v; }
}
