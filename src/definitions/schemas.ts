/**
 * valibot shapes of the definition files (SPEC "Resources and their fields",
 * DECISIONS "Workspace on disk"). These check the shape of each file on its own:
 * keys, value types, picklists, ids, durations. Rules that look at several keys
 * of a field live in fielddefs.ts; rules that look across files in crossrefs.ts.
 * Every object is a strictObject: an unknown key is an error (see issues.ts).
 */
import * as v from "valibot";
import { ALL_EVENT_TYPES, CONDITION_EVENTS, FIELD_TYPES } from "../domain/types.ts";
import { isDuration, parseDuration } from "../domain/durations.ts";
import { MAX_ID_LENGTH, USER_ID_PATTERN, USER_ID_RULE } from "../domain/ids.ts";
import { hasLineBreak } from "../domain/text.ts";

/** Ids of workspaces, columns, types, fields, boards, views, users, extensions. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/i;

/** Icon aliases a CardType `icon` (and an enum option theme icon) may name. */
export const ICON_ALIASES: readonly string[] = [
  "task", "bug", "review", "doc", "check", "flag", "star", "bolt", "clock", "user",
  "users", "robot", "link", "lock", "unlock", "bell", "bookmark", "calendar", "chat", "code",
  "cog", "database", "eye", "fire", "folder", "gift", "globe", "heart", "inbox", "key",
  "lightbulb", "list", "mail", "package", "pin", "question", "rocket", "search", "shield", "sparkles",
  "tag", "target", "terminal", "tool", "trash", "warning", "archive", "branch", "chart", "beaker",
];

/** Design tokens a Board `theme` may override. */
export const THEME_TOKENS: readonly string[] = [
  "accent", "accent_text", "background", "surface", "text", "muted", "border",
  "danger", "warning", "success", "info", "radius", "font", "font_mono",
];

export const FIELD_DISPLAYS = ["feed", "badge", "hidden", "link", "monospace"] as const;
export const TAG_POLICIES = ["open", "locked"] as const;
export const EXTENSION_KINDS = ["hook", "run", "service"] as const;
export const RESTART_POLICIES = ["on-failure", "always", "never"] as const;
export const VIEW_METHODS = ["GET"] as const;

const quote = (x: unknown): string => (typeof x === "string" ? JSON.stringify(x) : String(JSON.stringify(x) ?? x));
const list = (xs: readonly unknown[]): string => xs.map((x) => String(x)).join(", ");

/** True for `{...}` (not an array, not null). */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

// --- building blocks ---

const Str = v.string();
const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));
/** A tag of tag_set: no comma (`--tags a,b` is two tags) and no space around it (the CLI trims). */
const Tag = v.pipe(NonEmpty,
  v.check((t) => !t.includes(","), (i) => `${JSON.stringify(i.input)} holds a comma: a tag list on the command line is split at commas (--tags a,b)`),
  v.check((t) => t.trim() === t, (i) => `${JSON.stringify(i.input)} has spaces around it: the command line trims them`));
const Bool = v.boolean();


/**
 * Names an id or a map key may not take: JavaScript objects already have them (a column
 * `constructor` read `wip_limits.constructor` as a function), and valibot's record leaves
 * `__proto__`, `constructor` and `prototype` keys out without a word.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  "__proto__", "constructor", "prototype", "toString", "toLocaleString", "valueOf",
  "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
]);
const reservedMessage = (x: unknown): string => `${quote(x)} is a reserved name (JavaScript objects have it already): pick another`;

export const Id = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty: ids are ASCII letters, digits, \"_\" and \"-\""),
  v.check((s) => !RESERVED_NAMES.has(s), (i) => reservedMessage(i.input)),
  v.maxLength(MAX_ID_LENGTH, (i) => `is ${String(i.input).length} characters: ids are at most ${MAX_ID_LENGTH} (tools are named update_<id>, and harnesses cap tool names)`),
  v.regex(ID_PATTERN, (i) =>
    `${quote(i.input)} is not a valid id: ids are ASCII letters, digits, "_" and "-", starting with a letter or digit`),
);

/** "must be a number", with the fix when a number was written as a string ("1" -> 1). */
function numberMessage(i: { input: unknown }): string {
  if (typeof i.input === "string" && i.input.trim() !== "" && Number.isFinite(Number(i.input))) return `must be a number, got ${quote(i.input)} (write it without quotes: ${Number(i.input)})`;
  return `must be a number, got ${quote(i.input)}`;
}

