/**
 * JSON Schemas for tool inputs, derived from the live definitions: one field definition
 * becomes one property (required, enum options, multiple, min/max, date-time, card ids,
 * repeating entries from item_fields, artifact metadata). Descriptions come from the
 * definitions and stay short: agents pay for every token of tools/list.
 */
import type { CardType, Definitions } from "../domain/types.ts";
import { anyObj, bool, clearable, createFieldSchema, fieldSchema, int, obj, statusesOf, str, strEnum, tagsSchema, type JsonSchema } from "../service/index.ts";

export { anyObj, bool, int, obj, str, type JsonSchema };

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /**
   * MCP tool annotations: read tools say so, so a harness need not ask before each read;
   * writes that only add say they destroy nothing; none reaches outside the workspace
   * (MCP's defaults for a tool that says nothing are destructive and open-world)
   */
  annotations?: { readOnlyHint?: true; destructiveHint?: false; openWorldHint: false };
}

/** create_<type_id>: title, status, tags and the type's fields (required ones without a default are required). */
export function createTool(type: CardType, defs: Definitions): ToolSpec {
  const props: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const f of type.fields) {
    // null stands for "not given", as over HTTP: the default applies (createFieldSchema)
    props[f.id] = createFieldSchema(f, fieldSchema(f, defs));
    if (f.required && f.default === undefined) required.push(f.id);
  }
  const statuses = statusesOf(type, defs);
  const properties: Record<string, JsonSchema> = {
    title: str(),
    status: strEnum(statuses, `default ${statuses[0]}`),
    tags: tagsSchema(defs),
    fields: fieldsObject(obj(props, required), defs),
  };
  return {
    name: `create_${type.id}`,
    description: `Create a ${type.name} card.${type.description ? ` ${type.description}` : ""}`,
    inputSchema: closed(obj(properties, required.length ? ["title", "fields"] : ["title"])),
  };
}

/** update_<type_id>: card_id and version required; only the given keys change. */
export function updateTool(type: CardType, defs: Definitions): ToolSpec {
  const props: Record<string, JsonSchema> = {};
  // only an optional field may be cleared: the schema says so, so a harness need not find out by a refusal
  for (const f of type.fields) {
    if (f.type === "repeating") {
      // entries go through append_entry; null only clears a value stored before the field
      // became repeating (the entry tools refuse to touch one)
      props[f.id] = { type: "null", description: "only null: clears a value stored before this was a repeating field" };
      continue;
    }
    // no `default` here: a harness filling in defaults would reset the field on every update
    const { default: _default, ...s } = fieldSchema(f, defs);
    props[f.id] = f.required ? s : clearable(s);
  }
  const repeating = type.fields.filter((f) => f.type === "repeating").map((f) => f.id);
  const properties: Record<string, JsonSchema> = {
    card_id: str(),
    version: int("the version you read"),
    title: str(),
    status: strEnum(statusesOf(type, defs)),
    owner: str("registered user id; empty clears"),
    tags: tagsSchema(defs, "the full new list"),
    fields: fieldsObject(obj(props, [], `keys to change; null clears an optional one${repeating.length ? `; ${repeating.join(", ")} via append_entry` : ""}`), defs),
    force: bool("skip the transition check"),
  };
  return {
    name: `update_${type.id}`,
    description: `Update a ${type.name} card: status moves, fields, owner, tags.`,
    inputSchema: closed(obj(properties, ["card_id", "version"])),
  };
}

/** Under strict_fields an undeclared key is refused (unknown_field): the schema says so. */
function fieldsObject(s: JsonSchema, defs: Definitions): JsonSchema {
  return defs.workspace.settings.strict_fields ? closed(s) : s;
}

/** A tool's arguments: the declared ones only (checkArgs refuses any other, as the schema now says). */
export function closed(schema: JsonSchema): JsonSchema {
  return { ...schema, additionalProperties: false };
}
