/**
 * Runs a valibot schema over one parsed file and turns its issues into
 * problems with JSON paths, readable messages and valid options.
 *
 * valibot's strictObject reports only the first unknown key of an object and
 * does not say which keys are allowed, so unknown keys are found here by
 * walking the schema next to the value instead (all of them, with the allowed
 * keys as valid_options), and valibot's own unknown-key issues are dropped.
 */
import * as v from "valibot";
import type { PathKey, Report } from "./problems.ts";
import { isPlainObject } from "./schemas.ts";
import { didYouMean } from "./suggest.ts";

type AnySchema = v.GenericSchema & {
  wrapped?: AnySchema; entries?: Record<string, AnySchema>; item?: AnySchema;
  key?: AnySchema; value?: AnySchema; options?: readonly unknown[];
  pipe?: ReadonlyArray<{ kind: string }>;
};
type Issue = v.BaseIssue<unknown>;

const WRAPPERS = new Set(["optional", "nullish", "exact_optional", "nullable", "non_optional", "non_nullable", "non_nullish", "undefinedable"]);

/** The schema that gives a value its shape: through optional() and through
 *  `pipe(unknown(), check(...), schema)` (schemas.ts `strict` and `dict`). */
function unwrap(s: AnySchema): AnySchema {
  let cur = s;
  for (;;) {
    if (WRAPPERS.has(cur.type) && cur.wrapped) cur = cur.wrapped;
    else if (cur.type === "unknown" && cur.pipe) {
      const inner = cur.pipe.filter((x) => x.kind === "schema").at(-1) as AnySchema | undefined;
      if (!inner || inner === cur || inner.type === "unknown") return cur;
      cur = inner;
    } else return cur;
  }
}

/** The sub-schema an issue path points at (for a record key: the key schema). */
function schemaAt(root: AnySchema, path: readonly v.IssuePathItem[]): AnySchema | undefined {
  let cur: AnySchema | undefined = root;
  for (const item of path) {
    if (!cur) return undefined;
    const s = unwrap(cur);
    const key = (item as { key: unknown }).key;
    if (s.type === "array") cur = s.item;
    else if (s.type === "record") cur = item.origin === "key" ? s.key : s.value;
    else if (s.entries && typeof key === "string") cur = s.entries[key];
    else return undefined;
  }
  return cur ? unwrap(cur) : undefined;
}

const EXPECTED: Record<string, string> = {
  string: "a string", number: "a number", boolean: "true or false", Object: "an object ({...})", Array: "a list ([...])",
};
const RECEIVED: Record<string, string> = { Object: "an object", Array: "a list" };

function described(received: string): string {
  return RECEIVED[received] ?? received;
}

function report1(issue: Issue, root: AnySchema, report: Report): void {
  const items = issue.path ?? [];
  const keys = items.map((p) => (p as { key: unknown }).key as PathKey);
  const last = items.at(-1);
  const custom = !issue.message.startsWith("Invalid ");
  if (issue.kind === "schema" && issue.type === "strict_object" && last?.origin === "key") {
    if (Array.isArray(last.input)) return report(keys.slice(0, -1), "must be an object ({...}), got a list");
    if (issue.expected === "never") return; // reported by unknownKeys with the allowed keys
    const options = schemaAt(root, items)?.options;
    return report(keys, `required key ${JSON.stringify(String(last.key))} is missing`, options ? [...options] : undefined);
  }
  if (issue.kind === "schema" && issue.type === "picklist") {
    const options = schemaAt(root, items)?.options;
    const msg = custom ? issue.message : `${issue.received} is not a valid option`;
    return report(keys, msg, options ? [...options] : undefined);
  }
  if (issue.kind === "schema" && !custom) {
    const want = EXPECTED[issue.expected ?? ""] ?? issue.expected ?? "another value";
    return report(keys, `must be ${want}, got ${described(issue.received)}`);
  }
  report(keys, issue.message);
}

/** Reports every key of `input` its schema does not declare, with the allowed keys. */
export function reportUnknownKeys(schema: v.GenericSchema, input: unknown, report: Report, keys: PathKey[] = []): void {
  const s = unwrap(schema as AnySchema);
  if (s.type === "strict_object" && s.entries && isPlainObject(input)) {
    const allowed = Object.keys(s.entries);
    for (const [k, val] of Object.entries(input)) {
      const sub = Object.hasOwn(s.entries, k) ? s.entries[k] : undefined;
      if (sub) reportUnknownKeys(sub, val, report, [...keys, k]);
      else report([...keys, k], `unknown key ${JSON.stringify(k)}${didYouMean(k, allowed)}; allowed keys: ${allowed.join(", ")}`, allowed);
    }
  } else if (s.type === "array" && s.item && Array.isArray(input)) {
    input.forEach((val, i) => reportUnknownKeys(s.item as AnySchema, val, report, [...keys, i]));
  } else if (s.type === "record" && s.value && isPlainObject(input)) {
    for (const [k, val] of Object.entries(input)) reportUnknownKeys(s.value, val, report, [...keys, k]);
  }
}

/**
 * Validates `input` against `schema`, reporting every problem. Returns the output
 * with defaults applied; when there were problems it is partial and untrusted.
 */
export function validateShape<S extends v.GenericSchema>(
  schema: S, input: unknown, report: Report,
): { ok: boolean; output: unknown } {
  const r = v.safeParse(schema, input, { abortEarly: false, abortPipeEarly: true });
  let ok = r.success;
  for (const issue of r.issues ?? []) report1(issue as Issue, schema as AnySchema, report);
  let unknown = 0;
  reportUnknownKeys(schema, input, (p, m, o) => { unknown++; report(p, m, o); });
  if (unknown > 0) ok = false;
  return { ok, output: r.output };
}
