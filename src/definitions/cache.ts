/**
 * The definitions cache for one-shot CLI calls: validating every definition file costs
 * more than the rest of a call, so the validated set is kept beside the data (the
 * store's meta table, one row) keyed by the rules version and the files' content
 * fingerprint. The cache is never the source of truth: a changed file, a new binary or
 * a missing or unreadable row validates afresh.
 *
 * The fast path reads no definition file and loads no node:fs (about 1.3 ms per call,
 * docs/benchmarks.md): it compares stamps (size and mtime) of the definitions folders
 * and of each file the set was read from. A folder's mtime changes whenever an entry is
 * added, removed or renamed over, so the list of files stays trustworthy. As in git's
 * "racy" rule, stamps are stored only once every mtime is RACY_MS old; until then each
 * call compares contents instead, so an edit within the same clock tick is never missed.
 */
import { CardsError } from "../domain/errors.ts";
import { joinPath as join } from "../domain/paths.ts";
import type { Board, CardType, Definitions, View } from "../domain/types.ts";
import { DEFINITION_FOLDERS, DEFINITIONS_DIR } from "./paths.ts";

declare const CARDS_VERSION: string | undefined;

/** Bump when a validation rule or the cached shape changes, so no cached set skips it. */
const RULES_VERSION = 11;
const CACHE_KEY = `${RULES_VERSION}:${typeof CARDS_VERSION === "string" ? CARDS_VERSION : "dev"}`;

/** A file changed less than this long before its stamp was taken may change again unseen. */
export const RACY_MS = 2000;

/** The meta key the cached set is stored under. */
export const DEFINITIONS_CACHE_KEY = "definitions_cache";

/**
 * The meta key recording which definitions the database was last brought in line with
 * (declared users registered, search index following searchable_fields); its value is
 * `syncStamp(defs)`.
 */
export const DEFINITIONS_SYNCED_KEY = "definitions_synced";

/**
 * The problems of the refused set last announced (definition_reload_failed): each broken
 * state is announced once, whichever processes meet it, until a set loads again.
 */
export const DEFINITIONS_FAILED_KEY = "definitions_failed";

/** Names one validated set under these rules: what DEFINITIONS_SYNCED_KEY holds. */
export const syncStamp = (defs: Definitions): string => `${CACHE_KEY}:${defs.fingerprint}`;

/**
 * What a reload leaves in DEFINITIONS_SYNCED_KEY: a fresh token, so the next open checks
 * again, that still names the set, so that open does not announce a set already loaded.
 */
export const reloadedMarker = (fingerprint: string): string => `reloaded:${fingerprint}:${crypto.randomUUID()}`;

/** True when `marker` says a reload already loaded (and announced) this fingerprint. */
export const reloadedTo = (marker: string | undefined, fingerprint: string): boolean => marker?.startsWith(`reloaded:${fingerprint}:`) === true;

/** How the cache reaches the disk and its row; given by the caller (platform and store). */
export interface DefinitionsCacheIo {
  /** `size:mtimeMs` of a path, or undefined when it does not exist */
  stamp(path: string): string | undefined;
  read(): string | undefined;
  write(text: string): void;
  now?(): number;
  /** told of the cached set the files replaced (another fingerprint), when the row held one */
  replaced?(previous: Definitions): void;
}

interface CacheRow {
  key: string;
  fingerprint: string;
  /** relative path -> stamp, for the folders and every file read; absent while racy */
  stamps?: Record<string, string>;
  /** what every call needs: parsed with the row */
  defs: Pick<Definitions, "workspace" | "fingerprint" | "defaultBoardId">;
  /**
   * card types, boards, views and extensions as JSON text, parsed when a call first uses
   * them: `cards get` and a plain `cards list` never do (~0.45M instructions a call)
   */
  rest: string;
}

type Rest = Pick<Definitions, "extensions"> & { cardTypes: [string, CardType][]; boards: [string, Board][]; views: [string, View][] };

const FOLDERS: string[] = [DEFINITIONS_DIR];
for (const f of DEFINITION_FOLDERS) FOLDERS.push(`${DEFINITIONS_DIR}/${f}`);

/**
 * Loads the definitions of `root`: from the cached row when every stamp matches (no file
 * read), else from the row when the contents have the same fingerprint (files read, not
 * validated), else validated afresh. Either of the last two rewrites the row.
 */
