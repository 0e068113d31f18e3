/**
 * Hand-written validation of a card's `fields` object against its CardType and the
 * workspace settings (SPEC "Field types and validation", "Multi-value rules").
 * valibot is not used here on purpose (stack.md §3): the SPEC error codes
 * (`unknown_enum`, `unknown_tag`, `unknown_field`) carry `valid_options`, `null`/`[]`
 * remove keys, and `strict_fields: false` stores unknown keys.
 *
 * Pure: existence checks (card_link targets) are returned as `refs` for the service.
 *
 * Error order is deterministic: fields in type-definition order, then unknown keys in
 * key order; the first problem found is thrown.
 */
import { CardsError, unknownEnum } from "./errors.ts";
import { FIELD_KEY_PATTERN, ME } from "./ids.ts";
import { isRfc3339Shape, parseRfc3339, storedTime } from "./rfc3339.ts";
import type { CardType, FieldDef, WorkspaceSettings } from "./types.ts";
import { controlCharIn, hasLineBreak, sameText, storedTag } from "./text.ts";
import { isMediaType } from "./media-type.ts";

/**
 * DECISIONS "Size limits": one field value (for repeating fields: one entry) in UTF-8
 * bytes: a string's own bytes (as title and comment bodies are counted), any other value's
 * JSON text.
 */
export const MAX_FIELD_VALUE_BYTES = 256 * 1024;
/** DECISIONS "Size limits": the title, UTF-8 bytes after trimming. */
export const MAX_TITLE_BYTES = 1024;
/** Keys a `fields` object may hold (also what `fields.<id>` in filters and sort accepts). */
export { FIELD_KEY_PATTERN, parseRfc3339 };

/**
 * The one form of a `local` artifact uri: `artifacts/sha256/<first 2 hex>/<64 hex>`,
 * lowercase hex, the 2-hex folder equal to the first two characters of the digest.
 * It is relative to `{base_url}/v1/`, so `GET /v1/<uri>` (the `GET /artifacts/{path}`
 * route) returns the bytes, and it names the same file under `.cards/` on disk.
 * Anything else (absolute paths, `..`, backslashes, other folders) is rejected.
 */
export const LOCAL_ARTIFACT_PREFIX = "artifacts/sha256/";
const LOCAL_ARTIFACT_RE = /^artifacts\/sha256\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

/** artifact_policy when a field declares none: uploaded bytes in the workspace store. */
export const DEFAULT_ARTIFACT_POLICY = "local";

/** True for an artifact field whose bytes are uploaded and kept here (not one that only names a URI). */
export function storesBytes(f: Pick<FieldDef, "type" | "artifact_policy">): boolean {
  return f.type === "artifact" && (f.artifact_policy ?? DEFAULT_ARTIFACT_POLICY) === "local";
}

export interface CardRef { field: string; id: string; target_type?: string }
export interface UserRef { field: string; id: string }
/**
 * What the service still has to check against the store. `users` stays empty: the
 * SPEC applies the user-existence check to `owner` only; user-typed fields are only
 * type-checked.
 */
export interface FieldRefs { cards: CardRef[]; users: UserRef[] }

export interface FieldsResult {
  /** the merged, normalised `fields` object to store */
  fields: Record<string, unknown>;
  refs: FieldRefs;
}

export interface ValidateFieldsInput {
  type: CardType;
  settings: WorkspaceSettings;
  tagSet: readonly string[];
  fields: Record<string, unknown>;
  mode: "create" | "patch";
  /** patch: the card's current fields; given keys are merged over them */
  existing?: Record<string, unknown>;
  /** create: supplies the `entry_id` of each repeating entry (the caller owns randomness) */
  makeEntryId?: () => string;
  /** the writer: a user-typed value "me" is stored as this id (as owner "me" is) */
  actor?: string;
}