/** A whole number from `min` up to 2^53 - 1: past it, 1e20 + 1 === 1e20, and "only goes up" cannot be told. */
const Int = (min: number): v.GenericSchema<number> =>
  v.pipe(v.number(numberMessage), v.integer("must be a whole number"), v.minValue(min, `must be at least ${min}`),
    v.maxValue(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER} (2^53 - 1)`));

/** A picklist whose error names the value (valid_options come from issues.ts). */
const oneOf = <T extends readonly string[]>(options: T, what: string) =>
  v.picklist(options, (i) => `${quote(i.input)} is not a valid ${what}`);

const notAnObject = (i: { input: unknown }): string =>
  `must be an object ({...}), got ${Array.isArray(i.input) ? "a list" : quote(i.input)}`;

/** `{...}` with exactly these keys; a list is refused (valibot alone takes a list for an object). */
const strict = <E extends v.ObjectEntries>(entries: E) =>
  v.pipe(v.unknown(), v.check(isPlainObject, notAnObject), v.strictObject(entries));

/** A JSON object with any content (filters, bind, expose). */
const PlainObject = v.custom<Record<string, unknown>>(isPlainObject, notAnObject);

/** A map `{key: value}`; a list is refused even when its items would pass. */
const dict = <K extends v.GenericSchema<string>, V extends v.GenericSchema>(key: K, value: V) =>
  v.pipe(
    v.unknown(),
    v.check(isPlainObject, notAnObject),
    v.check((x) => !Object.keys(x as object).some((k) => RESERVED_NAMES.has(k)), (i) =>
      reservedMessage(Object.keys(i.input as object).find((k) => RESERVED_NAMES.has(k)))),
    v.record(key, value),
  );

/** A string safe to drop into CSS: no `;{}<>` or line breaks. */
const CssValue = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.regex(/^[^;{}<>\n\r]*$/, "must not contain ; { } < > or line breaks"),
);

export const Duration = v.pipe(
  v.string((i) => typeof i.input === "number" && Number.isFinite(i.input)
    ? `must be a duration string, got the number ${i.input}: write "${i.input}s" for seconds (a number and a unit: ms, s, m, h, d)`
    : `must be a duration string such as "30m", "4h" or "2d", got ${quote(i.input)}`),
  v.check(
    (s: string) => isDuration(s),
    (i) => {
      try { parseDuration(String(i.input)); return "invalid duration"; } catch (e) { return (e as Error).message; }
    },
  ),
);

const Timestamp = v.pipe(
  v.string(),
  v.check((s) => !Number.isNaN(Date.parse(s)), (i) => `${quote(i.input)} is not an RFC 3339 timestamp`),
);

// --- workspace.json ---

const TagPolicy = v.picklist(TAG_POLICIES, (i) =>
  i.input === "propose"
    ? `tag_policy "propose" was removed; valid options: ${list(TAG_POLICIES)}`
    : `${quote(i.input)} is not a valid tag_policy`);

export const SettingsSchema = strict({
  enforce_transitions: v.optional(Bool, false),
  strict_fields: v.optional(Bool, true),
  tag_policy: v.optional(TagPolicy, "locked"),
  event_retention_days: v.optional(Int(1)),
  default_user: v.optional(v.pipe(v.string(), v.minLength(1, "default_user must be a non-empty string"))),
  default_board: v.optional(Str),
  persist_conditions: v.optional(v.array(oneOf(CONDITION_EVENTS, "condition event"))),
});

export const ColumnSchema = v.pipe(
  v.unknown(),
  v.check(isPlainObject, (i) => typeof i.input === "string"
    ? `must be an object, got ${quote(i.input)}: a column is {"id": ${quote(i.input)}, "name": "..."}`
    : notAnObject(i)),
  v.strictObject({ id: Id, name: NonEmpty }),
);

export const LinkTypeSchema = strict({
  id: Id,
  name: NonEmpty,
  type: oneOf(["directional", "bidirectional"] as const, "link type kind"),
  source_types: v.optional(v.array(Str)),
  target_types: v.optional(v.array(Str)),
});

/** User ids name no tool: the API's 64 characters (`POST /users`), not the 40 of other ids. */
const UserId = v.pipe(
  v.string(),
  v.minLength(1, `must not be empty: ${USER_ID_RULE}`),
  v.maxLength(64, (i) => `is ${String(i.input).length} characters: user ids are at most 64`),
  v.regex(USER_ID_PATTERN, (i) => `${quote(i.input)} is not a valid user id: ${USER_ID_RULE} (as POST /users takes them)`),
  v.check((s) => s !== "me", '"me" is reserved: it names the caller in filters, owner and assign_to'),
);

export const UserDefSchema = strict({
  id: UserId,
  display_name: v.optional(v.pipe(v.string(), v.check((s) => !hasLineBreak(s), "must be one line"))),
  kind: oneOf(["human", "agent"] as const, "user kind"),
  created_at: v.optional(Timestamp),
});

export const WorkspaceSchema = strict({
  id: Id,
  name: NonEmpty,
  columns: v.pipe(v.array(ColumnSchema), v.minLength(1, "a workspace needs at least one column")),
  tag_set: v.optional(v.array(Tag), []),
  link_types: v.optional(v.array(LinkTypeSchema), []),
  users: v.optional(v.array(UserDefSchema)),
  settings: v.optional(SettingsSchema, {}),
});

// --- card types ---

/** min/max: numbers only; a date bound is Unix seconds UTC. */
const Bound = v.number((i) => {
  if (typeof i.input === "string" && /^\d{4}-\d\d/.test(i.input)) return `must be a number, got ${quote(i.input)} (a date field's bounds are Unix seconds UTC, e.g. 1704067200)`;
  if (typeof i.input === "string" && i.input.trim() !== "" && Number.isFinite(Number(i.input))) return `must be a number, got ${quote(i.input)} (write it without quotes: ${Number(i.input)})`;
  return `must be a number, got ${quote(i.input)}`;
});

