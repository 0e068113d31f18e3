/**
 * Rules of a FieldDef that span several of its keys (SPEC "FieldDef" and
 * "Multi-value rules"): which keys each type may use, enum options, bounds,
 * repeating items, card_link references and defaults. Works on values that may
 * have failed the shape check, so every access is guarded; shape errors are
 * reported by schemas.ts, never twice here.
 */
import { FIELD_TYPES, type FieldDef, type FieldType } from "../domain/types.ts";
import { refusalOfValue } from "../domain/fields.ts";
import type { PathKey, Report } from "./problems.ts";
import { isPlainObject } from "./schemas.ts";

/** 100,000,000,000 s is the year 5138 (or 1199 BC): a date bound that large was given in milliseconds. */
const DATE_BOUND_MS_HINT = 1e11;

/** What field rules need to know about the rest of the definitions. */
export interface FieldContext {
  /** the tag_set when tag_policy is locked; undefined when tags are open or unknown */
  lockedTags?: readonly string[];
  /** card type ids; undefined skips the check */
  cardTypeIds?: readonly string[];
  /** link type ids; undefined skips the check */
  linkTypeIds?: readonly string[];
}

export interface ValueProblem { message: string; valid_options?: string[] }

/** Keys that only some field types may use. */
const KEY_TYPES: ReadonlyArray<[string, readonly FieldType[]]> = [
  ["multiple", ["enum", "user"]],
  ["options", ["enum"]],
  ["option_themes", ["enum"]],
  ["min", ["number", "date"]],
  ["max", ["number", "date"]],
  ["target_type", ["card_link"]],
  ["link_type", ["card_link"]],
  ["item_fields", ["repeating"]],
  ["artifact_policy", ["artifact"]],
];

const RESERVED_FIELD_IDS = ["title", "status"];
const RESERVED_ITEM_IDS = ["entry_id"];

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** True for an RFC 3339 date-time such as "2025-01-31T12:00:00Z". */
export function isRfc3339(s: unknown): s is string {
  return typeof s === "string" && RFC3339.test(s) && !Number.isNaN(Date.parse(s));
}

const q = (x: unknown): string => JSON.stringify(x) ?? String(x);
const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : []);
const num = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) ? x : undefined);

function checkList(value: unknown, what: string, each: (s: string) => ValueProblem | undefined): ValueProblem | undefined {
  if (!Array.isArray(value) || value.length === 0) return { message: `must be a non-empty list of ${what}` };
  const seen = new Set<string>();
  for (const item of value) {
    if (typeof item !== "string") return { message: `must be a list of strings, got ${q(item)} in it` };
    if (seen.has(item)) return { message: `lists ${q(item)} twice` };
    seen.add(item);
    const p = each(item);
    if (p) return p;
  }
  return undefined;
}

function inBounds(n: number, def: Record<string, unknown>, unit = ""): string | undefined {
  const min = num(def.min);
  const max = num(def.max);
  if (min !== undefined && n < min) return `${n}${unit} is below min ${min}`;
  if (max !== undefined && n > max) return `${n}${unit} is above max ${max}`;
  return undefined;
}

/**
 * Checks a value (a default or a migration field default) against a field
 * definition. Existence of users and cards is not checked here. What this file's own
 * rules let through is then put to the check a create applies (refusalOfValue): a
 * default it would refuse made every create without the field fail.
 */
export function checkFieldValue(def: Record<string, unknown>, value: unknown, ctx: FieldContext = {}): ValueProblem | undefined {
  const own = checkOwnRules(def, value, ctx);
  if (own || typeof def.id !== "string" || !(FIELD_TYPES as readonly unknown[]).includes(def.type)) return own;
  try {
    const p = refusalOfValue(def as unknown as FieldDef, value, ctx.lockedTags);
    // the runtime names the field ("estimate must be ..."); here the report's path does
    const named = `${def.id} `;
    return p && { ...p, message: p.message.startsWith(named) ? p.message.slice(named.length) : p.message };
  } catch {
    return undefined; // a definition of the wrong shape: schemas.ts reports it
  }
}