export interface EntryResult {
  /** the normalised entry, without `entry_id` (the caller sets it) */
  entry: Record<string, unknown>;
  refs: FieldRefs;
}

/**
 * Validate `input.fields` and return the object to store.
 *
 * create: absent (or null) fields take their `default`; `required` fields must then be
 * present and non-empty. patch: only the given keys are checked and merged over
 * `existing`; `null` removes a key; repeating fields are refused (entry endpoints only).
 * Array-valued fields (multiple enum/user, tags, repeating) given as `[]` are removed.
 *
 * @throws CardsError unknown_field | unknown_enum | unknown_tag | validation_failed | payload_too_large
 * @example validateFields({ type, settings, tagSet, fields: { priority: "high" }, mode: "create", makeEntryId })
 */
export function validateFields(input: ValidateFieldsInput): FieldsResult {
  const { type, mode } = input;
  const given = input.fields;
  if (!_isPlainObject(given)) throw _invalid("fields", "fields must be a JSON object", given);
  const ctx: _Ctx = { settings: input.settings, tagSet: input.tagSet, refs: _emptyRefs(), makeEntryId: input.makeEntryId, actor: input.actor };
  const out: Record<string, unknown> = {};
  if (mode === "patch" && input.existing) for (const [k, v] of Object.entries(input.existing)) _set(out, k, v);

  const known = new Set<string>();
  for (const def of type.fields) {
    known.add(def.id);
    const has = Object.hasOwn(given, def.id);
    if (mode === "patch") {
      if (!has) continue;
      if (def.type === "repeating") {
        // a value stored before the field became repeating is no list of entries: the
        // entry endpoints refuse to touch it, so PATCH may clear it (its events keep it)
        const stored = input.existing?.[def.id];
        if (given[def.id] === null && stored !== undefined && !isEntryList(stored)) {
          delete out[def.id];
          continue;
        }
        throw _invalid(def.id, `${def.id} is a repeating field and cannot be set through PATCH`, given[def.id], _entryHint(def.id));
      }
      const v = given[def.id];
      if (v === null || _isEmptyArrayFor(def, v)) {
        if (def.required) throw _invalid(def.id, `${def.id} is required and cannot be removed`, v);
        delete out[def.id];
        continue;
      }
      if (v === "" && def.required) throw _required(def.id, v);
      _set(out, def.id, _checkField(def, v, def.id, ctx));
      continue;
    }
    let v: unknown = has ? given[def.id] : undefined;
    if (v === null) v = undefined;
    if (v === undefined && def.default !== undefined) v = _defaultFor(def, ctx);
    if (v === undefined || _isEmptyArrayFor(def, v)) {
      if (def.required) throw _required(def.id, v);
      continue;
    }
    if (v === "" && def.required) throw _required(def.id, v);
    _set(out, def.id, _checkField(def, v, def.id, ctx));
  }

  for (const key of Object.keys(given)) {
    if (known.has(key)) continue;
    const v = given[key];
    if (key === "title" || key === "status") {
      throw _invalid(key, `${key} is a card property, not a field`, v, `send "${key}" at the top level of the request body`);
    }
    if (mode === "patch" && v === null && input.existing && Object.hasOwn(input.existing, key)) {
      delete out[key]; // removing a stale key is always allowed
      continue;
    }
    if (input.settings.strict_fields) {
      throw new CardsError("unknown_field", `${JSON.stringify(key)} is not a field of card type ${type.id}`, {
        field: key, value: v, valid_options: type.fields.map((f) => f.id),
      });
    }
    if (!FIELD_KEY_PATTERN.test(key)) {
      throw _invalid(key, `field keys must match ${FIELD_KEY_PATTERN.source}`, key);
    }
    if (v === null) { delete out[key]; continue; }
    _assertSize(key, v);
    _set(out, key, v);
  }
  return { fields: out, refs: ctx.refs };
}

