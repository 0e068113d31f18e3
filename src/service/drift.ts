/**
 * What `cards check` reports beside problems: cards the loaded definitions no longer fit.
 * Reloading never changes cards (SPEC Versioning 4-5), so a set that narrows under
 * existing cards loads (problems are only what would strand them: schema-floor.ts). These
 * notices name the cards it leaves behind, how many, and how to list them. They never
 * fail the check. Counts only: field values are checked per card by an upgrade's dry run.
 */
import { BLOCKING_LINK_TYPES, type Definitions } from "../domain/types.ts";
import { CARDS_ENV } from "../domain/extension-env.ts";
import type { StoreReads } from "../store/port.ts";
import { fieldsChangedInPlace } from "./fields-loaded.ts";
import type { FilterNode } from "../domain/filters.ts";

export interface DefinitionNotice {
  kind: "status_not_allowed" | "status_off_board" | "undeclared_link_type" | "schema_behind" | "fields_changed_in_place" | "default_user_unknown" | "setting_not_enforced" | "extension_ineffective";
  count: number;
  message: string;
  /** the call that lists them, when there is something to list */
  list?: string;
}

/** `r`: the workspace's stored data, or undefined before it has a database (only the definitions are read). */
export function definitionNotices(r: StoreReads | undefined, defs: Definitions): DefinitionNotice[] {
  const out: DefinitionNotice[] = r ? cardNotices(r, defs) : [];
  // SPEC lets take-next skip the registry check for default_user: an unknown one takes cards as nobody anyone knows
  const fallback = defs.workspace.settings.default_user;
  if (fallback !== undefined && !r?.getUser(fallback) && !(defs.workspace.users ?? []).some((u) => u.id === fallback)) {
    out.push({
      kind: "default_user_unknown", count: 0, list: "GET /workspace (users)",
      message: `settings.default_user ${JSON.stringify(fallback)} is not a registered user: a caller that names no actor acts as ${fallback} (take-next gives cards to ${fallback}); register it (cards users add ${fallback} --kind agent|human) or name a registered user`,
    });
  }
  // SPEC keeps the key in the schema and enforces nothing: say so where it is set
  const retention = defs.workspace.settings.event_retention_days;
  if (retention !== undefined) {
    out.push({
      kind: "setting_not_enforced", count: 0,
      message: `settings.event_retention_days (${retention}) is accepted but nothing enforces it: the event log is never trimmed (SPEC); take it out, or keep it as a note`,
    });
  }
  out.push(...extensionNotices(defs));
  return out;
}

/** Declarations that load but cannot do what they say: a hook on no event, env that cards replaces. */
function extensionNotices(defs: Definitions): DefinitionNotice[] {
  const out: DefinitionNotice[] = [];
  for (const e of defs.extensions) {
    if (e.kind === "hook" && e.on && e.on.length === 0) {
      out.push({ kind: "extension_ineffective", count: 0, message: `hook ${e.id}: on is empty, so it never runs; list the event types it runs on, or leave on out for every type` });
    }
    const replaced = Object.keys(e.env ?? {}).filter((k) => CARDS_ENV[e.kind].always.includes(k));
    for (const k of replaced) {
      out.push({
        kind: "extension_ineffective", count: 0,
        message: k === "CARDS_ACTOR"
          ? `${e.kind} ${e.id}: env.CARDS_ACTOR is replaced by the event's actor; to write as ${JSON.stringify(e.env![k])}, pass it in run (["cards", "--actor", ${JSON.stringify(e.env![k])}, ...])`
          : `${e.kind} ${e.id}: env.${k} is replaced by the value cards sets for every ${e.kind}; take it out`,
      });
    }
  }
  return out;
}

