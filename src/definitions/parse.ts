/**
 * Text to value for definition files, with line:col on syntax errors.
 * JSON engines differ in whether their messages carry a position, so a small
 * scanner locates the first JSON syntax error itself. YAML uses the `yaml` package.
 */
import { LineCounter, parseDocument } from "yaml";
import { findInValue, findLoneSurrogate } from "../domain/json.ts";
import { codePoint, controlCharIn } from "../domain/text.ts";

/** `locate`: the line a JSON path's value starts on (or its nearest ancestor's); YAML only. */
export type ParseResult = { ok: true; value: unknown; locate?: (path: readonly (string | number)[]) => number | undefined } | { ok: false; errors: string[] };

class JsonSyntax extends Error {
  constructor(readonly offset: number, message: string) { super(message); }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function describeAt(text: string, i: number): string {
  return i >= text.length ? "end of file" : JSON.stringify(text[i]);
}

/**
 * Offset and message of the first JSON syntax error, or undefined when `text` is valid
 * JSON. Stricter than JSON.parse: a key repeated in one object and an unpaired UTF-16
 * surrogate escape are errors too.
 */
export function findJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => { throw new JsonSyntax(i, message); };
  const ws = (): void => { while (i < text.length && " \t\n\r".includes(text[i] as string)) i++; };
  const str = (): void => {
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail("unterminated string");
      else if (c === "\"") { i++; return; }
      else if (c === "\\") {
        const e = text[i + 1] ?? "";
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          const unit = parseInt(hex, 16);
          // a lone surrogate is no character: strict JSON readers refuse what echoes it
          const low = /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(text.slice(i + 6, i + 12));
          if ((unit >= 0xd800 && unit <= 0xdbff && !low) || (unit >= 0xdc00 && unit <= 0xdfff)) fail(`unpaired UTF-16 surrogate \\u${hex} (write the character itself, or a high and low surrogate pair)`);
          if (controlCharIn(String.fromCharCode(unit), true)) fail(controlMessage(codePoint(String.fromCharCode(unit))));
          i += unit >= 0xd800 && unit <= 0xdbff ? 12 : 6;
        }
        else if (e === "b" || e === "f") fail(controlMessage(codePoint(e === "b" ? "\b" : "\f")));
        else if ("\"\\/nrt".includes(e) && e !== "") i += 2;
        else fail(`bad escape \\${e}`);
      } else if (c < " ") fail("line break or control character inside a string (write \\n)");
      else if (c >= "\u007f" && c <= "\u009f") fail(controlMessage(codePoint(c)));
      else i++;
    }
  };
  const list = (close: string, item: () => void, what: string): void => {
    i++; ws();
    if (text[i] === close) { i++; return; }
    for (;;) {
      ws(); item(); ws();
      if (text[i] === ",") {
        i++; ws();
        if (text[i] === close) fail(`trailing comma before ${close}`);
      } else if (text[i] === close) { i++; return; }
      else fail(`expected "," or "${close}" in ${what}, found ${describeAt(text, i)}`);
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      const keys = new Set<string>();
      list("}", () => {
        if (text[i] !== "\"") fail(`expected a "quoted" key, found ${describeAt(text, i)}`);
        const at = i;
        str();
        const key = JSON.parse(text.slice(at, i)) as string;
        if (keys.has(key)) { i = at; fail(`duplicate key ${JSON.stringify(key)} (only its last value would count; keep one)`); }
        keys.add(key);
        ws();
        if (text[i] !== ":") fail(`expected ":" after the key, found ${describeAt(text, i)}`);
        i++; value();
      }, "an object");
    } else if (c === "[") list("]", value, "a list");
    else if (c === "\"") str();
    else if (c !== undefined && /[-0-9]/.test(c)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) fail("bad number");
      if (!Number.isFinite(Number((m as RegExpExecArray)[0]))) fail(`${(m as RegExpExecArray)[0]} is past the largest number (about 1.8e308)`);
      i += (m as RegExpExecArray)[0].length;
    } else {
      for (const lit of ["true", "false", "null"]) if (text.startsWith(lit, i)) { i += lit.length; return; }
      fail(`unexpected ${describeAt(text, i)}`);
    }
  };
  try {
    value(); ws();
    if (i < text.length) fail(`unexpected ${describeAt(text, i)} after the end of the JSON value`);
    return undefined;
  } catch (e) {
    if (e instanceof JsonSyntax) return { offset: e.offset, message: e.message };
    if (e instanceof RangeError) return { offset: i, message: `nested more than ${MAX_DEPTH} levels deep` };
    throw e;
  }
}

