/** Test workspaces: the sample definitions in a fresh temp directory, a real SQLite file. */
import { mkdirSync, mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { sampleFiles } from "../../src/definitions/sample.ts";
import { openService } from "../../src/platform/open.ts";
import type { Service, ServiceMode } from "../../src/service/index.ts";

export const ROOT = join(import.meta.dir, "../..");
export const BIN = join(ROOT, "dist/cards");

/** Writes the sample workspace into a new temp dir; `edit` may change any file first. */
export function makeWorkspace(edit?: (files: Record<string, unknown>) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "cards-test-"));
  const files: Record<string, unknown> = {};
  for (const [rel, text] of Object.entries(sampleFiles())) files[rel] = rel.endsWith(".json") ? JSON.parse(text) : text;
  edit?.(files);
  for (const [rel, v] of Object.entries(files)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, typeof v === "string" ? v : JSON.stringify(v, null, 2));
  }
  return dir;
}

export async function openTestService(dir = makeWorkspace(), mode: ServiceMode = "serve", env: Record<string, string | undefined> = {}): Promise<Service> {
  return openService({ dir, cwd: dir, env, mode });
}

/** Opens the workspace at `dir`, runs `fn` with it, and closes it whatever happens. */
export async function withService<T>(dir: string, mode: ServiceMode, fn: (svc: Service) => Promise<T>): Promise<T> {
  const svc = await openTestService(dir, mode);
  try {
    return await fn(svc);
  } finally {
    svc.close();
  }
}

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** The sample task card type as an object (to write a changed copy of it). */
export function sampleTask(): any {
  return JSON.parse(sampleFiles()["definitions/card-types/task.json"]!);
}

/** Rewrites one JSON file of a workspace (`rel` from its root) through `fn`. */
export function editJson(dir: string, rel: string, fn: (x: any) => void): void {
  const p = join(dir, rel);
  const x = JSON.parse(readFileSync(p, "utf8"));
  fn(x);
  writeFileSync(p, JSON.stringify(x, null, 2));
}
