/**
 * Parses argv against a citty ArgsDef (string, boolean, enum and positional args,
 * aliases, defaults, `--no-flag`, `--flag=value`, `--` ending the flags). Unknown flags
 * are rejected by the runner before this runs. Plain loops: this runs on every call, and
 * the first call of an array builtin costs more than the parse (docs/decisions.md).
 */
import type { ArgsDef } from "citty";
import { CardsError } from "../domain/errors.ts";

/** The words a boolean flag's `=value` may be (any case); anything else is a usage error. */
const BOOLEAN_WORDS = new Map([["true", true], ["false", false], ["1", true], ["0", false], ["yes", true], ["no", false]]);

export type ParsedArgs = Record<string, string | boolean | string[] | undefined> & { _: string[] };

export function parseCliArgs(argv: string[], def: ArgsDef, path: string): ParsedArgs {
  const out: ParsedArgs = { _: [] };
  const byFlag = new Map<string, string>();
  const positionals: string[] = [];
  for (const name in def) {
    const d = def[name]!;
    if (d.type === "positional") { positionals.push(name); continue; }
    byFlag.set(name, name);
    const alias = (d as { alias?: string | string[] }).alias;
    for (const a of alias === undefined ? [] : Array.isArray(alias) ? alias : [alias]) byFlag.set(a, name);
    if (d.default !== undefined) out[name] = d.default as string | boolean;
  }
  const free: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") { free.push(...argv.slice(i + 1)); break; }
    if (a === "-" || !a.startsWith("-") || /^-\d/.test(a)) { free.push(a); continue; }
    const body = a.replace(/^--?/, "");
    const eq = body.indexOf("=");
    let key = eq >= 0 ? body.slice(0, eq) : body;
    let negated = false;
    if (!byFlag.has(key) && key.startsWith("no-") && byFlag.has(key.slice(3))) { negated = true; key = key.slice(3); }
    const name = byFlag.get(key)!;
    const d = def[name]!;
    if (d.type === "boolean") {
      const v = eq >= 0 ? body.slice(eq + 1).toLowerCase() : undefined;
      // `--force=off` read as true moved a card past its transitions: only these words are read
      const value = v === undefined ? true : BOOLEAN_WORDS.get(v);
      if (negated && v !== undefined) {
        throw new CardsError("usage", `--no-${key} takes no value`, {
          field: `--no-${key}`, value: body.slice(eq + 1), hint: `write --no-${key}, or --${key}=${body.slice(eq + 1)}`,
        });
      }
      if (value === undefined) {
        throw new CardsError("usage", `--${key}=${body.slice(eq + 1)}: --${key} is a switch; its value can only be true or false (1 or 0, yes or no)`, {
          field: `--${key}`, value: body.slice(eq + 1), valid_options: ["true", "false"],
          hint: `write --${key} (or --${key}=true) to turn it on, --no-${key} (or --${key}=false) to turn it off`,
        });
      }
      out[name] = negated ? false : value;
      continue;
    }
    const value = eq >= 0 ? body.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new CardsError("usage", `--${key} needs a value`, { field: `--${key}`, hint: `see \`${path} --help\`` });
    if (d.type === "enum" && d.options && !d.options.includes(value)) {
      throw new CardsError("usage", `--${key} must be one of ${d.options.join(", ")}`, { field: `--${key}`, value, valid_options: d.options });
    }
    // a list flag given again adds to it (`--tags a --tags b` is `--tags a,b`): keeping
    // the last one dropped values a script had built one flag at a time
    const before = out[name];
    out[name] = seen.has(name) && typeof before === "string" && isListFlag(d) ? `${before},${value}` : value;
    seen.add(name);
  }
  out._ = free;
  if (free.length > positionals.length) {
    const last = positionals.length > 0 ? def[positionals[positionals.length - 1]!] : undefined;
    if (!(last as { variadic?: boolean } | undefined)?.variadic) throw unexpected(argv, free[positionals.length]!, def, path);
  }
  for (let i = 0; i < positionals.length; i++) {
    const name = positionals[i]!;
    const v = free[i] ?? (def[name]!.default as string | undefined);
    if (v === undefined && def[name]!.required) {
      throw new CardsError("usage", `missing ${name.toUpperCase()}: \`${path} ${positionals.map((p) => `<${p}>`).join(" ")}\``, { field: name, hint: `see \`${path} --help\`` });
    }
    // `cards cards get ""` read as GET /cards/ (the whole list): a script's unset variable
    if (v === "" && def[name]!.required) {
      throw new CardsError("usage", `${name.toUpperCase()} is empty`, { field: name, hint: "a shell variable that should hold it may be unset or empty" });
    }
    out[name] = v;
  }
  for (const name in def) {
    const d = def[name]!;
    if (d.type !== "positional" && d.required && out[name] === undefined) {
      throw new CardsError("usage", `--${name} is required`, { field: `--${name}`, hint: `see \`${path} --help\`` });
    }
  }
  return out;
}

/** A flag whose value is a comma-separated list (its help says so). */
function isListFlag(d: ArgsDef[string]): boolean {
  return d.description?.includes("comma-separated") === true;
}

/**
 * A word past the command's positionals: a usage error, never dropped (an agent that
 * wrote `comments add ID hello world` would store "hello" and never know).
 */
function unexpected(argv: string[], word: string, def: ArgsDef, path: string): CardsError {
  const at = argv.indexOf(word);
  const before = at > 0 ? argv[at - 1]!.replace(/^--?/, "") : "";
  const flag = before && def[before]?.type === "boolean" ? before : undefined;
  const takesWords = Object.values(def).some((d) => d.type === "positional");
  // `cards dump FILE`: a command that takes no words names its file with a flag
  const fileFlag = !takesWords ? ["out", "in"].find((f) => def[f] !== undefined && def[f]!.type === "string") : undefined;
  const hint = flag && ["true", "false", "0", "1", "yes", "no"].includes(word)
    ? `--${flag} takes no value: write --${flag}=${word} or --no-${flag}`
    : fileFlag ? `${path} takes no arguments: name the file with --${fileFlag} ${word}`
    : !takesWords ? `${path} takes no arguments, only flags; see \`${path} --help\``
    : `quote a value that holds spaces; see \`${path} --help\``;
  return new CardsError("usage", `unexpected argument ${JSON.stringify(word)} for ${path}`, { value: word, hint });
}
