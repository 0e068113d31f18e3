/**
 * The definitions cache for one-shot CLI calls: validating every definition file costs
 * more than the rest of a call, so the validated set is kept in `.cards/definitions.json`
 * keyed by the files' content fingerprint and the rules version. A changed file, a new
 * binary or a missing cache validates afresh; the cache is never the source of truth.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Definitions } from "../domain/types.ts";
import { definitionsError } from "./problems.ts";
import { fingerprintFiles, readDefinitionFiles, statSignature } from "./read.ts";

declare const CARDS_VERSION: string | undefined;

/** Bump when a validation rule changes, so no cached set skips it. */
const RULES_VERSION = 2;
const CACHE_KEY = `${RULES_VERSION}:${typeof CARDS_VERSION === "string" ? CARDS_VERSION : "dev"}`;

interface CacheFile {
  key: string;
  fingerprint: string;
  /** names, sizes, mtimes and inodes of the files the set was read from */
  stat?: string;
  defs: Omit<Definitions, "cardTypes" | "boards" | "views"> & { cardTypes: [string, unknown][]; boards: [string, unknown][]; views: [string, unknown][] };
}

export function cachePath(root: string): string {
  return join(root, ".cards", "definitions.json");
}

/**
 * Loads the definitions, from the cache when the files are unchanged: same stat
 * signature (no file read at all), else same content fingerprint (files read, not
 * validated), else validated afresh.
 */
export async function loadDefinitionsCached(root: string): Promise<Definitions> {
  const stat = statSignature(root);
  const cache = readCache(root);
  if (cache && stat !== undefined && cache.stat === stat) return revive(cache);
  const { files, problems } = await readDefinitionFiles(root);
  if (problems.length > 0) throw definitionsError(problems);
  const fingerprint = fingerprintFiles(files);
  if (cache && cache.fingerprint === fingerprint) {
    const defs = revive(cache);
    writeCache(root, fingerprint, stat, defs);
    return defs;
  }
  const { parseDefinitions } = await import("./load.ts");
  const defs = parseDefinitions(files);
  writeCache(root, fingerprint, stat, defs);
  return defs;
}

function readCache(root: string): CacheFile | undefined {
  try {
    const c = JSON.parse(readFileSync(cachePath(root), "utf8")) as CacheFile;
    return c.key === CACHE_KEY ? c : undefined;
  } catch {
    return undefined;
  }
}

function revive(c: CacheFile): Definitions {
  return { ...c.defs, cardTypes: new Map(c.defs.cardTypes), boards: new Map(c.defs.boards), views: new Map(c.defs.views) } as Definitions;
}

function writeCache(root: string, fingerprint: string, stat: string | undefined, defs: Definitions): void {
  const file: CacheFile = {
    key: CACHE_KEY, fingerprint, ...(stat !== undefined ? { stat } : {}),
    defs: { ...defs, cardTypes: [...defs.cardTypes], boards: [...defs.boards], views: [...defs.views] },
  };
  try {
    const path = cachePath(root);
    mkdirSync(join(root, ".cards"), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(file));
    renameSync(tmp, path);
  } catch {
    // a read-only workspace simply validates on every call
  }
}
