/**
 * The resource shapes of SPEC.md ("Resources and their fields"), as the service
 * holds them in memory and returns them on every surface. Pure types, no logic.
 */

export type FieldType =
  | "string" | "text" | "number" | "date" | "enum"
  | "tags" | "user" | "card_link" | "repeating" | "artifact";

export const FIELD_TYPES: readonly FieldType[] = [
  "string", "text", "number", "date", "enum", "tags", "user", "card_link", "repeating", "artifact",
];

export type FieldDisplay = "feed" | "badge" | "hidden" | "link" | "monospace";

export interface OptionTheme { icon?: string; color?: string }

export interface FieldDef {
  id: string;
  label?: string;
  type: FieldType;
  required?: boolean;
  default?: unknown;
  description?: string;
  deprecated?: boolean;
  display?: FieldDisplay;
  options?: string[];
  option_themes?: Record<string, OptionTheme>;
  multiple?: boolean;
  min?: number;
  max?: number;
  target_type?: string;
  link_type?: string;
  item_fields?: FieldDef[];
  artifact_policy?: "local" | "uri";
}

export interface Migration {
  from: number;
  summary: string;
  field_defaults?: Record<string, unknown>;
}

export interface CardType {
  id: string;
  name: string;
  description?: string;
  schema_version: number;
  fields: FieldDef[];
  allowed_columns?: string[];
  icon?: string;
  searchable_fields?: string[];
  migrations?: Record<string, Migration>;
}

export interface Column { id: string; name: string }

export interface LinkType {
  id: string;
  name: string;
  type: "directional" | "bidirectional";
  source_types?: string[];
  target_types?: string[];
}

export type UserKind = "human" | "agent";

export interface User {
  id: string;
  display_name?: string;
  kind: UserKind;
  created_at: string;
}

export interface WorkspaceSettings {
  enforce_transitions: boolean;
  strict_fields: boolean;
  tag_policy: "open" | "locked";
  event_retention_days?: number;
  default_user?: string;
  default_board?: string;
  persist_conditions?: string[];
}

/** workspace.json as loaded (users here are the declared ones; the registry adds more). */
export interface WorkspaceDef {
  id: string;
  name: string;
  columns: Column[];
  tag_set: string[];
  link_types: LinkType[];
  users?: Array<Omit<User, "created_at"> & { created_at?: string }>;
  settings: WorkspaceSettings;
}

/** GET /workspace `workspace`: the definition plus the live user registry. */
export interface Workspace extends Omit<WorkspaceDef, "users"> { users: User[] }

export interface BoardMonitors {
  alert_when_empty?: string[];
  emit_rejections?: boolean;
  max_time_in_status?: Record<string, string>;
  idle_after?: string;
}

export interface BoardPresentation {
  card_preview?: Record<string, string[]>;
  style_field?: string;
  lane_sort?: string;
  filters?: Record<string, Filter>;
  [key: string]: unknown;
}

export interface Board {
  id: string;
  name: string;
  description?: string;
  columns: string[];
  card_type_ids: string[];
  default_filter?: Filter;
  transitions?: Record<string, string[]>;
  wip_limits?: Record<string, number>;
  monitors?: BoardMonitors;
  presentation?: BoardPresentation;
  theme?: Record<string, string>;
  settings?: { enforce_transitions?: boolean };
}

export interface View {
  id: string;
  board_id?: string;
  path: string;
  bind?: Record<string, unknown>;
  filter?: Filter;
  methods?: string[];
}

export type ExtensionKind = "hook" | "run" | "service";

export interface ExtensionDef {
  id: string;
  kind: ExtensionKind;
  description?: string;
  on?: string[];
  filter?: { board_id?: string; type_id?: string; card_id?: string; to_status?: string; from_status?: string };
  run: string[];
  cwd?: string;
  env?: Record<string, string>;
  autostart?: boolean;
  restart_policy?: "on-failure" | "always" | "never";
  expose?: Record<string, unknown>;
}

/** Everything loaded from `<root>/definitions`, validated and cross-checked. */
export interface Definitions {
  workspace: WorkspaceDef;
  cardTypes: Map<string, CardType>;
  boards: Map<string, Board>;
  views: Map<string, View>;
  extensions: ExtensionDef[];
  /** content fingerprint of the files the set was read from */
  fingerprint: string;
  /** the board surfaces use when none is named: default_board, else the alphabetically first */
  defaultBoardId?: string;
}

/** A filter expression (docs/filters.md). Validated by domain/filters.ts. */
export type Filter = { [key: string]: unknown };

export interface Link {
  type_id: string;
  target: string;
  note?: string;
  created_by: string;
  created_at: string;
}

export interface Comment {
  id: string;
  author: string;
  body: string;
  created_at: string;
  edited_at?: string;
}

export interface Card {
  id: string;
  workspace_id: string;
  type_id: string;
  schema_version: number;
  title: string;
  status: string;
  fields: Record<string, unknown>;
  owner?: string;
  tags: string[];
  links?: Link[];
  comments?: Comment[];
  version: number;
  created_at: string;
  updated_at: string;
  status_since: string;
  created_by: string;
}

export type EventType =
  | "card_created" | "card_deleted" | "field_updated" | "status_changed" | "owner_changed"
  | "tags_changed" | "item_appended" | "item_updated" | "item_removed" | "link_added"
  | "link_removed" | "comment_added" | "comment_edited" | "schema_upgraded" | "artifact_added"
  | "definition_reloaded" | "definition_reload_failed"
  | "wip_exceeded" | "wip_cleared" | "lane_drained" | "lane_refilled" | "card_blocked"
  | "card_unblocked" | "transition_rejected" | "status_timeout" | "card_idle";

/** The link types that make their source card blocked while the target is not done (SPEC Link rules 4). */
export const BLOCKING_LINK_TYPES: readonly string[] = ["depends-on", "blocked-by"];

export const DURABLE_CARD_EVENTS: readonly EventType[] = [
  "card_created", "card_deleted", "field_updated", "status_changed", "owner_changed",
  "tags_changed", "item_appended", "item_updated", "item_removed", "link_added",
  "link_removed", "comment_added", "comment_edited", "schema_upgraded", "artifact_added",
];

export const CONDITION_EVENTS: readonly EventType[] = [
  "wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled", "card_blocked",
  "card_unblocked", "transition_rejected", "status_timeout", "card_idle",
];

export const ALL_EVENT_TYPES: readonly EventType[] = [
  ...DURABLE_CARD_EVENTS, "definition_reloaded", "definition_reload_failed", ...CONDITION_EVENTS,
];

export interface CardEvent {
  id?: string;
  type: EventType;
  actor: string;
  at: string;
  card_id?: string;
  scope: "card" | "board";
  board_id?: string;
  diff: Record<string, unknown>;
}

/** An event as stored: it always has an id. */
export interface StoredEvent extends CardEvent { id: string }
