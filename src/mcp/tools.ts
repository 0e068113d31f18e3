/**
 * The tool registry: the fixed tools plus create_<type_id> / update_<type_id> per card
 * type, rebuilt whenever the definitions change. Calls are checked against the top level
 * of the input schema (unknown keys, required keys, JSON types); deeper rules are the
 * service's. Domain failures become tool results with isError and the SPEC envelope.
 */
import { CardsError, fromEnvironment, isCardsError, toEnvelope } from "../domain/errors.ts";
import type { Definitions } from "../domain/types.ts";
import { findLoneSurrogate, loneSurrogate } from "../domain/json.ts";
import { createCard, getCard, patchCard } from "../service/index.ts";
import { fixedTools, type Args, type CallContext, type Tool } from "./fixed.ts";
import { createTool, updateTool, type JsonSchema, type ToolSpec } from "./schemas.ts";

export interface ToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** A write through a tool server that started without an actor. */
export function noActor(): CardsError {
  return new CardsError("actor_required", "this tool server has no actor: writes are recorded under one and no tool takes one", {
    hint: "restart it with --actor (cards mcp --actor agent-1), CARDS_ACTOR in its environment, or settings.default_user in definitions/workspace.json; reads work meanwhile",
  });
}

export class ToolRegistry {
  readonly tools: Map<string, Tool>;
  readonly specs: ToolSpec[];