const OptionTheme = strict({
  icon: v.optional(oneOf(ICON_ALIASES, "icon alias")),
  color: v.optional(CssValue),
});

const fieldEntries = {
  id: Id,
  label: v.optional(Str),
  type: oneOf(FIELD_TYPES, "field type"),
  required: v.optional(Bool),
  default: v.optional(v.unknown()),
  description: v.optional(Str),
  deprecated: v.optional(Bool),
  display: v.optional(oneOf(FIELD_DISPLAYS, "display")),
  options: v.optional(v.pipe(v.array(NonEmpty), v.minLength(1, "enum options must list at least one value"))),
  option_themes: v.optional(dict(Str, OptionTheme)),
  multiple: v.optional(Bool),
  min: v.optional(Bound),
  max: v.optional(Bound),
  target_type: v.optional(Str),
  link_type: v.optional(Str),
  artifact_policy: v.optional(oneOf(["local", "uri"] as const, "artifact_policy")),
};

const ITEM_TYPES = FIELD_TYPES.filter((t) => t !== "repeating");

/** An entry of `item_fields`: any field but repeating (no nesting). */
export const ItemFieldSchema = strict({
  ...fieldEntries,
  type: v.picklist(ITEM_TYPES, (i) =>
    i.input === "repeating"
      ? "repeating fields cannot be nested: item_fields may not contain a repeating field"
      : `${quote(i.input)} is not a valid field type; valid options: ${list(ITEM_TYPES)}`),
});

