/** Remote mode: the same request over HTTP to a running `cards serve` (ofetch). */
import { ofetch } from "ofetch";
import { CardsError } from "../domain/errors.ts";
import type { ApiRequest } from "../api/types.ts";
import type { RawResponse } from "./client.ts";

export async function remoteRequest(baseUrl: string, req: ApiRequest, wantBytes = false): Promise<RawResponse> {
  // a base URL given with the API prefix (http://host:port/v1) means the same server
  const base = baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const qs = new URLSearchParams(req.query).toString();
  const url = `${base}/v1${req.path}${qs ? `?${qs}` : ""}`;
  try {
    const raw = req.stream instanceof Uint8Array ? req.stream : undefined;
    const res = await ofetch.raw(url, {
      method: req.method as "GET",
      headers: { ...(req.body !== undefined ? { "content-type": "application/json" } : {}), ...req.headers },
      body: raw ?? req.body,
      responseType: wantBytes ? "arrayBuffer" : "text",
      ignoreResponseError: true,
      retry: 0,
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => { headers[k] = v; });
    if (wantBytes && res.status < 400) return { status: res.status, text: "", bytes: new Uint8Array(res._data as ArrayBuffer), headers };
    const text = wantBytes ? new TextDecoder().decode(res._data as ArrayBuffer) : ((res._data as string | undefined) ?? "");
    // every answer of the cards API but a download is JSON: anything else is another server
    // (or a proxy in front of one, which may refuse a large body itself)
    if (!(headers["content-type"] ?? "").includes("json") && res.status === 413) {
      throw new CardsError("payload_too_large", `${req.method} /v1${req.path}: ${base} refused the request body as too large (413)`, { hint: "see docs/limits.md; a proxy in front of the server may set a lower limit" });
    }
    if (!(headers["content-type"] ?? "").includes("json") && res.status === 431) {
      // Bun's HTTP parser answers before any route runs: past 16 KiB of request line and headers
      throw new CardsError("bad_request", `${req.method} /v1${req.path}: ${base} refused the request's URL and headers as too long (431; at most 16 KiB)`, {
        hint: "shorten what goes in the query (q, ids, filters); see docs/limits.md",
      });
    }
    if (!(headers["content-type"] ?? "").includes("json") && res.status !== 204) throw notCards(base, `${req.method} /v1${req.path} answered ${res.status} ${headers["content-type"] ?? "without a content type"}`);
    return { status: res.status, text, headers };
  } catch (e) {
    if (e instanceof CardsError) throw e;
    throw new CardsError("unavailable", `cannot reach ${base}: ${(e as Error).message}`, {
      hint: "check that `cards serve` is running and CARDS_URL / --url points at it",
    });
  }
}

function notCards(base: string, what: string): CardsError {
  return new CardsError("unavailable", `${base} is not a cards server: ${what}`, {
    hint: "CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT)",
  });
}