/**
 * Validate one entry of repeating field `fieldId` for the entry endpoints.
 * append: item defaults apply, required item fields must be present.
 * update: the given keys are merged over `existingEntry`; null removes a key.
 * `entry_id` in the input is ignored; the returned entry has none. `refs.cards` lists
 * card_link item values for the service to check. `opts` gives the workspace tag
 * settings for tags-typed item fields (default: locked with an empty tag_set).
 *
 * @throws CardsError unknown_field (unknown field or item key) | validation_failed | ...
 */
export function validateEntry(
  type: CardType, fieldId: string, entry: unknown, mode: "append" | "update",
  existingEntry?: Record<string, unknown>,
  opts: { settings?: Pick<WorkspaceSettings, "tag_policy">; tagSet?: readonly string[]; actor?: string } = {},
): EntryResult {
  const def = type.fields.find((f) => f.id === fieldId);
  const repeating = type.fields.filter((f) => f.type === "repeating").map((f) => f.id);
  // a type without repeating fields takes no entries at all: say so, not "one of []"
  const none = repeating.length === 0 ? ` (card type ${type.id} has no repeating field; record results in its fields)` : "";
  if (!def) {
    throw new CardsError("unknown_field", `${JSON.stringify(fieldId)} is not a field of card type ${type.id}${none}`, {
      field: fieldId, value: fieldId, valid_options: repeating,
    });
  }
  if (def.type !== "repeating") {
    throw new CardsError("validation_failed", `${fieldId} is ${/^[aeiou]/.test(def.type) ? "an" : "a"} ${def.type} field, not a repeating field${none}`, {
      field: fieldId, value: fieldId, valid_options: repeating,
      hint: `set it as a field value with an update (CLI: cards cards patch ID --version N --fields '{"${fieldId}": ...}'; HTTP: PATCH /cards/{id}; tools: update_${type.id})`,
    });
  }
  const ctx: _Ctx = {
    settings: opts.settings ?? { tag_policy: "locked" }, // the SPEC default: safe when the caller passes none
    tagSet: opts.tagSet ?? [], refs: _emptyRefs(), actor: opts.actor,
  };
  const normalised = _checkEntry(def, entry, fieldId, ctx, mode, existingEntry);
  delete normalised.entry_id;
  _assertSize(fieldId, normalised);
  return { entry: normalised, refs: ctx.refs };
}

/**
 * A title as stored: a string, trimmed, non-empty, one line, at most 1 KiB.
 * @throws CardsError validation_failed | payload_too_large (field "title")
 */
export function validateTitle(title: unknown): string {
  if (typeof title !== "string") throw _invalid("title", "title must be a string", title);
  const t = title.trim();
  if (t === "") throw _invalid("title", "title is required and must not be blank", title);
  if (hasLineBreak(t)) throw _invalid("title", "title must be a single line", title);
  // NUL, tab, escape, CSI and the like break terminals, shells and C string readers of a title
  const control = controlCharIn(t);
  if (control) throw _invalid("title", `title holds a control character (${control}): a title is one line of text`, title);
  if (_utf8Length(t) > MAX_TITLE_BYTES) {
    throw new CardsError("payload_too_large", `title is longer than ${MAX_TITLE_BYTES} bytes`, {
      field: "title", hint: `shorten the title to at most ${MAX_TITLE_BYTES} bytes; put details in a text field`,
    });
  }
  return t;
}

/**
 * Card `tags` (and tags-typed fields): an array of distinct non-empty single-line
 * strings; under `tag_policy: locked` each must be in the workspace tag_set.
 * @throws CardsError validation_failed | unknown_tag
 */
