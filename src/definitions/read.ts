/**
 * Reading the definition files of a workspace root into memory
 * (DECISIONS "Workspace on disk"), and their content fingerprint.
 * Synchronous node:fs on purpose: node:fs/promises costs ~1.5 ms to load on every CLI call.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { hash128 } from "../domain/hash.ts";
import { join, resolve } from "node:path";
import type { DefinitionProblem } from "../domain/errors.ts";
import { didYouMean } from "./suggest.ts";

import { DEFINITION_FOLDERS, DEFINITIONS_DIR, EXTENSION_FILES } from "./paths.ts";

/** Relative path (always with "/") to file content, sorted by path. */
export type DefinitionFiles = Map<string, string>;

const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException)?.code === "ENOENT" || (e as NodeJS.ErrnoException)?.code === "ENOTDIR";

/** A definition file is at most this many bytes (the largest sample is ~10 KiB). */
export const MAX_DEFINITION_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The file's text; undefined when absent or a folder (misnamedFiles reports folders);
 * `{ unread }` for what is no regular file (a FIFO would block the reading thread for
 * good, a device never end) or is too large to be a definition.
 */
function readIfPresent(abs: string): string | undefined | { unread: string } {
  try {
    const st = statSync(abs); // follows a link: one to /dev/zero is a device
    if (st.isDirectory()) return undefined;
    if (!st.isFile()) return { unread: "not read: not a regular file (a named pipe, socket or device); definitions are JSON files" };
    if (st.size > MAX_DEFINITION_FILE_BYTES) {
      return { unread: `not read: ${st.size} bytes; a definition file holds at most ${MAX_DEFINITION_FILE_BYTES} (4 MiB)` };
    }
    const bytes = readFileSync(abs);
    if (!isUtf8(bytes)) {
      // read as UTF-8, each bad byte would become U+FFFD: an option "café" saved in
      // Latin-1 would load as "caf\uFFFD" and never match what callers send
      const line = bytes.toString("utf8").slice(0, bytes.toString("utf8").indexOf("\uFFFD")).split("\n").length;
      return { unread: `not read: not UTF-8 text (first bad byte on line ${line}); save the file as UTF-8` };
    }
    return bytes.toString("utf8");
  } catch (e) {
    if (isMissing(e) || (e as NodeJS.ErrnoException)?.code === "EISDIR") return undefined;
    throw e;
  }
}

/**
 * Reads `<root>/definitions/{workspace.json, card-types/*.json, boards/*.json,
 * views/*.json, extensions.yaml|json}`. Hidden files and other extensions are
 * ignored. A missing definitions directory is returned as a problem; a missing
 * file is simply absent from the map (load.ts reports what is required).
 */
export async function readDefinitionFiles(root: string): Promise<{ files: DefinitionFiles; problems: DefinitionProblem[]; misnamed: DefinitionProblem[] }> {
  const dir = join(root, DEFINITIONS_DIR);
  const files: DefinitionFiles = new Map();
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch (e) {
    if (!isMissing(e)) throw e;
    return {
      files,
      misnamed: [],
      problems: [{
        file: DEFINITIONS_DIR,
        path: "",
        message: `no definitions directory at ${resolve(dir)}; run \`cards init\` to create a starter workspace there, or point --dir at a workspace`,
      }],
    };
  }
  const unread: DefinitionProblem[] = [];
  for (const rel of candidateFiles(dir)) {
    const text = readIfPresent(join(dir, ...rel.split("/")));
    if (typeof text === "string") files.set(`${DEFINITIONS_DIR}/${rel}`, text);
    else if (text) unread.push({ file: `${DEFINITIONS_DIR}/${rel}`, path: "", message: text.unread });
  }
  return { files: new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), problems: [], misnamed: [...misnamedFiles(dir), ...unread] };
}

/**
 * Files meant as definitions that the loader would skip without a word: `extensions.yml`,
 * `Workspace.json`, `boards/bugs.JSON`, a YAML board, a folder named `epic.json`. Each is
 * a problem, so a hook or a board is never silently not loaded.
 */
