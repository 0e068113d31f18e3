/** The service layer's public surface, listed by name. Surfaces import only from here. */
// Core
export { Service, requestHash, type OpContext, type ServiceMode, type WriteScope, type Subscription } from "./service.ts";
export { openWorkspace, findRoot, describeWorkspace, health, databasePath, type OpenOptions, type StoreFactory, type BlobStoreFactory, type WorkspaceView } from "./workspace.ts";
// Cards
export { createCard, patchCard, deleteCard } from "./cards.ts";
export { getCard } from "./reads.ts";
export { countBoardCards, listCards, type BoardCounts, type CardPage, type ListParams } from "./list.ts";
// Users
export { isRegisteredUser, registerUser } from "./users.ts";
// Events
export { listEvents, cardEvents, type EventPage } from "./events.ts";
export { parseStreamFilter, eventMatcher, replayEvents, STREAM_REPLAY_LIMIT, type StreamFilter } from "./event-filter.ts";
// Ownership
export { claimCard, releaseCard, takeNext } from "./ownership.ts";
// Links, comments, entries, history
export { addLink, removeLink } from "./links.ts";
export { addComment, editComment } from "./comments.ts";
export { appendEntry, updateEntry, removeEntry } from "./entries.ts";
export { cardHistory } from "./history.ts";
// Conditions
export { listBreaches, BREACH_KINDS } from "./breaches.ts";
export { TemporalMonitor } from "./monitors.ts";
// Schema upgrade, artifacts
export { upgradeSchema, type UpgradeReport } from "./upgrade.ts";
export { attachArtifact, collectArtifacts, openArtifact, readArtifact, MAX_ARTIFACT_BYTES } from "./artifacts.ts";
// Definitions lifecycle
export { reloadDefinitions, putBoard, onReload, watchDefinitions, followReloads, type ReloadResult } from "./reload.ts";
export { assertSchemaFloor } from "./schema-floor.ts";
export { definitionNotices, type DefinitionNotice } from "./drift.ts";
// Portability
export { dumpWorkspace, restoreWorkspace, jsonlLines, type PortCounts } from "./portability.ts";
export { backupWorkspace } from "./backup.ts";
// Schemas for surfaces (OpenAPI, tool inputs)
export { REQUEST_SHAPES } from "./shapes.ts";
export { clearable, createFieldSchema, fieldSchema, itemFields, statusesOf, tagsSchema, obj, anyObj, str, int, bool, strEnum, type JsonSchema } from "../definitions/json-schema.ts";
