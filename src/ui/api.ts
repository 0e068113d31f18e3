/**
 * The HTTP client: every call goes to the public /v1 routes with the chosen actor in
 * X-Service-Actor. Errors arrive as the SPEC envelope and are thrown as ApiError.
 */
import type { BoardCounts, Card, CardPage, ErrorBody, HistoryItem, WorkspaceInfo } from "./types.ts";

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
/** The most history entries (and events) one read returns. */
export const HISTORY_PAGE = 500;
/** The card's history: without `since` its latest `limit` entries, with it the first `limit` after that event id (oldest first either way). */
export const history = (id: string, since?: string, limit = HISTORY_PAGE): Promise<{ items: HistoryItem[] }> =>
  api("GET", `/cards/${encodeURIComponent(id)}/history${qs({ since, limit })}`);
/** The card's events in id order, the first `limit` after `since`. */
export const cardEvents = (id: string, since: string, limit = HISTORY_PAGE): Promise<{ items: { id: string }[] }> =>
  api("GET", `/cards/${encodeURIComponent(id)}/events${qs({ since, limit })}`);
/** How many cards of the board's scope each lane holds, narrowed like GET /cards (filter, q, ...). */
export const boardCounts = (boardId: string, params: Query): Promise<BoardCounts> =>
  api("GET", `/boards/${encodeURIComponent(boardId)}/counts${qs(params)}`);

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

/**
 * A PATCH of top-level keys (a move's status, a picked owner) that survives writes to
 * the rest of the card: when the version is stale but the newer card still holds every
 * changed key as the person saw it (an agent appended an entry meanwhile), it is sent
 * once more over that version. A change to those keys meanwhile is a conflict, as ever.
 */
export async function patchKeys(card: Card, changes: Record<string, unknown>): Promise<Card> {
  try {
    return await patchCard(card, changes);
  } catch (e) {
    const now = e instanceof ApiError && e.body.error === "version_conflict" ? e.body.card : undefined;
    if (!now || now.id !== card.id || !untouched(card, now, changes)) throw e;
    return patchCard(now, changes);
  }
}

/** Whether `now` still holds every key `changes` sets (fields one by one) as `seen` held it. */
function untouched(seen: Card, now: Card, changes: Record<string, unknown>): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const was = seen as unknown as Record<string, unknown>;
  const is = now as unknown as Record<string, unknown>;
  return Object.entries(changes).every(([k, v]) => k === "fields" && v && typeof v === "object"
    ? Object.keys(v).every((f) => same(now.fields[f], seen.fields[f]))
    : same(is[k], was[k]));
}

/**
 * A card write that sends the card's version (an entry, a claim): when the version is
 * stale but `stillApplies` says the newer card leaves this write's meaning as it was (an
 * agent appended elsewhere meanwhile), it is sent once more with the newer version.
 */
export async function sendVersioned<T>(version: number, send: (version: number) => Promise<T>, stillApplies: (now: Card) => boolean): Promise<T> {
  try {
    return await send(version);
  } catch (e) {
    const now = e instanceof ApiError && e.body.error === "version_conflict" ? e.body.card : undefined;
    if (!now || now.version === version || !stillApplies(now)) throw e;
    return send(now.version);
  }
}

export function cardPath(id: string, rest = ""): string {
  return `/cards/${encodeURIComponent(id)}${rest}`;
}