export function validateTags(
  tags: unknown, settings: Pick<WorkspaceSettings, "tag_policy">, tagSet: readonly string[], field = "tags",
): string[] {
  if (!Array.isArray(tags)) throw _invalid(field, `${field} must be an array of strings`, tags);
  const seen = new Set<string>();
  for (const given of tags) {
    if (typeof given !== "string" || given === "" || hasLineBreak(given)) {
      throw _invalid(field, "each tag must be a non-empty single-line string", given);
    }
    const control = controlCharIn(given);
    if (control) throw _invalid(field, `tag ${JSON.stringify(given)} holds a control character (${control})`, given);
    // one tag in one Unicode form: tag_set's, else the composed one (NFC), so a decomposed
    // "é" neither misses tag_set nor makes a second tag that looks the same
    const t = storedTag(given, tagSet);
    if (seen.has(t)) throw _invalid(field, `duplicate tag ${JSON.stringify(given)}`, given);
    seen.add(t);
    if (settings.tag_policy === "locked" && !tagSet.includes(t)) {
      throw new CardsError("unknown_tag", `${JSON.stringify(t)} is not in the workspace tag_set`, {
        field, value: t, valid_options: [...tagSet],
        hint: "tag_policy is locked: add the tag to tag_set in workspace.json, or pick one of valid_options",
      });
    }
  }
  return [...seen];
}

/** True for exactly `artifacts/sha256/<2 hex>/<64 hex>` with matching folder (LOCAL_ARTIFACT_PREFIX). */
export function isLocalArtifactUri(uri: string): boolean {
  return localArtifactDigest(uri) !== undefined;
}

/** The sha256 hex digest a local artifact uri names, or undefined when it is not one. */
export function localArtifactDigest(uri: string): string | undefined {
  const m = LOCAL_ARTIFACT_RE.exec(uri);
  return m && m[2]!.startsWith(m[1]!) ? m[2] : undefined;
}

/** A local artifact uri a write names, at `field` (`output`, `evidence[0].file`, `evidence.file`). */
export interface ArtifactRef { field: string; uri: string; sha256: string; item: boolean }

/**
 * The local artifact uris in `values` (a card's fields, entries of its repeating fields
 * included; or one entry's item fields when `defs` are the item fields), with their
 * paths as validation names them: SPEC says such a uri must resolve inside the workspace
 * artifact store, which the service checks (the bytes must be there). Values of other
 * shapes are left to validation.
 */
export function localArtifactRefs(defs: readonly FieldDef[], values: Record<string, unknown>, prefix = ""): ArtifactRef[] {
  const out: ArtifactRef[] = [];
  for (const def of defs) {
    const v = Object.hasOwn(values, def.id) ? values[def.id] : undefined;
    if (def.type === "repeating" && def.item_fields && Array.isArray(v)) {
      v.forEach((entry, i) => { if (_isPlainObject(entry)) out.push(...localArtifactRefs(def.item_fields!, entry, `${prefix}${def.id}[${i}].`)); });
      continue;
    }
    if (def.type !== "artifact") continue;
    const uri = _isPlainObject(v) ? v.uri : undefined;
    const digest = typeof uri === "string" ? localArtifactDigest(uri) : undefined;
    if (digest !== undefined) out.push({ field: `${prefix}${def.id}`, uri: uri as string, sha256: digest, item: prefix !== "" });
  }
  return out;
}

/** The local artifact uri for a sha256 hex digest (lowercased). */
export function localArtifactUri(sha256: string): string {
  const h = sha256.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(h)) throw new Error(`not a sha256 hex digest: ${sha256}`);
  return `${LOCAL_ARTIFACT_PREFIX}${h.slice(0, 2)}/${h}`;
}

// --- internal ---

interface _Ctx {
  settings: Pick<WorkspaceSettings, "tag_policy">;
  tagSet: readonly string[];
  refs: FieldRefs;
  makeEntryId?: () => string;
  actor?: string;
}

/** card_link values: the SPEC form `card_<hex>`, any length (ids.ts generates 16 hex; restored ids are kept). */
const _CARD_LINK_RE = /^card_[0-9a-f]+$/;
const _ARTIFACT_KEYS = ["uri", "mime", "size", "sha256"];
const _SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