/** A control character (as "U+001B") in a definition: it would reach terminals, logs and the board raw. */
const controlMessage = (code: string): string =>
  `control character ${code} inside a string: definitions are text people read in terminals and on the board (tab and line breaks aside)`;

/**
 * What YAML lets through that a definition must not hold (JSON's scanner above finds the
 * same with line:col): a control character, or a number that is not finite (`.inf`).
 */
function findUnfitValue(value: unknown): { at: string; message: string } | undefined {
  const found = findInValue(value, (v, isKey) => {
    if (typeof v === "string") {
      const code = controlCharIn(v, !isKey);
      return code && controlMessage(code);
    }
    return typeof v === "number" && !Number.isFinite(v) ? `${v} is not a finite number` : undefined;
  });
  return found && { at: found.at, message: found.problem };
}

/** 1-based line and column of an offset. */
export function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, col: offset - before.lastIndexOf("\n") };
}

/**
 * How deep a definition file's values may nest. The deepest a valid file needs is about
 * eight (a board filter's `$and` of `$or`s); a file nested 200,000 deep overflowed the
 * stack of every check after parsing.
 */
export const MAX_DEPTH = 64;

/** True when `value` nests more than MAX_DEPTH objects or lists (walked without recursion). */
function tooDeep(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth >= MAX_DEPTH) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

const deepError = (kind: string): ParseResult =>
  ({ ok: false, errors: [`invalid ${kind}: values are nested more than ${MAX_DEPTH} levels deep`] });

/** Parses JSON text; a syntax error names line:col and the engine's message. */
export function parseJsonText(text: string): ParseResult {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (src.trim() === "") return { ok: false, errors: ["the file is empty: a definition file holds one JSON object ({...})"] };
  try {
    const value: unknown = JSON.parse(src);
    if (tooDeep(value)) return deepError("JSON");
    // what JSON.parse lets pass but a definition must not hold: repeated keys, lone surrogates
    const found = findJsonError(src);
    if (found) {
      const { line, col } = lineCol(src, found.offset);
      return { ok: false, errors: [`invalid JSON at ${line}:${col}: ${found.message}`] };
    }
    return { ok: true, value };
  } catch (e) {
    const engine = (e as Error).message;
    const found = findJsonError(src);
    if (!found) return { ok: false, errors: [`invalid JSON: ${engine}`] };
    const { line, col } = lineCol(src, found.offset);
    return { ok: false, errors: [`invalid JSON at ${line}:${col}: ${found.message} (${engine})`] };
  }
}

/** Parses YAML text; each syntax error names line:col. An empty document is null. */
export function parseYamlText(text: string): ParseResult {
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines });
  if (doc.errors.length > 0) {
    // a tab in a line's indentation sets off a cascade of parser errors, most not naming
    // tabs: say it once, with the first error the parser gave
    // only when the parser stumbled on that line or the next: a tab inside a block
    // scalar's text is legal, and an error elsewhere is not about it
    const first = doc.errors[0]?.linePos?.[0]?.line ?? 0;
    const tabbed = text.split("\n").findIndex((l, i) => /^[ \t]*\t[ \t]*\S/.test(l) && (i + 1 === first || i + 2 === first));
    const errs = tabbed >= 0 ? doc.errors.slice(0, 1) : doc.errors;
    return {
      ok: false,
      errors: [...(tabbed >= 0 ? [`invalid YAML at ${tabbed + 1}:1: line ${tabbed + 1} is indented with a tab; YAML indents with spaces only`] : []), ...errs.map((err) => {
        const pos = err.linePos?.[0];
        const where = pos ? ` at ${pos.line}:${pos.col}` : "";
        const msg = err.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? err.message;
        return `invalid YAML${where}: ${msg}`;
      })],
    };
  }
  try {
    // an alias bomb ("billion laughs") stops here, as a problem of the file
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (tooDeep(value)) return deepError("YAML");
    const at = findLoneSurrogate(value);
    if (at !== undefined) return { ok: false, errors: [`invalid YAML: unpaired UTF-16 surrogate at ${at || "the top"} (write the character itself, or a high and low surrogate pair)`] };
    const odd = findUnfitValue(value);
    if (odd) return { ok: false, errors: [`invalid YAML: ${odd.message} at ${odd.at || "the top"}`] };
    // a problem found in the value is told by line too: people count lines, not list items
    const locate = (path: readonly (string | number)[]): number | undefined => {
      for (let n = path.length; n >= 0; n--) {
        const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
        if (node?.range) return lines.linePos(node.range[0]).line;
      }
      return undefined;
    };
    return { ok: true, value, locate };
  } catch (e) {
    return { ok: false, errors: [`invalid YAML: ${(e as Error).message.split("\n")[0]} (aliases may expand at most 100 times)`] };
  }
}
