/** Opening a workspace (root discovery, definitions, store) and describing it. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CardsError } from "../domain/errors.ts";
import { doneColumn } from "../domain/transitions.ts";
import type { Board, CardType, Definitions, Workspace } from "../domain/types.ts";
import { loadDefinitionsCached } from "../definitions/cache.ts";
import type { SearchConfig, Store } from "../store/port.ts";
import type { BlobStore } from "../blobs/port.ts";
import { Service, type ServiceMode } from "./service.ts";

export type StoreFactory = (o: { path: string; workspaceId: string; doneStatus: string; search: SearchConfig; connections: 1 | 2 }) => Store;

export type BlobStoreFactory = (dir: string) => BlobStore;

export interface OpenOptions {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  mode: ServiceMode;
  createStore: StoreFactory;
  createBlobStore: BlobStoreFactory;
}

/** Root discovery (DECISIONS): --dir, then CARDS_DIR, then the nearest ancestor holding definitions/workspace.json. */
export function findRoot(dir: string | undefined, cwd: string, env: Record<string, string | undefined>): string {
  const explicit = dir ?? env.CARDS_DIR;
  if (explicit) return resolve(cwd, explicit);
  for (let d = resolve(cwd); ; d = dirname(d)) {
    if (existsSync(join(d, "definitions", "workspace.json"))) return d;
    if (dirname(d) === d) break;
  }
  throw new CardsError("not_found", `no workspace found from ${cwd}: no definitions/workspace.json here or in a parent directory`, {
    hint: "run `cards init` to create one, or pass --dir / set CARDS_DIR",
  });
}

export function databasePath(root: string): string {
  return join(root, ".cards", "cards.db");
}

export function searchConfig(defs: Definitions): SearchConfig {
  const m: SearchConfig = new Map();
  for (const t of defs.cardTypes.values()) m.set(t.id, t.searchable_fields);
  return m;
}

export async function openWorkspace(o: OpenOptions): Promise<Service> {
  const root = findRoot(o.dir, o.cwd, o.env);
  const defs = await loadDefinitionsCached(root);
  const store = o.createStore({
    path: databasePath(root), workspaceId: defs.workspace.id, doneStatus: doneColumn(defs.workspace),
    search: searchConfig(defs), connections: o.mode === "embedded" ? 1 : 2,
  });
  const svc = new Service(defs, store, o.createBlobStore(join(root, ".cards", "artifacts")), root, o.mode, o.env);
  await registerDeclaredUsers(svc);
  return svc;
}

export interface WorkspaceView {
  workspace: Workspace;
  card_types: Record<string, CardType>;
  boards: Record<string, Board>;
  current_schema_versions: Record<string, number>;
}

export function describeWorkspace(svc: Service): WorkspaceView {
  const { workspace, cardTypes, boards } = svc.defs;
  const { id, name, columns, tag_set, link_types, settings } = workspace;
  return {
    workspace: { id, name, columns, tag_set, link_types, users: svc.store.listUsers(), settings },
    card_types: Object.fromEntries(cardTypes),
    boards: Object.fromEntries(boards),
    current_schema_versions: Object.fromEntries([...cardTypes.values()].map((t) => [t.id, t.schema_version])),
  };
}

export function health(svc: Service, version: string): { version: string; workspace_id: string } {
  return { version, workspace_id: svc.defs.workspace.id };
}

/** Registers the users declared in workspace.json that the database does not know yet. */
export async function registerDeclaredUsers(svc: Service): Promise<void> {
  const declared = svc.defs.workspace.users ?? [];
  const missing = declared.filter((u) => !svc.store.getUser(u.id));
  if (missing.length === 0) return;
  await svc.store.write((tx) => {
    for (const u of missing) {
      if (tx.getUser(u.id)) continue;
      tx.upsertUser({ id: u.id, ...(u.display_name ? { display_name: u.display_name } : {}), kind: u.kind, created_at: u.created_at ?? new Date().toISOString() });
    }
  });
}
