/**
 * POST /cards/{id}/upgrade-schema (SPEC Versioning 6-7): move a card to its type's
 * loaded schema_version. Applies the field_defaults of each migration entry on the way,
 * drops fields the target no longer declares, re-validates, bumps schema_version and
 * emits schema_upgraded {from, to, defaults_applied, fields_dropped}. Downgrades and any
 * target other than the loaded version are refused. A dry run reports what would change.
 */
import { CardsError, isCardsError } from "../domain/errors.ts";
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
    if (type.allowed_columns && !type.allowed_columns.includes(cur.status)) {
      throw new CardsError("validation_failed", `upgrade to schema_version ${to}: status ${cur.status} is not allowed for cards of type ${type.id}`, {
        field: "status", value: cur.status, valid_options: type.allowed_columns,
        hint: "move the card to one of these columns first (a PATCH of its status, with force if the board's graph refuses), then upgrade",
      });
    }
    const next: Card = { ...cur, schema_version: to, fields: revalidate(svc, type, fields, to, report, ctx.actor) };
    // the report shows what was stored: a default "me" is the upgrading actor
    for (const k of Object.keys(report.defaults_applied)) if (Object.hasOwn(next.fields, k)) report.defaults_applied[k] = next.fields[k];
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
      // an earlier migration's default for a field the target no longer has: dropped anyway
      if (fields[fid] === undefined && type.fields.some((f) => f.id === fid)) {
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
  // keys of repeating entries the target's item_fields no longer declare ("evidence.by")
  for (const f of type.fields) {
    if (f.type !== "repeating" || !Array.isArray(fields[f.id])) continue;
    const items = new Set(["entry_id", ...(f.item_fields ?? []).map((i) => i.id)]);
    const dropped = new Set<string>();
    fields[f.id] = (fields[f.id] as Array<Record<string, unknown>>).map((e) => {
      const kept: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(e)) {
        if (items.has(k)) kept[k] = v;
        else dropped.add(k);
      }
      return kept;
    });
    for (const k of dropped) report.fields_dropped.push(`${f.id}.${k}`);
  }
  return fields;
}

/**
 * The upgraded fields must satisfy the target schema, required fields included. Every
 * value that does not fit is named at once (a dry run showed them one per call), with
 * how to go on: change the card first, then upgrade.
 */
function revalidate(svc: Service, type: CardType, fields: Record<string, unknown>, to: number, report: UpgradeReport, actor: string | undefined): Record<string, unknown> {
  const { settings, tag_set } = svc.defs.workspace;
  const out: Record<string, unknown> = {};
  const misfits: CardsError[] = [];
  const fit = (check: () => void): void => {
    try { check(); } catch (e) {
      if (!isCardsError(e)) throw e;
      misfits.push(e);
    }
  };
  for (const [k, val] of Object.entries(fields)) {
    if (type.fields.find((f) => f.id === k)?.type !== "repeating") {
      fit(() => { Object.assign(out, validateFields({ type, settings, tagSet: tag_set, fields: { [k]: val }, mode: "patch", existing: {}, actor }).fields); });
      continue;
    }
    fit(() => {
      out[k] = (val as Array<Record<string, unknown>>).map((e) => {
        const { entry_id, ...rest } = e;
        const { entry } = validateEntry(type, k, rest, "append", undefined, { settings, tagSet: tag_set, actor });
        // an item field's default fills entries that lack it: the report says so (key "field.item")
        for (const key of Object.keys(entry)) if (!Object.hasOwn(rest, key)) report.defaults_applied[`${k}.${key}`] = entry[key];
        return { entry_id, ...entry };
      });
    });
  }
  if (misfits.length > 0) {
    const first = misfits[0]!;
    throw new CardsError(first.code, `upgrade to schema_version ${to}: ${misfits.map((e) => e.message).join("; ")}`, {
      ...first.extra,
      hint: `change the card first so ${misfits.length === 1 ? "this value fits" : "these values fit"} the new schema (a PATCH of its fields; a field_defaults entry only fills absent fields), then upgrade`,
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