export async function loadDefinitionsCached(root: string, io: DefinitionsCacheIo): Promise<Definitions> {
  const row = readRow(io);
  if (row?.stamps && stampsMatch(root, row.stamps, io)) return revive(row);
  const { readDefinitionFiles, fingerprintFiles } = await import("./read.ts");
  const { definitionsError } = await import("./problems.ts");
  const stampsBefore = takeStamps(root, [], io);
  const { files, problems, misnamed } = await readDefinitionFiles(root);
  if (problems.length > 0) throw definitionsError(problems);
  const fingerprint = fingerprintFiles(files);
  if (misnamed.length > 0) {
    const { parseDefinitions } = await import("./load.ts");
    parseDefinitions(files, misnamed); // throws, with every other problem too
  }
  let defs: Definitions;
  if (row && row.fingerprint === fingerprint) {
    defs = revive(row);
  } else {
    if (row) io.replaced?.(revive(row));
    const { parseDefinitions } = await import("./load.ts");
    defs = parseDefinitions(files);
  }
  const stamps = takeStamps(root, [...files.keys()], io);
  const settled = sameFolders(stampsBefore, stamps) && isSettled(stamps, io.now?.() ?? Date.now());
  // while the files are racy and the row already holds this content, leave it: a write per call would cost more
  if (settled || row?.fingerprint !== fingerprint) {
    const content = row?.fingerprint === fingerprint ? { defs: row.defs, rest: row.rest } : pack(defs);
    writeRow(io, { key: CACHE_KEY, fingerprint, ...(settled ? { stamps } : {}), ...content });
  }
  return defs;
}

function readRow(io: DefinitionsCacheIo): CacheRow | undefined {
  try {
    const text = io.read();
    if (!text) return undefined;
    const row = JSON.parse(text) as CacheRow;
    // `rest` is parsed only when used: a row whose text is cut short is refused here
    const restIntact = typeof row.rest === "string" && row.rest.startsWith("{") && row.rest.endsWith("}");
    return row.key === CACHE_KEY && typeof row.fingerprint === "string" && row.defs && restIntact ? row : undefined;
  } catch {
    return undefined;
  }
}

function writeRow(io: DefinitionsCacheIo, row: CacheRow): void {
  try {
    io.write(JSON.stringify(row));
  } catch {
    // a read-only workspace simply validates on every call
  }
}

function stampsMatch(root: string, stamps: Record<string, string>, io: DefinitionsCacheIo): boolean {
  // plain loops: this runs on every CLI call (docs/decisions.md, "CLI cold path")
  for (let i = 0; i < FOLDERS.length; i++) if (!(FOLDERS[i]! in stamps)) return false;
  for (const p in stamps) if ((io.stamp(`${root}/${p}`) ?? "-") !== stamps[p]) return false;
  return true;
}

/** Stamps of the folders (present or not: "-" marks absence) and of the given files. */
function takeStamps(root: string, files: string[], io: DefinitionsCacheIo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of [...FOLDERS, ...files]) out[p] = io.stamp(join(root, p)) ?? "-";
  return out;
}

const sameFolders = (a: Record<string, string>, b: Record<string, string>): boolean => FOLDERS.every((f) => a[f] === b[f]);

/** True when every stamp's mtime lies at least RACY_MS in the past. */
function isSettled(stamps: Record<string, string>, now: number): boolean {
  for (const s of Object.values(stamps)) {
    if (s === "-") continue;
    const mtime = Number(s.split(":")[1]);
    if (!Number.isFinite(mtime) || mtime > now - RACY_MS) return false;
  }
  return true;
}

function pack(defs: Definitions): Pick<CacheRow, "defs" | "rest"> {
  const rest: Rest = { cardTypes: [...defs.cardTypes], boards: [...defs.boards], views: [...defs.views], extensions: defs.extensions };
  return { defs: { workspace: defs.workspace, fingerprint: defs.fingerprint, defaultBoardId: defs.defaultBoardId }, rest: JSON.stringify(rest) };
}

/** The cached set; card types, boards, views and extensions are parsed on first use. */
function revive(c: CacheRow): Definitions {
  let rest: Pick<Definitions, "cardTypes" | "boards" | "views" | "extensions"> | undefined;
  const more = () => {
    if (!rest) {
      let r: Rest;
      try {
        r = JSON.parse(c.rest) as Rest;
      } catch {
        throw new CardsError("unavailable", "the definitions cached in the workspace database are unreadable", {
          hint: "touch any file under definitions/ (the next call reads and validates them again)",
        });
      }
      rest = { cardTypes: new Map(r.cardTypes), boards: new Map(r.boards), views: new Map(r.views), extensions: r.extensions };
    }
    return rest;
  };
  const defs = { workspace: c.defs.workspace, fingerprint: c.defs.fingerprint } as Definitions;
  if (c.defs.defaultBoardId !== undefined) defs.defaultBoardId = c.defs.defaultBoardId;
  return Object.defineProperties(defs, {
    cardTypes: { get: () => more().cardTypes, enumerable: true },
    boards: { get: () => more().boards, enumerable: true },
    views: { get: () => more().views, enumerable: true },
    extensions: { get: () => more().extensions, enumerable: true },
  });
}
