/** Opening a workspace (root discovery, definitions, store) and describing it. */
import { CardsError } from "../domain/errors.ts";
import { joinPath as join, parentPath as dirname, resolvePath as resolve } from "../domain/paths.ts";
import { doneColumn } from "../domain/transitions.ts";
import type { Board, CardEvent, CardType, Definitions, User, Workspace, WorkspaceDef } from "../domain/types.ts";
import { DEFINITIONS_CACHE_KEY, DEFINITIONS_FAILED_KEY, DEFINITIONS_SYNCED_KEY, loadDefinitionsCached, reloadedMarker, reloadedTo, syncStamp } from "../definitions/cache.ts";
import type { SearchConfig, Store, StoreTx } from "../store/port.ts";
import type { BlobStore } from "../blobs/port.ts";
import { Service, type ServiceMode } from "./service.ts";

export type StoreFactory = (o: { path: string; connections: 1 | 2 }) => Store;

/** File facts the cold path needs without loading node:fs (platform/files.ts). */
export interface FileFacts {
  /** `size:mtimeMs`, or undefined when nothing is there */
  stamp(path: string): string | undefined;
  exists(path: string): boolean;
}

export type BlobStoreFactory = (dir: string) => BlobStore;

export interface OpenOptions {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  mode: ServiceMode;
  createStore: StoreFactory;
  createBlobStore: BlobStoreFactory;
  files: FileFacts;
}

/**
 * Root discovery (DECISIONS): --dir, then CARDS_DIR, then the nearest ancestor holding
 * definitions/workspace.json (`exists` answers for that file; node:fs when not given).
 */