  constructor(defs: Definitions) {
    const fixed = fixedTools(defs);
    const all = [...fixed, ...typeTools(defs, new Set(fixed.map((t) => t.spec.name)))];
    this.tools = new Map(all.map((t) => [t.spec.name, t]));
    this.specs = all.map((t) => t.spec);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Runs a known tool; every failure, including bad arguments, is an isError result. */
  async call(name: string, args: unknown, c: CallContext, log: (m: string) => void): Promise<ToolResult> {
    const tool = this.tools.get(name)!;
    try {
      // as over HTTP: reads need no actor, a write without one is actor_required
      if (c.actor === undefined && tool.spec.annotations?.readOnlyHint !== true) throw noActor();
      const odd = findLoneSurrogate(args);
      if (odd !== undefined) throw loneSurrogate("arguments", odd);
      const a = checkArgs(tool.spec, args);
      return result(await tool.run(a, { ...c, actor: c.actor ?? "" }));
    } catch (caught) {
      const e = fromEnvironment(caught);
      if (!isCardsError(e)) log(`tool ${name} failed: ${String((e as Error)?.stack ?? e)}`);
      return { ...result(toEnvelope(e)), isError: true };
    }
  }
}

/**
 * create_<type_id> and update_<type_id> for every card type. A name a fixed tool has
 * (a card type "entry" would make update_entry) gets `_card` appended (again, while
 * another tool has that name), so nothing shadows anything: the fixed tools keep the
 * names the SPEC gives them.
 */
function typeTools(defs: Definitions, fixedNames: ReadonlySet<string>): Tool[] {
  const out: Tool[] = [];
  // every type's plain names first, so a type "entry_card" keeps update_entry_card and a
  // type "entry" moves on to update_entry_card_card
  const taken = new Set(fixedNames);
  for (const t of defs.cardTypes.keys()) for (const kind of ["create", "update"]) if (!fixedNames.has(`${kind}_${t}`)) taken.add(`${kind}_${t}`);
  const names = new Map<string, string>();
  const named = (kind: "create" | "update", typeId: string): string => {
    const plain = `${kind}_${typeId}`;
    if (!fixedNames.has(plain)) return plain;
    let name = names.get(plain);
    if (!name) {
      name = `${plain}_card`;
      while (taken.has(name)) name += "_card";
      taken.add(name);
      names.set(plain, name);
    }
    return name;
  };
  for (const type of defs.cardTypes.values()) {
    out.push({
      spec: { ...createTool(type, defs), name: named("create", type.id), annotations: { destructiveHint: false, openWorldHint: false } },
      run: (a, c) => createCard(c.svc, { type_id: type.id, ...a }, c),
    });
    out.push({
      spec: { ...updateTool(type, defs), name: named("update", type.id), annotations: { openWorldHint: false } },
      run: (a, c) => {
        const { card_id, ...body } = a;
        const card = getCard(c.svc, card_id);
        if (card.type_id !== type.id) {
          throw new CardsError("validation_failed", `card ${card_id} is a ${card.type_id}, not a ${type.id}`, {
            field: "card_id", value: card_id, hint: `use ${named("update", card.type_id)}`,
          });
        }
        return patchCard(c.svc, card_id, body, c);
      },
    });
  }
  return out;
}

function result(value: unknown): ToolResult {
  const structured = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value ?? null };
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/** Top-level checks against the tool's schema; the service validates what is inside. */
export function checkArgs(spec: ToolSpec, args: unknown): Args {
  if (args === undefined || args === null) args = {};
  if (typeof args !== "object" || Array.isArray(args)) throw new CardsError("validation_failed", "arguments must be a JSON object", { field: "arguments" });
  const a = args as Args;
  const props = (spec.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  for (const key of Object.keys(a)) {
    if (!Object.hasOwn(props, key)) {
      const inFields = Object.hasOwn((props.fields?.properties ?? {}) as object, key);
      throw new CardsError("validation_failed", `${spec.name}: unknown argument ${JSON.stringify(key)}`, {
        field: key, valid_options: Object.keys(props),
        ...(inFields ? { hint: `${key} is a field: pass it inside fields, as {"fields": {${JSON.stringify(key)}: ...}}` } : {}),
      });
    }
  }
  for (const key of (spec.inputSchema.required ?? []) as string[]) {
    if (a[key] === undefined || a[key] === null) {
      throw new CardsError("validation_failed", `${spec.name}: ${key} is required`, {
        field: key,
        ...(key === "version" ? { hint: "pass the card's current version (get_card shows it); a stale one is refused with the current card" } : {}),
        ...(key === "card_id" ? { hint: "pass the card's full id (card_...); search_cards finds it by words or a short id" } : {}),
      });
    }
  }
  // a top-level null is an argument not given (harnesses fill every declared key); the
  // tools would otherwise hand it on and the service refuse it ("expected string")
  const given: Args = {};
  for (const [key, raw] of Object.entries(a)) {
    if (raw === null || raw === undefined) continue;
    const want = props[key]!.type as string | undefined;
    // some harnesses send an object argument as its JSON text: take the object it holds
    const value = want === "object" && typeof raw === "string" ? objectInText(raw) ?? raw : raw;
    if (want && !typeMatches(want, value)) {
      throw new CardsError("validation_failed", `${spec.name}: ${key} must be ${want === "integer" ? "an integer" : want === "array" ? "an array" : `a ${want === "object" ? "JSON object" : want}`}`, {
        field: key, value,
        ...(want === "object" && typeof value === "string" ? { hint: `send ${key} as an object, e.g. {"status":"ready"} (or its JSON text)` } : {}),
      });
    }
    given[key] = value;
  }
  return given;
}

/** The object a string holds as JSON text (`'{"status":"ready"}'`), else undefined. */
function objectInText(text: string): Args | undefined {
  if (!text.trimStart().startsWith("{")) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Args) : undefined;
  } catch {
    return undefined;
  }
}

function typeMatches(want: string, v: unknown): boolean {
  switch (want) {
    case "string": return typeof v === "string";
    case "integer": return Number.isInteger(v);
    case "number": return typeof v === "number" && Number.isFinite(v);
    case "boolean": return typeof v === "boolean";
    case "array": return Array.isArray(v);
    case "object": return typeof v === "object" && v !== null && !Array.isArray(v);
    default: return true;
  }
}
