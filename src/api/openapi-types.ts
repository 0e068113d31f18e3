/**
 * The per-card-type OpenAPI schemas, from the live definitions: request bodies
 * (Fields*, Create*, Update*) and answers (Card*, CardFields*), plus the unions over every
 * type (CreateCardBody, PatchCardBody, Card). Describes only: the rules live in the service.
 */
import { clearable, createFieldSchema, fieldSchema, obj, statusesOf, tagsSchema, type JsonSchema } from "../service/index.ts";
import type { CardType, Definitions, FieldDef } from "../domain/types.ts";
import { CARD_PROPERTIES, CARD_REQUIRED } from "./openapi-components.ts";

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
/**
 * A title as validateTitle takes it: not blank, one line once trimmed. JSON Schema counts
 * characters, the server counts bytes: maxLength is the most a title can be (1,024 ASCII
 * characters), and the description says the rest.
 */
export const TITLE_SCHEMA: JsonSchema = {
  type: "string", minLength: 1, maxLength: 1024, pattern: "^[^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029]*$",
  description: "one line (no LF, CR, U+0085, U+2028, U+2029), not blank, no control characters (C0, DEL, C1); surrounding spaces are trimmed; at most 1,024 bytes of UTF-8 (413 beyond)",
};
const ENTRY_ID: JsonSchema = { type: "string", pattern: "^ent_", readOnly: true, description: "set by the server; names the entry in /cards/{id}/fields/{field}/{entry_id}" };

/** Adds every per-type schema and the three unions to `schemas`. */
export function addCardTypeSchemas(schemas: Record<string, JsonSchema>, defs: Definitions): void {
  const creates: JsonSchema[] = [];
  const updates: JsonSchema[] = [];
  const cards: JsonSchema[] = [];
  const createMap: Record<string, string> = {};
  const cardMap: Record<string, string> = {};
  // the unions are added last: a card type id such as card_body must not take their names
  const used = new Set([...Object.keys(schemas), "CreateCardBody", "PatchCardBody", "Card"]);
  for (const type of defs.cardTypes.values()) {
    const names = nameKeys(type.id, used);
    for (const [name, schema] of Object.entries(typeSchemas(type, defs, names))) schemas[name] = schema;
    creates.push(ref(names.create));
    updates.push(ref(names.update));
    cards.push(ref(names.card));
    createMap[type.id] = `#/components/schemas/${names.create}`;
    cardMap[type.id] = `#/components/schemas/${names.card}`;
  }
  schemas.CreateCardBody = { oneOf: creates, discriminator: { propertyName: "type_id", mapping: createMap } };
  schemas.PatchCardBody = {
    anyOf: updates,
    description: "The card's type decides which of these applies (its fields); a key the type does not declare is 422 unknown_field.",
  };
  schemas.Card = { oneOf: cards, discriminator: { propertyName: "type_id", mapping: cardMap } };
}

interface Names { fields: string; create: string; update: string; card: string; cardFields: string }