function _emptyRefs(): FieldRefs { return { cards: [], users: [] }; }

/** A repeating field's stored value: entry objects, each with its string `entry_id`. */
export function isEntryList(v: unknown): v is Array<Record<string, unknown> & { entry_id: string }> {
  return Array.isArray(v) && v.every((e) => _isPlainObject(e) && typeof e.entry_id === "string");
}

function _isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Own-property assignment that is safe for any key (no `__proto__` setter). */
function _set(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function _isArrayValued(def: FieldDef): boolean {
  return def.type === "tags" || def.type === "repeating" || (def.multiple === true && (def.type === "enum" || def.type === "user"));
}

function _isEmptyArrayFor(def: FieldDef, v: unknown): boolean {
  return _isArrayValued(def) && Array.isArray(v) && v.length === 0;
}

function _invalid(field: string, message: string, value?: unknown, hint?: string, validOptions?: readonly unknown[]): CardsError {
  const extra: ConstructorParameters<typeof CardsError>[2] = { field };
  if (value !== undefined) extra.value = value;
  if (hint !== undefined) extra.hint = hint;
  if (validOptions !== undefined) extra.valid_options = [...validOptions];
  return new CardsError("validation_failed", message, extra);
}

function _required(field: string, value: unknown): CardsError {
  return _invalid(field, `${field} is required`, value, `give ${field} a non-empty value`);
}

function _entryHint(field: string): string {
  return `change entries one by one: the append_entry, update_entry and remove_entry tools; \`cards cards entries append|update|remove\`; `
    + `POST /cards/{id}/fields/${field}/append, PATCH or DELETE /cards/{id}/fields/${field}/{entry_id}`;
}

function _utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

function _assertSize(field: string, v: unknown): void {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  if (text !== undefined && _utf8Length(text) > MAX_FIELD_VALUE_BYTES) {
    throw new CardsError("payload_too_large", `${field} is larger than ${MAX_FIELD_VALUE_BYTES} bytes${typeof v === "string" ? "" : " as JSON"}`, {
      field, hint: "store large content as an artifact (CLI: cards cards artifacts put ID FIELD FILE; HTTP: POST /cards/{id}/artifacts/{field}; tools: attach_artifact) and keep the reference",
    });
  }
}

/**
 * The refusal a create would give `value` as this field's value (a `default`, a migration's
 * field default), or undefined when it would take it: the load check of definitions asks
 * the same code that applies the value, so a set that loads never refuses every create.
 * `lockedTags`: the tag_set when tag_policy is locked (undefined: tags are open).
 */
export function refusalOfValue(def: FieldDef, value: unknown, lockedTags?: readonly string[]): { message: string; valid_options?: string[] } | undefined {
  const ctx: _Ctx = { settings: { tag_policy: lockedTags ? "locked" : "open" }, tagSet: lockedTags ?? [], refs: _emptyRefs(), makeEntryId: () => "ent_0" };
  try {
    _checkField(def, value, def.id, ctx);
    return undefined;
  } catch (e) {
    if (!(e instanceof CardsError)) throw e;
    const options = e.extra.valid_options;
    return { message: e.message, ...(Array.isArray(options) ? { valid_options: options.map(String) } : {}) };
  }
}

/** Validate and normalise one present, non-null value of a top-level field or an item field. */
function _checkField(def: FieldDef, v: unknown, path: string, ctx: _Ctx): unknown {
  if (def.type !== "repeating") _assertSize(path, v);
  switch (def.type) {
    case "string":
      if (typeof v !== "string") throw _invalid(path, `${path} must be a string`, v);
      if (/[\r\n]/.test(v)) throw _invalid(path, `${path} must be a single line`, v, "use a text field for multi-line content");
      return v;
    case "text":
      if (typeof v !== "string") throw _invalid(path, `${path} must be a string`, v);
      return v;
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) {
        const quoted = typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v));
        throw _invalid(path, quoted ? `${path} must be a number, not a string: write ${v.trim()} without quotes` : `${path} must be a finite number`, v);
      }
      if (def.min !== undefined && v < def.min) throw _invalid(path, `${path} must be >= min ${def.min}`, v);
      if (def.max !== undefined && v > def.max) throw _invalid(path, `${path} must be <= max ${def.max}`, v);
      return v;
    case "date": return _checkDate(def, v, path);
    case "enum": return def.multiple ? _checkMulti(def, v, path, _checkEnumValue) : _checkSingle(def, v, path, _checkEnumValue);
    case "user": {
      // "me" names the writer, as in owner and in filters: stored literally, no filter
      // could find it again ("me" is no user id: it is reserved)
      const me = ctx.actor;
      const check: _ElemCheck = me === undefined ? _checkUserValue : (d, x, p) => (x === ME ? me : _checkUserValue(d, x, p));
      return def.multiple ? _checkMulti(def, v, path, check) : _checkSingle(def, v, path, check);
    }
    case "tags": return validateTags(v, ctx.settings, ctx.tagSet, path);
    case "card_link":
      if (typeof v !== "string" || !_CARD_LINK_RE.test(v)) {
        throw _invalid(path, `${path} must be a card id (card_<hex>)`, v);
      }
      ctx.refs.cards.push(def.target_type !== undefined ? { field: path, id: v, target_type: def.target_type } : { field: path, id: v });
      return v;
    case "repeating": return _checkRepeating(def, v, path, ctx);
    case "artifact": return _checkArtifact(def, v, path);
  }
  throw _invalid(path, `${path} has an unsupported field type ${JSON.stringify(def.type)}`, v);
}

