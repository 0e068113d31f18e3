/**
 * POST /cards/{id}/upgrade-schema (SPEC Versioning 6-7): move a card to its type's
 * loaded schema_version. Applies the field_defaults of each migration entry on the way,
 * drops fields the target no longer declares, re-validates, bumps schema_version and
 * emits schema_upgraded {from, to, defaults_applied, fields_dropped}. Downgrades and any
 * target other than the loaded version are refused. A dry run reports what would change.
 */
import { CardsError } from "../domain/errors.ts";
import { validateEntry, validateFields } from "../domain/fields.ts";
import type { Card, CardType } from "../domain/types.ts";
import { commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { UpgradeBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

export interface UpgradeReport {
  from: number;
  to: number;
  defaults_applied: Record<string, unknown>;
  fields_dropped: string[];
}

export async function upgradeSchema(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<{ card: Card; report: UpgradeReport }> {
  const body = parseShape(UpgradeBody, input, "upgrade schema");
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    const type = svc.cardType(cur.type_id);
    const to = body.target_version ?? type.schema_version;
    if (to < cur.schema_version) {
      throw new CardsError("schema_version_mismatch", `card ${id} is at schema_version ${cur.schema_version}; downgrades are refused`, {
        field: "target_version", value: to, valid_options: [type.schema_version],
      });
    }
    if (to !== type.schema_version) {
      throw new CardsError("schema_version_mismatch", `only the loaded schema_version ${type.schema_version} of ${type.id} can be the target`, {
        field: "target_version", value: to, valid_options: [type.schema_version],
      });
    }
    const report: UpgradeReport = { from: cur.schema_version, to, defaults_applied: {}, fields_dropped: [] };
    if (to === cur.schema_version) return { card: withParts(w.tx, cur), report };
    const fields = migrateFields(type, cur, report);
    const next: Card = { ...cur, schema_version: to, fields: revalidate(svc, type, fields) };
    const card = commitUpdate(w, cur, next, [{ type: "schema_upgraded", diff: { ...report } }], svc);
    return { card: withParts(w.tx, card), report };
  }, { dryRun: body.dry_run });
}

/** field_defaults of every migration between the card's version and the target, then the drop. */
function migrateFields(type: CardType, card: Card, report: UpgradeReport): Record<string, unknown> {
  const fields = { ...card.fields };
  for (let ver = card.schema_version + 1; ver <= report.to; ver++) {
    const m = type.migrations?.[String(ver)];
    for (const [fid, value] of Object.entries(m?.field_defaults ?? {})) {
      if (fields[fid] === undefined) {
        fields[fid] = value;
        report.defaults_applied[fid] = value;
      }
    }
  }
  const declared = new Set(type.fields.map((f) => f.id));
  for (const key of Object.keys(fields)) {
    if (!declared.has(key)) {
      report.fields_dropped.push(key);
      delete fields[key];
    }
  }
  return fields;
}

/** The upgraded fields must satisfy the target schema, required fields included. */
function revalidate(svc: Service, type: CardType, fields: Record<string, unknown>): Record<string, unknown> {
  const { settings, tag_set } = svc.defs.workspace;
  const plain: Record<string, unknown> = {};
  const repeating: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(fields)) (type.fields.find((f) => f.id === k)?.type === "repeating" ? repeating : plain)[k] = val;
  const out = validateFields({ type, settings, tagSet: tag_set, fields: plain, mode: "patch", existing: {} }).fields;
  for (const [k, entries] of Object.entries(repeating)) {
    out[k] = (entries as Array<Record<string, unknown>>).map((e) => {
      const { entry_id, ...rest } = e;
      return { entry_id, ...validateEntry(type, k, rest, "append", undefined, { settings, tagSet: tag_set }).entry };
    });
  }
  for (const f of type.fields) {
    const val = out[f.id];
    if (f.required && (val === undefined || val === "" || (Array.isArray(val) && val.length === 0))) {
      throw new CardsError("validation_failed", `after the upgrade, required field ${f.id} would be empty`, {
        field: f.id, hint: `declare a field_defaults entry for ${f.id} in the migrations of ${type.id}, or set the field first`,
      });
    }
  }
  return out;
}