/** Component names for one type; ids such as my-type and my_type get a number on the later one. */
function nameKeys(id: string, used: Set<string>): Names {
  const base = id.split(/[-_]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
  for (let n = 1; ; n++) {
    const key = n === 1 ? base : `${base}${n}`;
    const names: Names = { fields: `Fields${key}`, create: `Create${key}`, update: `Update${key}`, card: `Card${key}`, cardFields: `CardFields${key}` };
    if (Object.values(names).some((name) => used.has(name))) continue;
    for (const name of Object.values(names)) used.add(name);
    return names;
  }
}

function typeSchemas(type: CardType, defs: Definitions, names: Names): Record<string, JsonSchema> {
  const open = !defs.workspace.settings.strict_fields;
  const statuses = statusesOf(type, defs);
  // create: as in the create tools (createFieldSchema); only a required field without a
  // default must be given
  const mustGive = (f: FieldDef) => f.required === true && f.default === undefined;
  const createProps: Record<string, JsonSchema> = {};
  for (const f of type.fields) createProps[f.id] = createFieldSchema(f, requestSchema(f, defs));
  const required = type.fields.filter(mustGive).map((f) => f.id);
  // update: null removes an optional key only (a required one is refused), as in the update tools
  const patchProps: Record<string, JsonSchema> = {};
  for (const f of type.fields) if (f.type !== "repeating") patchProps[f.id] = f.required ? requestSchema(f, defs) : clearable(requestSchema(f, defs));
  const readProps: Record<string, JsonSchema> = {};
  for (const f of type.fields) readProps[f.id] = readSchema(f, defs);
  return {
    [names.fields]: { ...obj(createProps, required, `Fields of a new ${type.name} card (schema_version ${type.schema_version})`), additionalProperties: open },
    [names.create]: {
      ...obj({
        type_id: { type: "string", const: type.id },
        title: TITLE_SCHEMA,
        status: { type: "string", enum: statuses, description: `default ${statuses[0]}` },
        fields: ref(names.fields),
        tags: tagsSchema(defs),
        schema_version: { type: "integer", const: type.schema_version },
        dry_run: { type: "boolean" },
      }, required.length ? ["type_id", "title", "fields"] : ["type_id", "title"], `Create a ${type.name} card`),
      additionalProperties: false,
    },
    [names.update]: {
      ...obj({
        version: { type: "integer", minimum: 1, description: "the version you read" },
        title: TITLE_SCHEMA,
        status: { type: "string", enum: statuses },
        owner: { type: ["string", "null"], description: "a registered user; empty or null clears" },
        tags: tagsSchema(defs),
        fields: { ...obj(patchProps, [], "keys to change; null removes an optional key (a required one is refused)"), additionalProperties: open },
        force: { type: "boolean" },
        dry_run: { type: "boolean" },
      }, ["version"], `Update a ${type.name} card`),
      additionalProperties: false,
    },
    // a stored card may be at an older schema_version, or its definitions reloaded since:
    // nothing is required and other keys may appear
    [names.cardFields]: {
      ...obj(readProps, [], `Fields of a stored ${type.name} card, typed as schema_version ${type.schema_version} declares them; a card written under an earlier definition may lack keys or hold others`),
      additionalProperties: true,
    },
    [names.card]: {
      ...obj({ ...CARD_PROPERTIES, type_id: { type: "string", const: type.id }, fields: ref(names.cardFields) }, CARD_REQUIRED, `A ${type.name} card`),
    },
  };
}

/**
 * A field's schema in a request body: no `default` keyword (a generated client would make
 * a field with a default required), the default said in the description instead.
 */
function requestSchema(f: FieldDef, defs: Definitions): JsonSchema {
  return describeBounds(f, moveDefaults(fieldSchema(f, defs)));
}

/** A field's schema in an answer: no default, no bounds; repeating entries carry their entry_id. */
function readSchema(f: FieldDef, defs: Definitions): JsonSchema {
  if (f.type === "repeating") {
    const props: Record<string, JsonSchema> = { entry_id: ENTRY_ID };
    for (const item of f.item_fields ?? []) props[item.id] = readSchema(item, defs);
    const s: JsonSchema = { type: "array", items: { ...obj(props, ["entry_id"]), additionalProperties: true } };
    if (f.description) s.description = f.description;
    return s;
  }
  const { default: _default, minItems: _min, minimum: _lo, maximum: _hi, ...s } = fieldSchema(f, defs);
  return s;
}

function moveDefaults(s: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...s };
  if (out.default !== undefined) {
    out.description = `${out.description ? `${String(out.description)}; ` : ""}default: ${JSON.stringify(out.default)}`;
    delete out.default;
  }
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, JsonSchema>).map(([k, v]) => [k, moveDefaults(v)]));
  if (out.items) out.items = moveDefaults(out.items as JsonSchema);
  return out;
}

/** A date field's min and max (Unix seconds in the definition) as dates in the description. */
function describeBounds(f: FieldDef, s: JsonSchema): JsonSchema {
  if (f.type === "date" && (f.min !== undefined || f.max !== undefined)) {
    const at = (secs: number) => new Date(secs * 1000).toISOString();
    const bounds = [f.min !== undefined ? `not before ${at(f.min)}` : "", f.max !== undefined ? `not after ${at(f.max)}` : ""].filter(Boolean).join(", ");
    s.description = `${s.description ? `${String(s.description)}; ` : ""}${bounds} (422 otherwise)`;
  }
  if (f.type === "repeating" && s.items) {
    const props = (s.items as JsonSchema).properties as Record<string, JsonSchema>;
    for (const item of f.item_fields ?? []) if (props[item.id]) props[item.id] = describeBounds(item, props[item.id]!);
  }
  return s;
}
