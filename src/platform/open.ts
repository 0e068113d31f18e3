/** Wires the store driver into the service: surfaces open workspaces through here. */
import { openWorkspace, type OpenOptions } from "../service/workspace.ts";
import type { Service } from "../service/service.ts";
import { createSqliteStore } from "../store/sqlite/index.ts";
import { createFsBlobStore } from "../blobs/fs.ts";
import { fileStamp, pathExists } from "./files.ts";

export function openService(o: Omit<OpenOptions, "createStore" | "createBlobStore" | "files">): Promise<Service> {
  return openWorkspace({ ...o, createStore: createSqliteStore, createBlobStore: createFsBlobStore, files: { stamp: fileStamp, exists: pathExists } });
}
