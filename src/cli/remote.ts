/** Remote mode: the same request over HTTP to a running `cards serve` (ofetch). */
import { ofetch } from "ofetch";
import { CardsError } from "../domain/errors.ts";
import type { ApiRequest } from "../api/types.ts";
import type { RawResponse } from "./client.ts";

export async function remoteRequest(baseUrl: string, req: ApiRequest): Promise<RawResponse> {
  const base = baseUrl.replace(/\/+$/, "");
  const qs = new URLSearchParams(req.query).toString();
  const url = `${base}/v1${req.path}${qs ? `?${qs}` : ""}`;
  try {
    const res = await ofetch.raw(url, {
      method: req.method as "GET",
      headers: { ...req.headers, ...(req.body !== undefined ? { "content-type": "application/json" } : {}) },
      body: req.body,
      responseType: "text",
      ignoreResponseError: true,
      retry: 0,
    });
    return { status: res.status, text: (res._data as string | undefined) ?? "" };
  } catch (e) {
    throw new CardsError("unavailable", `cannot reach ${base}: ${(e as Error).message}`, {
      hint: "check that `cards serve` is running and CARDS_URL / --url points at it",
    });
  }
}
