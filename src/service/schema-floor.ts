/**
 * Definitions checked against the cards that exist. SPEC Versioning: a card type's
 * schema_version is monotonic; definitions that set it below the version cards of that
 * type already carry are refused (those cards could never be upgraded, and new cards
 * would be recorded at the lower version). So are definitions that lack a card type or a
 * column cards still hold: those cards could no longer be written or moved. Checked when
 * the definitions change (an open whose definitions the database has not followed yet, a
 * reload), never on the one-shot path: it reads every card.
 */
import type { DefinitionProblem } from "../domain/errors.ts";
import { definitionsError } from "../definitions/problems.ts";
import type { Definitions } from "../domain/types.ts";
import type { StoreReads, StoreTx } from "../store/port.ts";
import { fieldsUnrecorded, recordFields } from "./fields-loaded.ts";

/**
 * Meta key: per card type, the highest schema_version any process has loaded on this
 * workspace (JSON `{type: n}`). A set below it is refused everywhere (an open, a reload,
 * `cards check`), even while no card carries that version yet: else a one-shot call
 * would load a version a running server had refused, and new cards would be recorded at
 * two versions.
 */
export const SCHEMA_VERSIONS_KEY = "schema_versions_loaded";

function loadedVersions(r: StoreReads): Record<string, number> {
  try {
    return JSON.parse(r.getMeta(SCHEMA_VERSIONS_KEY) ?? "{}") as Record<string, number>;
  } catch {
    return {};
  }
}

/** Meta key: the workspace id the cards were written under (cards carry it; it does not change while they exist). */
export const WORKSPACE_ID_KEY = "workspace_id";

/** Whether recordLoadedSet would write: a version above the recorded ones, or another workspace id. */
export function changesLoadedSet(r: StoreReads, defs: Definitions): boolean {
  const seen = loadedVersions(r);
  return r.getMeta(WORKSPACE_ID_KEY) !== defs.workspace.id || [...defs.cardTypes.values()].some((t) => (seen[t.id] ?? 0) < t.schema_version) ||
    fieldsUnrecorded(r, defs);
}

/** Records the set's versions and workspace id as loaded (inside the write that brings it into use). */
export function recordLoadedSet(tx: StoreTx, defs: Definitions): void {
  if (!changesLoadedSet(tx, defs)) return;
  const seen = loadedVersions(tx);
  for (const t of defs.cardTypes.values()) seen[t.id] = Math.max(seen[t.id] ?? 0, t.schema_version);
  tx.setMeta(SCHEMA_VERSIONS_KEY, JSON.stringify(seen));
  tx.setMeta(WORKSPACE_ID_KEY, defs.workspace.id);
  recordFields(tx, defs);
}

export function schemaVersionProblems(r: StoreReads, defs: Definitions): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  for (const t of defs.cardTypes.values()) {
    if (!r.hasCardAboveSchema(t.id, t.schema_version)) continue;
    problems.push({
      file: `definitions/card-types/${t.id}.json`, path: "schema_version",
      message: `schema_version ${t.schema_version} is below the version cards of type ${t.id} already carry; schema versions only go up (add a migration to a higher version instead)`,
    });
  }
  return problems;
}

/**
 * A card type or a column cards hold that `defs` lacks: those cards could no longer be
 * written or moved. Checked wherever a set comes into use (an open of changed
 * definitions, a reload, `cards check`), so no process works with a set that strands
 * cards while another refuses it.
 */
function strandedCards(r: StoreReads, defs: Definitions): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const used = r.cardsInUse();
  for (const [type, n] of used.types) {
    if (defs.cardTypes.has(type)) continue;
    problems.push({
      file: `definitions/card-types/${type}.json`, path: "",
      message: `card type ${type} is removed, but ${n} card(s) of that type exist; keep its file until those cards are deleted (list them: GET /cards?type_id=${type}); a file put back for them needs schema_version ${Math.max(1, ...(used.schemaVersions.get(type)?.keys() ?? []))} or higher`,
    });
  }
  const wasId = r.getMeta(WORKSPACE_ID_KEY);
  const cards = [...used.types.values()].reduce((a, n) => a + n, 0);
  if (wasId !== null && wasId !== defs.workspace.id && cards > 0) {
    problems.push({
      file: "definitions/workspace.json", path: "id",
      message: `the workspace id was ${JSON.stringify(wasId)}, and ${cards} card(s) carry it; a workspace keeps its id while it holds cards (a card is never moved in place): put ${JSON.stringify(wasId)} back`,
      valid_options: [wasId],
    });
  }
  const columns = new Set(defs.workspace.columns.map((c) => c.id));
  for (const [status, n] of used.statuses) {
    if (columns.has(status)) continue;
    problems.push({
      file: "definitions/workspace.json", path: "columns",
      message: `column ${status} is removed, but ${n} card(s) are in it; keep it until they are moved to another column, then remove it. To rename it: put ${status} back beside the new column, move its cards (cards cards list --status ${status}; cards cards patch ID --version N --status NEW, --force where the board's moves do not allow it), then remove ${status}`,
      valid_options: [...columns],
    });
  }
  return problems;
}

/**
 * Throws `invalid_definitions` listing every problem with the cards that exist, and with
 * `loaded` (the set a running process serves): a schema_version below it, even while no
 * card carries the higher one yet.
 */
export function assertSchemaFloor(r: StoreReads, defs: Definitions, loaded?: Definitions): void {
  const problems = [...schemaVersionProblems(r, defs), ...strandedCards(r, defs)];
  const recorded = loadedVersions(r);
  for (const t of defs.cardTypes.values()) {
    const now = loaded?.cardTypes.get(t.id)?.schema_version;
    const was = Math.max(now ?? 0, recorded[t.id] ?? 0);
    if (t.schema_version >= was || problems.some((p) => p.file === `definitions/card-types/${t.id}.json` && p.path === "schema_version")) continue;
    problems.push({
      file: `definitions/card-types/${t.id}.json`, path: "schema_version",
      message: `schema_version ${t.schema_version} is below ${was}, the version ${now === was ? "loaded now" : "already loaded on this workspace"}; schema versions only go up`,
    });
  }
  if (problems.length > 0) throw definitionsError(problems);
}