function checkOwnRules(def: Record<string, unknown>, value: unknown, ctx: FieldContext): ValueProblem | undefined {
  if (value === null) return { message: "must not be null; leave the key out instead" };
  const type = def.type;
  const options = strings(def.options);
  const option = (s: string): ValueProblem | undefined =>
    options.includes(s) ? undefined : { message: `${q(s)} is not one of the options`, valid_options: options };
  const bad = (what: string): ValueProblem => ({ message: `must be ${what}, got ${q(value)}` });
  // every card would get it, and every create would then be refused as missing the field
  const blankRequired = (s: string): ValueProblem | undefined =>
    def.required === true && s.trim() === "" ? { message: "must not be empty: the field is required" } : undefined;
  switch (type) {
    case "string":
      if (typeof value !== "string") return bad("a string");
      return /[\r\n]/.test(value) ? { message: "a string field holds a single line; use a text field" } : blankRequired(value);
    case "text":
      return typeof value === "string" ? blankRequired(value) : bad("a string");
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) return bad("a number");
      const b = inBounds(value, def);
      return b ? { message: b } : undefined;
    }
    case "date": {
      if (!isRfc3339(value)) return bad("an RFC 3339 timestamp such as \"2025-01-31T12:00:00Z\"");
      const b = inBounds(Math.floor(Date.parse(value) / 1000), def, " (Unix seconds)");
      return b ? { message: b } : undefined;
    }
    case "enum":
      if (def.multiple === true) return checkList(value, "options (multiple is true)", option);
      if (typeof value !== "string") return { ...bad("one option (a string)"), valid_options: options };
      return option(value);
    case "user":
      if (def.multiple === true) return checkList(value, "user ids (multiple is true)", () => undefined);
      return typeof value === "string" && value !== "" ? undefined : bad("a user id");
    case "tags": {
      if (!Array.isArray(value)) return bad("a list of tags");
      const tags = ctx.lockedTags;
      for (const t of value) {
        if (typeof t !== "string") return { message: `must be a list of strings, got ${q(t)} in it` };
        if (tags && !tags.includes(t)) return { message: `tag ${q(t)} is not in the workspace tag_set (tag_policy is locked)`, valid_options: [...tags] };
      }
      return undefined;
    }
    default:
      return { message: `is not supported: ${String(type)} fields take no default (remove the key)` };
  }
}

/** Reports a reference to an unknown id. `known` undefined means "cannot tell": nothing is reported. */
export function checkRef(value: unknown, known: readonly string[] | undefined, what: string, at: PathKey[], report: Report): void {
  if (typeof value !== "string" || known === undefined || known.includes(value)) return;
  report(at, `${q(value)} is not a known ${what}`, [...known]);
}

