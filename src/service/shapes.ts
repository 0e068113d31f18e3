/**
 * Request shapes shared by every surface (HTTP bodies, CLI input, tool arguments).
 * strictObject everywhere: an unknown key is an error, never silently dropped.
 * `parseShape` maps the first valibot issue to `validation_failed` with its path.
 *
 * Each shape is built on first use: building all of them when the module loads cost
 * 0.4-1 ms of every one-shot CLI write (docs/decisions.md, "CLI cold path"). The shapes
 * the agent loop sends on every call also carry a plain check of the common case: a body
 * it accepts is one valibot accepts as it is (tests/unit/shapes.test.ts holds them to
 * that); anything else, and every error, goes through valibot. Building and running a
 * schema cost ~0.5M instructions of a one-shot write.
 */
import * as v from "valibot";
import { CardsError } from "../domain/errors.ts";
import { ME, USER_ID_PATTERN, USER_ID_RULE } from "../domain/ids.ts";
import { controlCharIn, hasLineBreak } from "../domain/text.ts";

/** A schema built on its first use, then kept; `quick` accepts a subset of its valid inputs without it. */
export type Shape<S extends v.GenericSchema = v.GenericSchema> = (() => S) & { quick?: (x: object) => boolean };

function shape<S extends v.GenericSchema>(build: () => S, quick?: Record<string, Check>): Shape<S> {
  let built: S | undefined;
  const get = (() => (built ??= build())) as Shape<S>;
  if (quick) get.quick = (x) => fitsChecks(x as Record<string, unknown>, quick);
  return get;
}

// --- plain checks (a subset of what the schemas accept) ---
type Check = (x: unknown) => boolean;
const str: Check = (x) => typeof x === "string";
const bool: Check = (x) => typeof x === "boolean";
const any: Check = () => true;
/** a required key of `v.unknown()`: valibot refuses it when missing */
const present: Check = (x) => x !== undefined;
const id: Check = (x) => typeof x === "string" && x.length >= 1 && x.length <= 200;
const int: Check = (x) => Number.isInteger(x);
const version: Check = (x) => Number.isInteger(x) && (x as number) >= 1;
const plainObject: Check = (x) => typeof x === "object" && x !== null && !Array.isArray(x);
/** a JSON object whose keys are data (fields, filter, entry): checked key by key later */
const record: Check = plainObject;
const opt = (c: Check): Check => (x) => x === undefined || c(x);

function fitsChecks(x: Record<string, unknown>, checks: Record<string, Check>): boolean {
  for (const k in x) if (!Object.hasOwn(checks, k)) return false;
  for (const k in checks) if (!checks[k]!(x[k])) return false;
  return true;
}

const Id = shape(() => v.pipe(v.string(), v.minLength(1), v.maxLength(200)));
const Version = shape(() => v.pipe(v.number(), v.integer(), v.minValue(1)));
/**
 * A JSON object whose keys are data, passed on whole: the field, filter and entry rules
 * check each key. Not `v.record`, which silently leaves out `__proto__`, `constructor`
 * and `prototype`: a field of that name would be dropped instead of refused.
 */
const DataObject = shape(() => v.custom<Record<string, unknown>>((x) => typeof x === "object" && x !== null && !Array.isArray(x), "expected a JSON object"));

export const CreateCardBody = shape(() => v.strictObject({
  type_id: Id(),
  title: v.unknown(),
  status: v.optional(v.string()),
  fields: v.optional(DataObject()),
  tags: v.optional(v.unknown()),
  schema_version: v.optional(v.pipe(v.number(), v.integer())),
  dry_run: v.optional(v.boolean()),
}), { type_id: id, title: present, status: opt(str), fields: opt(record), tags: any, schema_version: opt(int), dry_run: opt(bool) });

export const PatchCardBody = shape(() => v.strictObject({
  version: Version(),
  title: v.optional(v.unknown()),
  status: v.optional(v.string()),
  owner: v.optional(v.nullable(v.string())),
  tags: v.optional(v.unknown()),
  fields: v.optional(DataObject()),
  force: v.optional(v.boolean()),
  dry_run: v.optional(v.boolean()),
}), {
  version, title: any, status: opt(str), owner: opt((x) => x === null || typeof x === "string"), tags: any,
  fields: opt(record), force: opt(bool), dry_run: opt(bool),
});

export const RegisterUserBody = shape(() => v.strictObject({
  id: v.pipe(
    v.string(),
    v.regex(USER_ID_PATTERN, USER_ID_RULE),
    v.check((s) => s !== ME, `"${ME}" is reserved: it names the caller in filters, owner and assign_to`),
  ),
  kind: v.picklist(["human", "agent"], 'must be "human" or "agent"'),
  display_name: v.optional(v.pipe(v.string(), v.maxLength(200), v.check((s) => !controlCharIn(s) && !hasLineBreak(s), "must be one line of text without control characters"))),
}));

/**
 * Validates `input` against a shape; the error names the offending key path. An unknown
 * key is reported before anything else (a `type` sent for `type_id` explains the missing
 * `type_id`); `unknownKeyHint` may say where such a key belongs.
 */
