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
import type { StoreReads } from "../store/port.ts";

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
      message: `card type ${type} is removed, but ${n} card(s) of that type exist; keep its file until those cards are deleted (list them: GET /cards?type_id=${type}); a file put back for them needs schema_version ${used.schemaVersions.get(type) ?? 1} or higher`,
    });
  }
  const columns = new Set(defs.workspace.columns.map((c) => c.id));
  for (const [status, n] of used.statuses) {
    if (columns.has(status)) continue;
    problems.push({
      file: "definitions/workspace.json", path: "columns",
      message: `column ${status} is removed, but ${n} card(s) are in it; keep it until they are moved to another column (list them: GET /cards?status=${status}), then remove it`,
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
  for (const t of defs.cardTypes.values()) {
    const was = loaded?.cardTypes.get(t.id)?.schema_version;
    if (was === undefined || t.schema_version >= was || problems.some((p) => p.file === `definitions/card-types/${t.id}.json` && p.path === "schema_version")) continue;
    problems.push({
      file: `definitions/card-types/${t.id}.json`, path: "schema_version",
      message: `schema_version ${t.schema_version} is below ${was}, the version loaded now; schema versions only go up`,
    });
  }
  if (problems.length > 0) throw definitionsError(problems);
}