function _checkDate(def: FieldDef, v: unknown, path: string): string {
  const ms = typeof v === "string" ? parseRfc3339(v) : undefined;
  if (ms === undefined) {
    // the right shape, but no such day or time (2025-02-30, 24:00, a leap second)
    const why = typeof v !== "string" || !isRfc3339Shape(v)
      ? `${path} must be an RFC 3339 timestamp with a time zone`
      : /T\d\d:\d\d:60/i.test(v)
        ? `${path}: ${JSON.stringify(v)} is a leap second, which a date field cannot hold (it stores instants as JavaScript and SQLite count them)`
        : `${path}: ${JSON.stringify(v)} is no such date and time`;
    throw _invalid(path, why, v, "for example 2026-01-02T03:04:05Z or 2026-01-02T05:04:05+02:00");
  }
  const secs = ms / 1000;
  if (def.min !== undefined && secs < def.min) {
    throw _invalid(path, `${path} must not be before min ${new Date(def.min * 1000).toISOString()} (${def.min} Unix seconds)`, v);
  }
  if (def.max !== undefined && secs > def.max) {
    throw _invalid(path, `${path} must not be after max ${new Date(def.max * 1000).toISOString()} (${def.max} Unix seconds)`, v);
  }
  // one form for every value (UTC, milliseconds), so dates order by time in filters and
  // sorts, which compare them as text (docs/filters.md)
  const stored = storedTime(ms);
  if (stored === undefined) {
    throw _invalid(path, `${path}: ${JSON.stringify(v)} is outside the years 0000-9999 once in UTC, which a date field stores`, v, "for example 2026-01-02T03:04:05Z or 2026-01-02T05:04:05+02:00");
  }
  return stored;
}

type _ElemCheck = (def: FieldDef, v: unknown, path: string) => string;

function _checkEnumValue(def: FieldDef, v: unknown, path: string): string {
  const options = def.options ?? [];
  if (typeof v !== "string") throw _invalid(path, `${path} values are strings`, v, undefined, options);
  if (!options.includes(v)) {
    // the same letters in another Unicode form (a decomposed "é") are that option
    const same = sameText(options, v);
    if (same !== undefined) return same;
    throw unknownEnum(path, v, options);
  }
  return v;
}


