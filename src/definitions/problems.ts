/**
 * Collecting definition problems. Every check reports into a `Problems` list and
 * keeps going, so one load shows everything that is wrong at once.
 */
import { escapeControls } from "../domain/text.ts";
import { CardsError, type DefinitionProblem } from "../domain/errors.ts";

/** One step of a JSON path: an object key or an array index. */
export type PathKey = string | number;

/** Renders a key list as a JSON path: `fields[2].options`, `migrations["2"].from`. */
export function jsonPath(keys: readonly PathKey[]): string {
  let out = "";
  for (const k of keys) {
    if (typeof k === "number") out += `[${k}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(k)) out += out === "" ? k : `.${k}`;
    else out += `[${JSON.stringify(k)}]`;
  }
  return out;
}

/** Reports problems for one file, at paths relative to that file's root value. */
export type Report = (path: readonly PathKey[], message: string, validOptions?: readonly unknown[]) => void;

/** An ordered, de-duplicated list of problems. */
export class Problems {
  readonly items: DefinitionProblem[] = [];
  private readonly seen = new Set<string>();
  private readonly locators = new Map<string, (path: readonly PathKey[]) => number | undefined>();

  /** Problems of `file` found at a JSON path also get the line it starts on (the YAML extensions file). */
  locate(file: string, locator: (path: readonly PathKey[]) => number | undefined): void {
    this.locators.set(file, locator);
  }

  /** Adds one problem; an identical (file, path, message) is kept once. */
  add(file: string, path: readonly PathKey[] | string, message: string, validOptions?: readonly unknown[]): void {
    const p = typeof path === "string" ? path : jsonPath(path);
    const key = `${file}\0${p}\0${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const problem: DefinitionProblem = { file, path: p, message };
    const line = typeof path === "string" ? undefined : this.locators.get(file)?.(path);
    if (line !== undefined) problem.line = line;
    // each option once, even when a duplicated id was collected twice
    if (validOptions !== undefined) problem.valid_options = [...new Set(validOptions)];
    this.items.push(problem);
  }

  /** A reporter bound to one file. */
  for(file: string): Report {
    return (path, message, validOptions) => this.add(file, path, message, validOptions);
  }

  get size(): number { return this.items.length; }

  /** The problems grouped by file (files in order of their first problem), otherwise in report order. */
  sorted(): DefinitionProblem[] {
    const rank = new Map<string, number>();
    for (const p of this.items) if (!rank.has(p.file)) rank.set(p.file, rank.size);
    return this.items
      .map((p, i) => ({ p, i }))
      .sort((a, b) => (rank.get(a.p.file) as number) - (rank.get(b.p.file) as number) || a.i - b.i)
      .map((x) => x.p);
  }
}

function oneLine(p: DefinitionProblem): string {
  const file = p.line === undefined ? p.file : `${p.file}:${p.line}`;
  const where = p.path === "" ? file : `${file}: ${p.path}`;
  const opts = p.valid_options && p.valid_options.length > 0 && !/valid options|allowed keys/.test(p.message)
    ? ` (valid options: ${p.valid_options.map((o) => (typeof o === "string" ? o : JSON.stringify(o))).join(", ")})`
    : "";
  // a file name may hold an escape sequence: the line goes to terminals and logs
  return escapeControls(`${where}: ${p.message}${opts}`);
}

/** Human-readable multi-line list of problems, one per line (for `cards check`). */
export function formatProblems(problems: readonly DefinitionProblem[]): string {
  if (problems.length === 0) return "definitions are valid";
  const head = `${problems.length} problem${problems.length === 1 ? "" : "s"} in definitions:`;
  return [head, ...problems.map((p) => `  ${oneLine(p)}`)].join("\n");
}

/** The `invalid_definitions` error carrying every problem. */
export function definitionsError(problems: readonly DefinitionProblem[]): CardsError {
  const n = problems.length;
  const first = problems[0] ? oneLine(problems[0]) : "unknown problem";
  const more = n > 1 ? ` (and ${n - 1} more)` : "";
  return new CardsError("invalid_definitions", `${n} problem${n === 1 ? "" : "s"} in definitions: ${first}${more}`, {
    problems: [...problems],
    // a definition sent through the API (POST /boards) is not on disk: `cards check` would not see it
    hint: "problems lists every one (file, JSON path, what is wrong, valid options); for the files on disk, `cards check` prints them",
  });
}