/** Checks one list of FieldDefs (a card type's `fields` or a repeating field's `item_fields`). */
export function checkFieldDefs(fields: unknown, at: PathKey[], report: Report, ctx: FieldContext, inItems = false): void {
  if (!Array.isArray(fields)) return;
  const firstIndex = new Map<string, number>();
  fields.forEach((f: unknown, i) => {
    if (!isPlainObject(f)) return;
    const here = [...at, i];
    checkIdentity(f, here, report, firstIndex, i, at, inItems);
    const type = f.type as FieldType;
    // an unknown type, or a repeating item field (no nesting): already reported by the shape check
    if (!FIELD_TYPES.includes(type) || (inItems && type === "repeating")) return;
    checkKeysForType(f, type, here, report, inItems);
    if (type === "enum") checkEnum(f, here, report);
    const min = num(f.min);
    const max = num(f.max);
    if (min !== undefined && max !== undefined && min > max) report([...here, "min"], `min (${min}) must not exceed max (${max})`);
    if (type === "date") {
      // past year 5000 in seconds: milliseconds (Date.now(), JavaScript) taken for seconds
      for (const [key, v] of [["min", min], ["max", max]] as const) {
        if (v !== undefined && Math.abs(v) >= DATE_BOUND_MS_HINT) {
          report([...here, key], Math.abs(v / 1000) < DATE_BOUND_MS_HINT
            ? `${key} ${v} looks like milliseconds: a date field's bounds are Unix seconds UTC (${Math.trunc(v / 1000)}?)`
            : `${key} ${v} is ${v < 0 ? "before 1200 BC" : "past the year 5000"}: a date field's bounds are Unix seconds UTC (e.g. 1704067200 for 2024-01-01)`);
        }
      }
    }
    if (type === "repeating") {
      if (f.item_fields === undefined) report([...here, "item_fields"], "repeating fields need item_fields: the fields of each entry");
      else checkFieldDefs(f.item_fields, [...here, "item_fields"], report, ctx, true);
    }
    if (type === "card_link") {
      checkRef(f.target_type, ctx.cardTypeIds, "card type", [...here, "target_type"], report);
      checkRef(f.link_type, ctx.linkTypeIds, "link type", [...here, "link_type"], report);
    }
    if ("default" in f) {
      const p = checkFieldValue(f, f.default, ctx);
      if (p) report([...here, "default"], `default ${p.message}`, p.valid_options);
    }
  });
}

function checkIdentity(
  f: Record<string, unknown>, here: PathKey[], report: Report,
  firstIndex: Map<string, number>, i: number, at: PathKey[], inItems: boolean,
): void {
  const id = f.id;
  if (typeof id !== "string") return;
  const prev = firstIndex.get(id);
  if (prev !== undefined) {
    const kind = inItems ? "item field" : "field";
    report([...here, "id"], `duplicate ${kind} id ${q(id)}; ${q(id)} is also at index ${prev} of ${at.at(-1)}`);
  } else firstIndex.set(id, i);
  const reserved = inItems ? RESERVED_ITEM_IDS : RESERVED_FIELD_IDS;
  if (reserved.includes(id)) {
    report([...here, "id"], inItems
      ? `${q(id)} is reserved: every entry gets a server-generated entry_id`
      : `${q(id)} is reserved: title and status are part of the card envelope, not fields`);
  }
}

function checkKeysForType(f: Record<string, unknown>, type: FieldType, here: PathKey[], report: Report, inItems: boolean): void {
  for (const [key, types] of KEY_TYPES) {
    if (!(key in f)) continue;
    if (key === "multiple" && inItems) {
      report([...here, key], "multiple is not allowed inside item_fields");
    } else if (!types.includes(type)) {
      report([...here, key], `${key} is only allowed on ${types.join(" and ")} fields, not on ${type} fields`);
    }
  }
}

function checkEnum(f: Record<string, unknown>, here: PathKey[], report: Report): void {
  if (f.options === undefined) {
    report([...here, "options"], "enum fields need options: a non-empty list of values");
    return;
  }
  const options = strings(f.options);
  const seen = new Map<string, string>();
  if (Array.isArray(f.options)) (f.options as unknown[]).forEach((o, j) => {
    if (typeof o !== "string") return;
    const first = seen.get(o.normalize("NFC"));
    if (first !== undefined) report([...here, "options", j], `duplicate option ${q(o)}${first === o ? "" : sameInAnotherForm(first)}`);
    else seen.set(o.normalize("NFC"), o);
  });
  if (isPlainObject(f.option_themes)) {
    for (const key of Object.keys(f.option_themes)) {
      if (!options.includes(key)) report([...here, "option_themes", key], `${q(key)} is not one of the options`, options);
    }
  }
}

/** Why two strings that look alike count as one (the same letters in two Unicode forms). */
export const sameInAnotherForm = (first: string): string =>
  `: it is ${q(first)} in another Unicode form (composed and decomposed accents look alike); keep one`;
