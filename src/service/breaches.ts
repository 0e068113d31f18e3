/**
 * GET /breaches: the conditions that hold now, as a cold read-only projection (it never
 * arms or marks anything). WIP and lane counts are exact; blocked and temporal scans
 * cover at most BREACH_SCAN_LIMIT cards each, reporting `truncated` and `limit` then.
 */
import { CardsError, badRequest } from "../domain/errors.ts";
import { parseDuration } from "../domain/durations.ts";
import type { Board, Card } from "../domain/types.ts";
import type { ReadCall } from "../store/port.ts";
import { scopeOf } from "./lanes.ts";
import type { ListParams } from "./list.ts";
import type { Service } from "./service.ts";

export const BREACH_SCAN_LIMIT = 500;
/** SPEC Conditions: a watched lane that drained is a `lane_limit` item ({column, count, limit}: limit 0, the count at which alert_when_empty holds). */
export const BREACH_KINDS = ["wip_exceeded", "lane_limit", "card_blocked", "status_timeout", "card_idle"] as const;

export interface Breaches {
  as_of: string;
  items: Array<Record<string, unknown>>;
  limit?: number;
  truncated?: boolean;
}

/**
 * Every read runs in one snapshot, as one batch: a long-lived process reads it on its
 * read thread (the blocked scan reads every card in scope; a board in a browser asks
 * again at most once a second while agents write), so this may answer later.
 */
export function listBreaches(svc: Service, p: ListParams): Breaches | Promise<Breaches> {
  for (const k of Object.keys(p)) {
    if (k !== "board_id" && k !== "type") throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: ["board_id", "type"] });
  }
  if (p.type !== undefined && !(BREACH_KINDS as readonly string[]).includes(p.type)) {
    throw new CardsError("validation_failed", `unknown breach type ${JSON.stringify(p.type)}`, { field: "type", value: p.type, valid_options: [...BREACH_KINDS] });
  }
  const boards = p.board_id !== undefined ? [svc.board(p.board_id)] : [...svc.defs.boards.values()];
  const want = (k: string) => p.type === undefined || p.type === k;
  const now = Date.now();
  // the reads, in order, and how each answer becomes items
  const calls: ReadCall[] = [];
  const makers: Array<(answer: unknown, out: Breaches) => void> = [];
  const read = (call: ReadCall, make: (answer: unknown, out: Breaches) => void): void => { calls.push(call); makers.push(make); };
  for (const board of boards) {
    const scope = scopeOf(board, svc.defs);
    const base = { board_id: board.id };
    if (want("wip_exceeded")) {
      for (const [column, limit] of Object.entries(board.wip_limits ?? {})) {
        read({ method: "countInStatus", args: [scope, column, Number.MAX_SAFE_INTEGER] }, (count, out) => {
          if ((count as number) > limit) out.items.push({ kind: "wip_exceeded", ...base, column, count, limit });
        });
      }
    }
    if (want("lane_limit")) {
      for (const column of board.monitors?.alert_when_empty ?? []) {
        read({ method: "countInStatus", args: [scope, column, 1] }, (count, out) => {
          if (count === 0) out.items.push({ kind: "lane_limit", ...base, column, count: 0, limit: 0 });
        });
      }
    }
    if (want("card_blocked")) {
      read({ method: "blockedCards", args: [scope, BREACH_SCAN_LIMIT + 1] }, (answer, out) => {
        const page = answer as Array<{ id: string; blockers: string[] }>;
        if (page.length > BREACH_SCAN_LIMIT) out.truncated = true;
        for (const c of page.slice(0, BREACH_SCAN_LIMIT)) out.items.push({ kind: "card_blocked", ...base, card_id: c.id, blockers: c.blockers });
      });
    }
    for (const rule of temporal(board)) {
      if (!want(rule.kind)) continue;
      read({ method: "dueCards", args: [scope, rule.statuses, rule.column, undefined, new Date(now - rule.ms).toISOString(), BREACH_SCAN_LIMIT + 1] }, (answer, out) => {
        const due = answer as Card[];
        if (due.length > BREACH_SCAN_LIMIT) out.truncated = true;
        for (const c of due.slice(0, BREACH_SCAN_LIMIT)) {
          out.items.push(rule.kind === "status_timeout"
            ? { kind: "status_timeout", ...base, card_id: c.id, status: c.status, since: c.status_since, max: rule.raw }
            : { kind: "card_idle", ...base, card_id: c.id, since: c.updated_at, threshold: rule.raw });
        }
      });
    }
  }
  // card_blocked is card-scoped (SPEC Conditions: it needs no declaration): asked without
  // a board, a blocked card in no board's scope (its type on no board, a column no board
  // shows, outside a default_filter) is listed too, once and without board_id
  if (p.board_id === undefined && want("card_blocked")) {
    read({ method: "blockedCards", args: [undefined, BREACH_SCAN_LIMIT + 1] }, (answer, out) => {
      const page = answer as Array<{ id: string; blockers: string[] }>;
      if (page.length > BREACH_SCAN_LIMIT) out.truncated = true;
      const listed = new Set(out.items.filter((i) => i.kind === "card_blocked").map((i) => i.card_id));
      for (const c of page.slice(0, BREACH_SCAN_LIMIT)) {
        if (!listed.has(c.id)) out.items.push({ kind: "card_blocked", card_id: c.id, blockers: c.blockers });
      }
    });
  }
  const assemble = (answers: unknown[]): Breaches => {
    const out: Breaches = { as_of: new Date(now).toISOString(), items: [] };
    answers.forEach((a, i) => makers[i]!(a, out));
    if (out.truncated) {
      out.truncated = true;
      out.limit = BREACH_SCAN_LIMIT;
    }
    return out;
  };
  const answers = svc.store.readBatch(calls);
  return answers instanceof Promise ? answers.then(assemble) : assemble(answers);
}

function temporal(board: Board): Array<{ kind: "status_timeout" | "card_idle"; statuses?: string[]; column: "status_since" | "updated_at"; ms: number; raw: string }> {
  const mon = board.monitors ?? {};
  const rules = Object.entries(mon.max_time_in_status ?? {}).map(([status, raw]) => ({
    kind: "status_timeout" as const, statuses: [status], column: "status_since" as const, ms: parseDuration(raw), raw,
  }));
  const idle = mon.idle_after ? [{ kind: "card_idle" as const, column: "updated_at" as const, ms: parseDuration(mon.idle_after), raw: mon.idle_after }] : [];
  return [...rules, ...idle];
}