export const FieldDefSchema = strict({
  ...fieldEntries,
  item_fields: v.optional(v.pipe(v.array(ItemFieldSchema), v.minLength(1, "item_fields must list at least one field"))),
});

export const MigrationSchema = strict({
  from: Int(1),
  summary: NonEmpty,
  field_defaults: v.optional(dict(Str, v.unknown())),
});

export const CardTypeSchema = strict({
  id: Id,
  name: NonEmpty,
  description: v.optional(Str),
  schema_version: v.optional(Int(1), 1),
  fields: v.array(FieldDefSchema),
  allowed_columns: v.optional(v.pipe(v.array(Str), v.minLength(1, "allowed_columns must not be empty; leave it out to allow every column"))),
  icon: v.optional(oneOf(ICON_ALIASES, "icon alias")),
  searchable_fields: v.optional(v.array(Str)),
  migrations: v.optional(dict(Str, MigrationSchema)),
});

// --- boards ---

export const MonitorsSchema = strict({
  alert_when_empty: v.optional(v.array(Str)),
  emit_rejections: v.optional(Bool),
  max_time_in_status: v.optional(dict(Str, Duration)),
  idle_after: v.optional(Duration),
});

export const PresentationSchema = strict({
  card_preview: v.optional(dict(Str, v.array(Str))),
  style_field: v.optional(Str),
  lane_sort: v.optional(Str),
  filters: v.optional(dict(Str, PlainObject)),
});

const ThemeToken = v.picklist(THEME_TOKENS, (i) => `${quote(i.input)} is not a theme token`);

export const BoardSchema = strict({
  id: Id,
  name: NonEmpty,
  description: v.optional(Str),
  columns: v.pipe(v.array(Str), v.minLength(1, "a board needs at least one column")),
  card_type_ids: v.pipe(v.array(Str), v.minLength(1, "a board needs at least one card type")),
  default_filter: v.optional(PlainObject),
  transitions: v.optional(dict(Str, v.array(Str))),
  wip_limits: v.optional(dict(Str, Int(0))),
  monitors: v.optional(MonitorsSchema),
  presentation: v.optional(PresentationSchema),
  theme: v.optional(dict(ThemeToken, CssValue)),
  settings: v.optional(strict({ enforce_transitions: v.optional(Bool) })),
});

// --- views ---

export const ViewSchema = strict({
  id: Id,
  board_id: v.optional(Str),
  path: v.pipe(v.string(), v.startsWith("/", (i) => `view path must start with "/", got ${quote(i.input)}`)),
  bind: v.optional(PlainObject),
  filter: v.optional(PlainObject),
  methods: v.optional(
    v.array(v.picklist(VIEW_METHODS, (i) => `views are read-only: method ${quote(i.input)} is not allowed`)),
    ["GET"],
  ),
});

// --- extensions ---

export const ExtensionSchema = strict({
  id: Id,
  kind: oneOf(EXTENSION_KINDS, "extension kind"),
  description: v.optional(Str),
  on: v.optional(v.array(oneOf(ALL_EVENT_TYPES, "event type"))),
  filter: v.optional(strict({
    board_id: v.optional(Str),
    type_id: v.optional(Str),
    card_id: v.optional(Str),
    to_status: v.optional(Str),
    from_status: v.optional(Str),
  })),
  run: v.pipe(v.array(NonEmpty), v.minLength(1, "run must be a non-empty argument list, e.g. [\"./notify.sh\"]")),
  cwd: v.optional(Str),
  env: v.optional(dict(Str, Str)),
  autostart: v.optional(Bool),
  restart_policy: v.optional(oneOf(RESTART_POLICIES, "restart_policy")),
  expose: v.optional(PlainObject),
});

export const ExtensionsSchema = v.array(ExtensionSchema);
