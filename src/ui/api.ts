/**
 * The HTTP client: every call goes to the public /v1 routes with the chosen actor in
 * X-Service-Actor. Errors arrive as the SPEC envelope and are thrown as ApiError.
 */
import type { Card, CardPage, ErrorBody, HistoryItem, WorkspaceInfo } from "./types.ts";

const BASE = "/v1";
let actor = "";

export function setActor(id: string): void {
  actor = id;
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly body: ErrorBody) {
    super(body.message || body.error);
  }
}

export async function api<T>(method: string, path: string, body?: unknown, raw?: Blob): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (actor) headers["x-service-actor"] = actor;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (raw?.type) headers["content-type"] = raw.type;
  let res: Response;
  try {
    res = await fetch(BASE + path, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  } catch (e) {
    throw new ApiError(0, { error: "unavailable", message: `the service did not answer: ${(e as Error).message}` });
  }
  const text = await res.text();
  let data: unknown;
  try { data = text ? JSON.parse(text) : undefined; } catch { data = undefined; }
  if (!res.ok) {
    const env = (data && typeof data === "object" ? data : {}) as Partial<ErrorBody>;
    throw new ApiError(res.status, { ...env, error: env.error ?? `http_${res.status}`, message: env.message ?? (text || res.statusText) });
  }
  return data as T;
}

export type Query = Record<string, string | number | undefined>;

export function qs(params: Query): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : "";
}

export const getWorkspace = (): Promise<WorkspaceInfo> => api("GET", "/workspace");
export const getCard = (id: string): Promise<Card> => api("GET", `/cards/${encodeURIComponent(id)}`);
export const listCards = (params: Query): Promise<CardPage> => api("GET", `/cards${qs(params)}`);
export const history = (id: string): Promise<{ items: HistoryItem[] }> =>
  api("GET", `/cards/${encodeURIComponent(id)}/history${qs({ limit: 500 })}`);

/** Every card matching `params`, following next_cursor up to `cap` cards. */
export async function listAll(params: Query, cap = 1000): Promise<{ items: Card[]; truncated: boolean }> {
  const items: Card[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listCards({ ...params, limit: 200, cursor });
    items.push(...page.items);
    if (!page.next_cursor) return { items, truncated: false };
    if (items.length >= cap) return { items, truncated: true };
    cursor = page.next_cursor;
  }
}

export function patchCard(card: Card, changes: Record<string, unknown>): Promise<Card> {
  return api("PATCH", `/cards/${encodeURIComponent(card.id)}`, { version: card.version, ...changes });
}

export function cardPath(id: string, rest = ""): string {
  return `/cards/${encodeURIComponent(id)}${rest}`;
}
