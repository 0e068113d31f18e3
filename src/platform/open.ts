/** Wires the store driver into the service: surfaces open workspaces through here. */
import { databasePath, openWorkspace, type OpenOptions } from "../service/workspace.ts";
import type { Service } from "../service/service.ts";
import { createSqliteStore } from "../store/sqlite/index.ts";
import { createFsBlobStore } from "../blobs/fs.ts";
import { fileStamp, pathExists } from "./files.ts";

export function openService(o: Omit<OpenOptions, "createStore" | "createBlobStore" | "files">): Promise<Service> {
  return openWorkspace({ ...o, createStore: createSqliteStore, createBlobStore: createFsBlobStore, files: { stamp: fileStamp, exists: pathExists } });
}

/** Whether the workspace at `root` has a database yet (`cards check`). */
export function hasDatabase(root: string): boolean {
  return pathExists(databasePath(root));
}

/** Runs `fn` over the workspace database when it exists (`cards check`); undefined when it does not. */
export function withExistingStore<T>(root: string, fn: (r: ReturnType<typeof createSqliteStore>) => T): T | undefined {
  const path = databasePath(root);
  if (!pathExists(path)) return undefined;
  const store = createSqliteStore({ path, connections: 1 });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/**
 * Opens and closes the workspace at `root` when it has a database, so a changed set of
 * definitions is announced as any one-shot call announces it: running servers load it
 * within a second (`cards check`, `cards ext ...`, which read the files themselves).
 * Returns the loaded definitions, or undefined when there is no database yet.
 */
export async function openAndAnnounce(root: string, env: Record<string, string | undefined>): Promise<Service["defs"] | undefined> {
  if (!hasDatabase(root)) return undefined;
  const svc = await openService({ dir: root, cwd: root, env, mode: "embedded" });
  const defs = svc.defs;
  svc.close();
  return defs;
}