/** The cards the loaded definitions no longer fit. */
function cardNotices(r: StoreReads, defs: Definitions): DefinitionNotice[] {
  const used = r.cardsInUse();
  const out: DefinitionNotice[] = [];
  const columns = new Set(defs.workspace.columns.map((c) => c.id));
  const boards = [...defs.boards.values()];
  for (const [type, byStatus] of used.typeStatuses) {
    const def = defs.cardTypes.get(type);
    if (!def) continue; // a removed type with cards is a problem, not a notice
    const shown = boards.filter((b) => b.card_type_ids.includes(type));
    for (const [status, n] of byStatus) {
      if (!columns.has(status)) continue; // a problem too
      const list = `GET /cards?type_id=${type}&status=${status} (CLI: cards cards list --type ${type} --status ${status})`;
      if (def.allowed_columns && !def.allowed_columns.includes(status)) {
        out.push({
          kind: "status_not_allowed", count: n, list,
          message: `${n} ${type} card(s) are in ${status}, which the type's allowed_columns leave out: they can still be written, but not moved back to ${status} once they leave it; move them to one of ${def.allowed_columns.join(", ")}, or keep ${status} in allowed_columns`,
        });
      } else if (shown.length > 0 && !shown.some((b) => b.columns.includes(status))) {
        out.push({
          kind: "status_off_board", count: n, list,
          message: `${n} ${type} card(s) are in ${status}, a column no board showing ${type} has (${shown.map((b) => b.id).join(", ")}): no board draws or counts them, and where transitions are enforced a move out of ${status} needs force; move them, or add ${status} to a board`,
        });
      }
    }
  }
  const linkTypes = new Set(defs.workspace.link_types.map((l) => l.id));
  for (const [type, n] of used.linkTypes) {
    if (linkTypes.has(type)) continue;
    out.push({
      kind: "undeclared_link_type", count: n,
      list: `GET /cards?has_link=${type} (CLI: cards cards list --has-link ${type})`,
      message: `${n} link(s) are of type ${type}, which the workspace no longer declares: they stay on their cards${BLOCKING_LINK_TYPES.includes(type) ? " and still make cards blocked" : ""}; remove them (cards cards links remove CARD ${type} TARGET), or declare ${type} again`,
    });
  }
  for (const [type, byVersion] of used.schemaVersions) {
    const def = defs.cardTypes.get(type);
    if (!def) continue;
    let n = 0;
    for (const [v, count] of byVersion) if (v < def.schema_version) n += count;
    if (n === 0) continue;
    out.push({
      kind: "schema_behind", count: n,
      list: `GET /cards?type_id=${type} (CLI: cards cards list --type ${type}): each card shows its schema_version`,
      message: `${n} ${type} card(s) are at a schema_version below ${def.schema_version}: writes validate them against the current type; upgrade each (POST /cards/{id}/upgrade-schema, CLI: cards cards upgrade-schema ID --dry-run first) to apply the migrations' defaults and drop removed fields`,
    });
  }
  for (const { type, version, changes } of fieldsChangedInPlace(r, defs)) {
    if ((used.schemaVersions.get(type)?.get(version) ?? 0) === 0) continue;
    // only cards holding a value the change leaves behind: cards written since the edit fit it
    const holds: FilterNode[] = changes.map((c) => ({ kind: "cmp", path: `fields.${c.field}`, op: c.options ? "$in" : "$ne", value: c.options ?? null }));
    const n = Object.values(r.countByStatus({ filter: { kind: "and", nodes: [
      { kind: "cmp", path: "type_id", op: "$eq", value: type },
      { kind: "cmp", path: "schema_version", op: "$eq", value: version },
      { kind: "or", nodes: holds },
    ] } })).reduce((x, y) => x + y, 0);
    if (n === 0) continue;
    out.push({
      kind: "fields_changed_in_place", count: n,
      list: `GET /cards?type_id=${type} (CLI: cards cards list --type ${type})`,
      message: `${type}'s fields changed while it stayed at schema_version ${version} (${changes.map((c) => c.text).join("; ")}): ${n} of its cards keep values that no longer fit, and an upgrade has nothing to apply; raise schema_version to ${version + 1} with a migration ("migrations": {"${version + 1}": {"from": ${version}, "summary": "...", "field_defaults": {...}}}), then upgrade them (cards cards upgrade-schema ID --dry-run first)`,
    });
  }
  return out;
}