/**
 * A field's default as the writer's value. A multiple user default naming "me" beside a
 * user (`["me", "ada"]`) is that set for the writer: written by ada, `["ada"]` (a value the
 * writer gives twice is refused; a default says who is in the set, once each).
 */
function _defaultFor(def: FieldDef, ctx: _Ctx): unknown {
  const v = structuredClone(def.default);
  if (def.type !== "user" || !def.multiple || ctx.actor === undefined || !Array.isArray(v)) return v;
  return [...new Set(v.map((x) => (x === ME ? ctx.actor : x)))];
}

function _checkUserValue(_def: FieldDef, v: unknown, path: string): string {
  if (typeof v !== "string" || v.trim() === "" || /[\r\n]/.test(v)) throw _invalid(path, `${path} must be a user id (a non-empty string)`, v);
  return v;
}

function _checkSingle(def: FieldDef, v: unknown, path: string, check: _ElemCheck): string {
  if (Array.isArray(v)) throw _invalid(path, `${path} holds one value, not an array`, v, undefined, def.options);
  return check(def, v, path);
}

function _checkMulti(def: FieldDef, v: unknown, path: string, check: _ElemCheck): string[] {
  if (!Array.isArray(v)) {
    throw _invalid(path, `${path} is a multiple field: give an array of strings`, v, `for example {"${path}": [${JSON.stringify(v)}]}`, def.options);
  }
  const seen = new Set<string>();
  for (const e of v) {
    const s = check(def, e, path);
    if (seen.has(s)) throw _invalid(path, `duplicate value ${JSON.stringify(s)} in ${path}`, s);
    seen.add(s);
  }
  return [...seen];
}

function _checkRepeating(def: FieldDef, v: unknown, path: string, ctx: _Ctx): Array<Record<string, unknown>> {
  if (!Array.isArray(v)) throw _invalid(path, `${path} is a repeating field: give an array of entry objects`, v);
  if (!ctx.makeEntryId) throw new Error("validateFields: makeEntryId is required to create repeating entries");
  return v.map((raw, i) => {
    const at = `${path}[${i}]`;
    const body = _checkEntry(def, raw, at, ctx, "append");
    _assertSize(at, body);
    const entry: Record<string, unknown> = { entry_id: ctx.makeEntryId!() };
    for (const [k, val] of Object.entries(body)) if (k !== "entry_id") _set(entry, k, val);
    return entry;
  });
}

function _checkEntry(
  def: FieldDef, raw: unknown, path: string, ctx: _Ctx, mode: "append" | "update", existing?: Record<string, unknown>,
): Record<string, unknown> {
  if (!_isPlainObject(raw)) throw _invalid(path, `${path} entries are JSON objects`, raw);
  const items = def.item_fields ?? [];
  const out: Record<string, unknown> = {};
  if (mode === "update" && existing) for (const [k, val] of Object.entries(existing)) _set(out, k, val);
  for (const item of items) {
    const at = `${path}.${item.id}`;
    if (item.type === "repeating") throw _invalid(at, "repeating fields cannot be nested", raw[item.id]);
    const has = Object.hasOwn(raw, item.id);
    if (mode === "update") {
      if (!has) continue;
      const val = raw[item.id];
      if (val === null) {
        if (item.required) throw _invalid(at, `${at} is required and cannot be removed`, val);
        delete out[item.id];
        continue;
      }
      if (val === "" && item.required) throw _required(at, val);
      _set(out, item.id, _checkField(item, val, at, ctx));
      continue;
    }
    let val: unknown = has ? raw[item.id] : undefined;
    if (val === null) val = undefined;
    if (val === undefined && item.default !== undefined) val = _defaultFor(item, ctx);
    if (val === undefined || _isEmptyArrayFor(item, val)) {
      if (item.required) throw _required(at, val);
      continue;
    }
    if (val === "" && item.required) throw _required(at, val);
    _set(out, item.id, _checkField(item, val, at, ctx));
  }
  const known = new Set(items.map((f) => f.id));
  for (const key of Object.keys(raw)) {
    if (known.has(key) || key === "entry_id") continue;
    // a key the item fields no longer declare may be cleared from an entry that holds it
    // (as PATCH clears a removed top-level field), never set
    if (mode === "update" && raw[key] === null && existing && Object.hasOwn(existing, key)) {
      delete out[key];
      continue;
    }
    throw new CardsError("unknown_field", `${JSON.stringify(key)} is not an item field of ${def.id}`, {
      field: `${path}.${key}`, value: raw[key], valid_options: items.map((f) => f.id),
    });
  }
  return out;
}