function misnamedFiles(dir: string): DefinitionProblem[] {
  const out: DefinitionProblem[] = [];
  const entries = (rel: string): Array<{ name: string; isDir: boolean; broken: boolean }> => {
    try {
      return readdirSync(join(dir, rel), { withFileTypes: true }).map((d) => ({
        name: d.name, isDir: d.isDirectory(),
        broken: d.isSymbolicLink() && !existsSync(join(dir, rel, d.name)),
      }));
    } catch {
      return [];
    }
  };
  const add = (rel: string, message: string): void => { out.push({ file: `${DEFINITIONS_DIR}/${rel}`, path: "", message }); };
  const BROKEN = "not read: a symbolic link to a file that does not exist";
  const topFiles = ["workspace.json", ...EXTENSION_FILES] as readonly string[];
  const folders = DEFINITION_FOLDERS as readonly string[];
  for (const { name, isDir, broken } of entries("")) {
    const lower = name.toLowerCase();
    if (name.startsWith(".")) continue;
    if (broken && (lower === "workspace.json" || topFiles.includes(lower))) add(name, BROKEN);
    else if (lower === "extensions.yml") add(name, "not read: the extensions file is extensions.yaml (or extensions.json); rename it");
    else if (name !== lower && topFiles.includes(lower)) add(name, `not read: file names are case-sensitive; rename it to ${lower}`);
    else if (isDir && topFiles.includes(name)) add(name, "not read: a folder, not a file");
    else if (!isDir && folders.includes(name)) add(name, `not read: a file; ${name} is the folder its definitions go in (${name}/<id>.json)`);
    else if (isDir && !folders.includes(name)) add(name, `not read: a folder definitions/ does not read${didYouMean(name, folders, "/")}; its folders are ${folders.join(", ")}, each holding <id>.json files`);
    else if (!isDir && /\.(json|ya?ml)$/.test(lower) && !topFiles.includes(name)) {
      add(name, `not read: definitions/ itself holds only workspace.json and extensions.yaml (or .json); a card type goes in card-types/<id>.json, a board in boards/<id>.json, a view in views/<id>.json`);
    }
  }
  for (const folder of DEFINITION_FOLDERS) {
    for (const { name, isDir, broken } of entries(folder)) {
      if (name.startsWith(".")) continue;
      const lower = name.toLowerCase();
      const rel = `${folder}/${name}`;
      if (broken && lower.endsWith(".json")) add(rel, BROKEN);
      else if (isDir && lower.endsWith(".json")) add(rel, "not read: a folder, not a JSON file");
      else if (isDir) add(rel, `not read: definitions are not read from sub-folders; move its files up into ${folder}/`);
      else if (!isDir && lower.endsWith(".json") && !name.endsWith(".json")) add(rel, `not read: definition files end in .json (lower case); rename it to ${name.slice(0, -5)}.json`);
      else if (!isDir && /\.ya?ml$/.test(lower)) add(rel, `not read: ${folder} files are JSON (*.json); only the extensions file may be YAML`);
    }
  }
  return out;
}

/**
 * The paths (relative to `definitions/`, sorted) a workspace's definitions may live in:
 * workspace.json, the extensions file, and the visible JSON files of each folder.
 */
function candidateFiles(dir: string): string[] {
  const wanted: string[] = ["workspace.json", ...EXTENSION_FILES];
  for (const folder of DEFINITION_FOLDERS) {
    let names: string[] = [];
    try {
      names = readdirSync(join(dir, folder));
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
    for (const n of names) if (n.endsWith(".json") && !n.startsWith(".")) wanted.push(`${folder}/${n}`);
  }
  return wanted.sort();
}

/** A 128-bit hash over the sorted relative file names and contents (domain/hash.ts). */
export function fingerprintFiles(files: ReadonlyMap<string, string> | Record<string, string>): string {
  const entries = files instanceof Map ? [...files] : Object.entries(files);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hash128(entries.map(([name, content]) => `${name}\0${content}`).join("\0"));
}

/** The fingerprint of a workspace's definition files, without validating them (for watch mode). */
export async function definitionsFingerprint(root: string): Promise<string> {
  return fingerprintFiles((await readDefinitionFiles(root)).files);
}