export async function findRoot(dir: string | undefined, cwd: string, env: Record<string, string | undefined>, exists?: (path: string) => boolean): Promise<string> {
  const explicit = dir ?? env.CARDS_DIR;
  if (explicit) return resolve(cwd, explicit);
  const has = exists ?? (await import("node:fs")).existsSync;
  for (let d = resolve(cwd); ; d = dirname(d)) {
    if (has(join(d, "definitions", "workspace.json"))) return d;
    if (dirname(d) === d) break;
  }
  throw new CardsError("not_found", `no workspace found from ${cwd}: no definitions/workspace.json here or in a parent directory`, {
    hint: "pass --dir or set CARDS_DIR to the shared workspace; `cards init DIR` makes a new, empty one (other agents will not see its cards)",
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

/**
 * Opens a workspace: its database first (the validated definitions are cached in it),
 * then the definitions. A root without a definitions folder is refused before any file
 * is created there.
 */
export async function openWorkspace(o: OpenOptions): Promise<Service> {
  const root = await findRoot(o.dir, o.cwd, o.env, o.files.exists);
  if (!o.files.exists(join(root, "definitions"))) {
    const { readDefinitionFiles } = await import("../definitions/read.ts");
    const { definitionsError } = await import("../definitions/problems.ts");
    throw definitionsError((await readDefinitionFiles(root)).problems);
  }
  const store = o.createStore({ path: databasePath(root), connections: o.mode === "embedded" ? 1 : 2 });
  try {
    let previous: Definitions | undefined;
    const defs = await loadDefinitionsCached(root, {
      replaced: (set) => { previous = set; },
      stamp: o.files.stamp,
      read: () => store.readMeta(DEFINITIONS_CACHE_KEY),
      write: (text) => store.writeMeta(DEFINITIONS_CACHE_KEY, text),
    });
    // the database already follows these definitions (declared users): a one-shot call
    // skips the check (docs/decisions.md, "definitions cache")
    const stamp = syncStamp(defs);
    const marker = store.readMeta(DEFINITIONS_SYNCED_KEY);
    const synced = marker === stamp;
    store.configure({ workspaceId: defs.workspace.id, doneStatus: doneColumn(defs.workspace), search: () => searchConfig(defs) });
    const svc = new Service(defs, store, o.createBlobStore(join(root, ".cards", "artifacts")), root, o.mode, o.env);
    if (!synced) {
      // changed definitions: loaded here only, off the one-shot path (cached definitions)
      const floor = await import("./schema-floor.ts");
      floor.assertSchemaFloor(store, defs);
      if (floor.changesLoadedSet(store, defs)) {
        // best effort, as the marker below: a read-only workspace still serves reads, and
        // the next open that can write records the set
        await store.write((tx) => floor.recordLoadedSet(tx, defs)).catch(() => {});
      }
      await registerDeclaredUsers(svc);
      // date values an older build stored as written, brought to the stored form once per
      // database; one that cannot write now (read-only, busy) leaves the set unrecorded
      // below, so the next open tries again
      const { storeDatesInForm } = await import("./date-values.ts");
      const datesStored = await storeDatesInForm(svc).then(() => true, () => false);
      // another set was in use: this process now works with a new one (files edited since),
      // so it says so, and running servers reload too (followReloads) instead of validating
      // against the old set while this call writes with the new one. A set a reload already
      // loaded was announced by that reload.
      const owed = marker !== undefined && !reloadedTo(marker, defs.fingerprint);
      // the boards it changes are known when the cached set it replaced is the one the
      // database followed (else every board may be affected)
      const replaced = previous && marker !== undefined && followed(marker, previous.fingerprint) ? previous : undefined;
      const announced = owed && await announceOpenedSet(store, defs, replaced);
      // best effort, and only over the value read above: a reload meanwhile (which writes a
      // new token) keeps the next open checking; a busy database is not waited for. A set
      // this open announced is marked so: a server asked to reload it next says nothing more
      // (the open after this one checks once more, then records the stamp). One it could
      // not announce is not recorded: the next open announces it
      if (datesStored && (!owed || announced)) store.tryWriteMeta(DEFINITIONS_SYNCED_KEY, announced ? reloadedMarker(defs.fingerprint) : stamp, marker);
    }
    return svc;
  } catch (e) {
    store.close();
    throw e;
  }
}

/** True when the synced marker names the set with this fingerprint (opened or reloaded). */
const followed = (marker: string, fingerprint: string): boolean => marker.endsWith(`:${fingerprint}`) || reloadedTo(marker, fingerprint);

/**
 * `definition_reloaded` for a set an open loaded, per board it changes against the set
 * the database followed (every board when that set is not known here), and the lane
 * crossings the set causes against what each lane last signalled (a limit lowered while
 * no server ran). Best effort: a busy database is not waited for long.
 */
async function announceOpenedSet(store: Store, defs: Definitions, replaced: Definitions | undefined): Promise<boolean> {
  try {
    const at = new Date().toISOString();
    const { reconcileLanes } = await import("./lanes.ts");
    const changed = await boardsChanged(replaced, defs);
    const persisted = defs.workspace.settings.persist_conditions ?? [];
    await store.write((tx) => {
      for (const c of reconcileLanes(defs, tx)) {
        const event = { ...c, actor: "cards", at } as CardEvent;
        if (persisted.includes(c.type)) tx.appendEvent(event);
        else tx.appendSignal(event);
      }
      const boards: Array<string | undefined> = changed.length > 0 ? changed : [undefined];
      for (const board_id of boards) {
        tx.appendSignal({ type: "definition_reloaded", actor: "cards", at, scope: "board", ...(board_id ? { board_id } : {}), diff: { fingerprint: defs.fingerprint } });
      }
      tx.deleteMeta(DEFINITIONS_FAILED_KEY);
    });
    return true;
  } catch {
    // the next open of a changed set, or an explicit reload, announces it
    return false;
  }
}

/** The boards a set changes against the one it replaced; all of them when that one is unknown or unreadable. */
async function boardsChanged(replaced: Definitions | undefined, defs: Definitions): Promise<string[]> {
  try {
    if (replaced) return (await import("../definitions/diff.ts")).affectedBoards(replaced, defs);
  } catch {
    // the cached text of the old set did not parse: say every board
  }
  return [...defs.boards.keys()];
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

/** 503 `unavailable` while a write would fail for the disk or the file (Store.health), so a monitor sees it. */
export async function health(svc: Service, version: string): Promise<{ version: string; workspace_id: string }> {
  await svc.store.health();
  return { version, workspace_id: svc.defs.workspace.id };
}

/** Registers the users declared in workspace.json that the database does not know yet, or knows otherwise. */
export async function registerDeclaredUsers(svc: Service): Promise<void> {
  const declared = svc.defs.workspace.users ?? [];
  if (!declared.some((u) => !sameUser(svc.store.getUser(u.id), u))) return;
  await svc.store.write((tx) => registerUsersIn(tx, declared));
}

/** A stored user that already is what workspace.json declares. */
function sameUser(cur: User | null, u: NonNullable<WorkspaceDef["users"]>[number]): boolean {
  return cur !== null && cur.kind === u.kind && (cur.display_name ?? undefined) === (u.display_name || undefined);
}

/**
 * Inside a write: registers the declared users the database does not know yet, and brings
 * a known one's display_name and kind in line with workspace.json (open, reload): the file
 * is where declared users are edited.
 */
export function registerUsersIn(tx: StoreTx, declared: NonNullable<WorkspaceDef["users"]>): void {
  for (const u of declared) {
    const cur = tx.getUser(u.id);
    if (sameUser(cur, u)) continue;
    tx.upsertUser({ id: u.id, ...(u.display_name ? { display_name: u.display_name } : {}), kind: u.kind, created_at: cur?.created_at ?? u.created_at ?? new Date().toISOString() });
  }
}