function _checkArtifact(def: FieldDef, v: unknown, path: string): Record<string, unknown> {
  if (!_isPlainObject(v)) throw _invalid(path, `${path} must be an object {uri, mime?, size?, sha256?}`, v);
  for (const key of Object.keys(v)) {
    if (!_ARTIFACT_KEYS.includes(key)) {
      throw new CardsError("unknown_field", `${JSON.stringify(key)} is not an artifact key`, {
        field: `${path}.${key}`, value: v[key], valid_options: [..._ARTIFACT_KEYS],
      });
    }
  }
  const { uri, mime, size, sha256 } = v;
  if (typeof uri !== "string" || uri === "") throw _invalid(`${path}.uri`, "artifact uri is required and must be a string", uri);
  const policy = def.artifact_policy ?? DEFAULT_ARTIFACT_POLICY;
  const top = path.split(/[.[]/)[0];
  const uploadHint = `upload the bytes (CLI: cards cards artifacts put ID ${top} FILE; HTTP: POST /cards/{id}/artifacts/${top}; tools: attach_artifact); the field then holds a ${LOCAL_ARTIFACT_PREFIX}... uri`;
  const digest = localArtifactDigest(uri);
  if (digest === undefined) {
    if (policy === "uri" && _SCHEME_RE.test(uri)) {
      // any absolute URI (it has a scheme)
    } else if (_looksLikeTraversal(uri)) {
      throw _invalid(`${path}.uri`, "artifact uri must stay inside the workspace artifact store (no '..', backslashes or absolute paths)", uri, uploadHint);
    } else if (policy === "uri") {
      throw _invalid(`${path}.uri`, "artifact uri must be an absolute URI with a scheme, or a local artifact uri", uri);
    } else {
      throw _invalid(`${path}.uri`, `artifact policy is local: uri must be ${LOCAL_ARTIFACT_PREFIX}<2 hex>/<64 hex sha256>`, uri, uploadHint);
    }
  }
  const out: Record<string, unknown> = { uri };
  if (mime !== undefined) {
    if (typeof mime !== "string" || !isMediaType(mime)) throw _invalid(`${path}.mime`, "mime must be a media type such as text/plain", mime);
    out.mime = mime;
  }
  if (size !== undefined) {
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
      throw _invalid(`${path}.size`, "size must be a non-negative integer (bytes)", size);
    }
    out.size = size;
  }
  if (sha256 !== undefined) {
    if (typeof sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(sha256)) {
      throw _invalid(`${path}.sha256`, "sha256 must be 64 hex characters", sha256);
    }
    const h = sha256.toLowerCase();
    if (digest !== undefined && h !== digest) throw _invalid(`${path}.sha256`, "sha256 does not match the digest in the local uri", sha256);
    out.sha256 = h;
  }
  return out;
}

function _looksLikeTraversal(uri: string): boolean {
  return uri.includes("..") || uri.includes("\\") || uri.startsWith("/") || /^[A-Za-z]:/.test(uri)
    || /%2e|%2f|%5c/i.test(uri) || uri.includes("\0");
}