export function parseShape<S extends v.GenericSchema>(shapeOf: Shape<S>, input: unknown, what: string, unknownKeyHint?: (key: string) => string | undefined): v.InferOutput<S> {
  if (input === undefined || input === null) input = {};
  if (shapeOf.quick && plainObject(input) && shapeOf.quick(input as object)) return input as v.InferOutput<S>;
  const schema = shapeOf();
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  // valibot reports an unknown key and a missing required key both as a strict_object
  // issue at that key; only the unknown one expects "never"
  const unknownKey = r.issues.find((i) => i.kind === "schema" && i.type === "strict_object" && i.expected === "never" && v.getDotPath(i));
  const issue = unknownKey ?? r.issues[0];
  const path = v.getDotPath(issue) ?? undefined;
  if (unknownKey && path) {
    const hint = unknownKeyHint?.(path);
    throw new CardsError("validation_failed", `${what}: unknown key ${JSON.stringify(path)}`, {
      field: path, valid_options: allowedKeys(schema), ...(hint ? { hint } : {}),
    });
  }
  // a required key sent as null is as missing (an optional one sent as null says what it takes)
  const entries = (schema as { entries?: Record<string, { type?: string; options?: unknown[] }> }).entries;
  const optional = (key: string) => ["optional", "nullish", "exact_optional"].includes(entries?.[key]?.type ?? "");
  const missing = path && (issue.input === undefined || (issue.input === null && entries?.[path] !== undefined && !optional(path)));
  if (!missing && (issue.type === "object" || issue.type === "strict_object")) {
    throw new CardsError("validation_failed", `${what}: ${path ? path + ": " : ""}expected a JSON object`, { field: path });
  }
  // a missing key that takes one of a few values names them too (POST /users without kind)
  const entry = missing ? entries?.[path] : undefined;
  const options = issue.type === "picklist" ? picklistOptions(issue.expected) : entry?.type === "picklist" ? entry.options : undefined;
  const wants = whatItTakes(issue);
  throw new CardsError("validation_failed", `${what}: ${missing ? `${path} is required` : wants && path ? `${path} must be ${wants}` : `${path ? path + ": " : ""}${issue.message}`}`, {
    field: path, value: missing ? undefined : issue.input,
    ...(options ? { valid_options: options } : {}),
    ...(missing && path === "version" ? { hint: "pass the card's current version (cards cards get ID shows it); a stale one is 409 with the current card" } : {}),
  });
}

/** What a value must be, in the words of the hand-written checks ("a number"), for the common issues; else undefined (valibot's message is used). */
function whatItTakes(issue: v.BaseIssue<unknown>): string | undefined {
  switch (issue.type) {
    case "string": return "a string";
    case "number": return "a number";
    case "boolean": return "true or false";
    case "array": return "an array";
    case "integer": return "a whole number";
    case "min_value": return `at least ${String(issue.requirement)}`;
    case "max_value": return `at most ${String(issue.requirement)}`;
    default: return undefined;
  }
}

/** The options of a picklist issue (`("human" | "agent")`), or undefined. */
function picklistOptions(expected: string | null): unknown[] | undefined {
  if (!expected) return undefined;
  try {
    return expected.replace(/^\((.*)\)$/, "$1").split(" | ").map((o) => JSON.parse(o) as unknown);
  } catch {
    return undefined;
  }
}

function allowedKeys(schema: v.GenericSchema): string[] | undefined {
  const entries = (schema as unknown as { entries?: Record<string, unknown> }).entries;
  return entries ? Object.keys(entries) : undefined;
}

export const ClaimBody = shape(() => v.strictObject({
  version: Version(),
  status: v.optional(v.string()),
}), { version, status: opt(str) });

export const ReleaseBody = shape(() => v.strictObject({
  version: v.optional(Version()),
  status: v.optional(v.string()),
  force: v.optional(v.boolean()),
}), { version: opt(version), status: opt(str), force: opt(bool) });

export const TakeNextBody = shape(() => v.strictObject({
  filter: v.optional(DataObject()),
  assign_to: v.optional(v.pipe(v.string(), v.minLength(1))),
  status: v.optional(v.string()),
  type_id: v.optional(Id()),
  board_id: v.optional(Id()),
  dry_run: v.optional(v.boolean()),
}), {
  filter: opt(record), assign_to: opt((x) => typeof x === "string" && x.length >= 1), status: opt(str),
  type_id: opt(id), board_id: opt(id), dry_run: opt(bool),
});

export const LinkBody = shape(() => v.strictObject({
  type_id: Id(),
  target: Id(),
  note: v.optional(v.string()), // at most MAX_LINK_NOTE_BYTES (links.ts: 413, a size limit)
}));

export const CommentBody = shape(() => v.strictObject({
  body: v.string(),
}));

export const EntryBody = shape(() => v.strictObject({
  version: Version(),
  entry: DataObject(),
}));

export const UpgradeBody = shape(() => v.strictObject({
  target_version: v.optional(v.pipe(v.number(), v.integer())),
  dry_run: v.optional(v.boolean()),
}));

/** POST /workspace/reload takes no options: an empty object or no body. */
export const ReloadBody = shape(() => v.strictObject({}));

/** The static request shapes by OpenAPI component name (per-type card bodies are built from the definitions). */
export const REQUEST_SHAPES: Record<string, Shape> = {
  RegisterUserBody, ClaimBody, ReleaseBody, TakeNextBody, LinkBody, CommentBody, EntryBody, UpgradeBody,
};
