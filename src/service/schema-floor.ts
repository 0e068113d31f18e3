/**
 * SPEC Versioning: a card type's schema_version is monotonic. Definitions that set it
 * below the version cards of that type already carry are refused: those cards could
 * never be upgraded (downgrades are refused) and new cards would be recorded at the
 * lower version. Checked when the definitions change (an open whose definitions the
 * database has not followed yet, a reload), never on the one-shot path: it reads every
 * card of each type.
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

/** Throws `invalid_definitions` listing every type whose schema_version went down. */
export function assertSchemaFloor(r: StoreReads, defs: Definitions): void {
  const lowered = schemaVersionProblems(r, defs);
  if (lowered.length > 0) throw definitionsError(lowered);
}
