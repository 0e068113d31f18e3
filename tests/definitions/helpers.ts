/**
 * Definition test helpers: the sample workspace as editable objects, written to a
 * real temp directory and loaded, returning the problems (none when it loads).
 */
import { afterAll, expect } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isCardsError, type DefinitionProblem } from "../../src/domain/errors.ts";
import { formatProblems, loadDefinitions } from "../../src/definitions/load.ts";
import { sampleFiles } from "../../src/definitions/sample.ts";

export const W = "definitions/workspace.json";
export const TASK = "definitions/card-types/task.json";
export const BUG = "definitions/card-types/bug.json";
export const REVIEW = "definitions/card-types/review.json";
export const MAIN = "definitions/boards/main.json";
export const BUGS = "definitions/boards/bugs.json";
export const TRIAGE = "definitions/views/triage.json";
export const EXT = "definitions/extensions.yaml";

/** Relative path to a parsed JSON object, or a string written as-is; undefined deletes the file. */
export type Files = Record<string, any>;

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** The sample files, JSON ones parsed. */
export function sample(): Files {
  const out: Files = {};
  for (const [rel, text] of Object.entries(sampleFiles())) out[rel] = rel.endsWith(".json") ? JSON.parse(text) : text;
  return out;
}

/** Writes files into a new temp workspace root and returns it. */
export function writeWorkspace(files: Files): string {
  const dir = mkdtempSync(join(tmpdir(), "cards-defs-"));
  dirs.push(dir);
  for (const [rel, v] of Object.entries(files)) {
    if (v === undefined) continue;
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, typeof v === "string" ? v : `${JSON.stringify(v, null, 2)}\n`);
  }
  return dir;
}

/** Loads a workspace root; returns its problems ([] when it loads). */
export async function problemsAt(dir: string): Promise<DefinitionProblem[]> {
  try {
    await loadDefinitions(dir);
    return [];
  } catch (e) {
    if (isCardsError(e) && e.code === "invalid_definitions") return e.extra.problems ?? [];
    throw e;
  }
}

/** The sample, changed by `edit`, written and loaded: its problems. */
export async function problems(edit: (f: Files) => void): Promise<DefinitionProblem[]> {
  const f = sample();
  edit(f);
  return problemsAt(writeWorkspace(f));
}

export interface Want { file: string; path: string; message: string | RegExp; valid_options?: unknown[] }

function matches(p: DefinitionProblem, w: Want): boolean {
  return p.file === w.file && p.path === w.path
    && (typeof w.message === "string" ? p.message.includes(w.message) : w.message.test(p.message));
}

/** Asserts `want` is among the problems (with exactly its valid_options when given). */
export function expectProblem(list: DefinitionProblem[], want: Want): DefinitionProblem {
  const hit = list.find((p) => matches(p, want));
  if (!hit) throw new Error(`expected a problem ${JSON.stringify(want)}, got:\n${formatProblems(list)}`);
  if (want.valid_options) expect(hit.valid_options).toEqual(want.valid_options);
  return hit;
}

/** Asserts the problems are exactly one, and that it is `want`. */
export function expectOnly(list: DefinitionProblem[], want: Want): DefinitionProblem {
  const hit = expectProblem(list, want);
  if (list.length !== 1) throw new Error(`expected only ${JSON.stringify(want)}, got:\n${formatProblems(list)}`);
  return hit;
}

/** Appends a field to a card type and returns its index. */
export function addField(f: Files, file: string, def: Record<string, unknown>): number {
  f[file].fields.push(def);
  return f[file].fields.length - 1;
}
