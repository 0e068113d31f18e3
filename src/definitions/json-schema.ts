/**
 * JSON Schemas derived from the live definitions, shared by the tool server (tool input
 * schemas) and OpenAPI (per-type request bodies): one field definition becomes one
 * property (required, enum options, multiple, min/max, date-time, card ids, repeating
 * entries from item_fields, artifact metadata). Pure: no I/O.
 */
import type { CardType, Definitions, FieldDef } from "../domain/types.ts";

export type JsonSchema = { [key: string]: unknown };

/** An object schema; `required` is omitted when empty. */
export function obj(properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema {
  const s: JsonSchema = { type: "object" };
  if (description) s.description = description;
  s.properties = properties;
  if (required.length) s.required = required;
  return s;
}

/** A free-form object: its keys are described, not enumerated. */
export const anyObj = (description?: string): JsonSchema => (description ? { type: "object", description } : { type: "object" });
export const str = (description?: string): JsonSchema => (description ? { type: "string", description } : { type: "string" });
export const int = (description?: string): JsonSchema => (description ? { type: "integer", description } : { type: "integer" });
export const bool = (description?: string): JsonSchema => (description ? { type: "boolean", description } : { type: "boolean" });
export const strEnum = (options: readonly string[], description?: string): JsonSchema =>
  description ? { type: "string", enum: [...options], description } : { type: "string", enum: [...options] };

const ARTIFACT: JsonSchema = obj({ uri: str(), mime: str(), size: int(), sha256: str() }, ["uri"]);

/** The schema of one field's value. */
export function fieldSchema(f: FieldDef, defs: Definitions): JsonSchema {
  const s = valueSchema(f, defs);
  const text = describe(f);
  if (text) s.description = text;
  if (f.default !== undefined) s.default = f.default;
  return s;
}

function valueSchema(f: FieldDef, defs: Definitions): JsonSchema {
  switch (f.type) {
    case "string":
      // one line (the service refuses a line break: "use a text field"); a required one not empty
      return { type: "string", pattern: "^[^\\r\\n]*$", ...(f.required ? { minLength: 1 } : {}) };
    case "text":
      return { type: "string", ...(f.required ? { minLength: 1 } : {}) };
    case "number": {
      const s: JsonSchema = { type: "number" };
      if (f.min !== undefined) s.minimum = f.min;
      if (f.max !== undefined) s.maximum = f.max;
      return s;
    }
    case "date":
      return { type: "string", format: "date-time" };
    case "enum":
      return f.multiple
        ? { type: "array", items: { type: "string", enum: f.options ?? [] }, uniqueItems: true, minItems: 1 }
        : { type: "string", enum: f.options ?? [] };
    case "user":
      return f.multiple ? { type: "array", items: { type: "string" }, uniqueItems: true, minItems: 1 } : { type: "string" };
    case "tags": {
      const { tag_policy } = defs.workspace.settings;
      const items: JsonSchema = tag_policy === "locked" ? { type: "string", enum: defs.workspace.tag_set } : { type: "string" };
      return { type: "array", items, uniqueItems: true };
    }
    case "card_link":
      return { type: "string", pattern: "^card_[0-9a-f]{16}$" };
    case "repeating": {
      const items = itemFields(f.item_fields ?? [], defs);
      return { type: "array", items };
    }
    case "artifact":
      // local bytes are uploaded (attach_artifact, POST /cards/{id}/artifacts/{field}): a uri
      // here can only name bytes already stored, so the schema says which uris pass
      return f.artifact_policy === "uri" ? { ...ARTIFACT } : obj({
        uri: { type: "string", pattern: "^artifacts/sha256/[0-9a-f]{2}/[0-9a-f]{64}$", description: "a stored artifact's uri: upload the bytes with attach_artifact (POST /cards/{id}/artifacts/{field})" },
        mime: str(), size: int(), sha256: str(),
      }, ["uri"]);
  }
}

/** The field's own description, else its label when that says more than the id. */
function describe(f: FieldDef): string | undefined {
  let text = f.description;
  if (!text && f.label && norm(f.label) !== norm(f.id)) text = f.label;
  if (f.type === "card_link" && f.target_type) text = `${text ? `${text} ` : ""}(${f.target_type} card id)`;
  if (f.type === "date" && !text) text = "RFC 3339";
  if (f.deprecated) text = `DEPRECATED. ${text ?? ""}`.trim();
  return text;
}

const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, "");

/** The object schema of a repeating entry (append_entry's `entry`, create's arrays). */
export function itemFields(fields: readonly FieldDef[], defs: Definitions): JsonSchema {
  const props: Record<string, JsonSchema> = {};
  for (const f of fields) props[f.id] = fieldSchema(f, defs);
  return obj(props, fields.filter((f) => f.required).map((f) => f.id));
}

/**
 * An update may clear a field: `null` removes it, and so does `[]` for a multiple one
 * (SPEC multi-value rules); on create both stand for a field not given. The schema says
 * so, or a harness that checks arguments against it would refuse both.
 */
export function clearable(s: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...s };
  if (typeof out.type === "string") out.type = [out.type, "null"];
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  delete out.minItems;
  return out;
}

/**
 * A field's schema in a create body (the HTTP body and the create tools alike): `null`
 * stands for the field not given, so its default applies; so does `[]` for an optional
 * multiple field. A required field without a default must be given, and one with a
 * default is refused as `[]` (the service says it is required), so it keeps `minItems`.
 */
export function createFieldSchema(f: FieldDef, s: JsonSchema): JsonSchema {
  if (f.required && f.default === undefined) return s;
  const out = clearable(s);
  if (f.required && s.minItems !== undefined) out.minItems = s.minItems;
  return out;
}

/** Statuses a card of this type may hold: its allowed_columns, else every column. */
export function statusesOf(type: CardType, defs: Definitions): string[] {
  return type.allowed_columns ?? defs.workspace.columns.map((c) => c.id);
}

/** The tags value schema: workspace tags under a locked policy, any strings when open. */
export function tagsSchema(defs: Definitions, description?: string): JsonSchema {
  const s = fieldSchema({ id: "tags", type: "tags" }, defs);
  if (description) s.description = description;
  return s;
}
