/**
 * The shapes the UI reads from the public HTTP API (SPEC.md "Resources and their fields").
 * The UI is a reference consumer: it declares what it uses instead of importing server code.
 */

export type FieldType =
  | "string" | "text" | "number" | "date" | "enum" | "tags" | "user" | "card_link" | "repeating" | "artifact";

export type Display = "feed" | "badge" | "hidden" | "link" | "monospace";

export interface OptionTheme { icon?: string; color?: string }

export interface FieldDef {
  id: string;
  label?: string;
  type: FieldType;
  required?: boolean;
  default?: unknown;
  description?: string;
  deprecated?: boolean;
  display?: Display;
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

export interface CardType {
  id: string;
  name: string;
  description?: string;
  schema_version: number;
  fields: FieldDef[];
  allowed_columns?: string[];
  icon?: string;
}

export interface Column { id: string; name: string }
export interface User { id: string; display_name?: string; kind: "human" | "agent"; created_at?: string }
export interface LinkType { id: string; name: string; type: "directional" | "bidirectional"; source_types?: string[]; target_types?: string[] }

export interface BoardPresentation {
  card_preview?: Record<string, string[]>;
  style_field?: string;
  lane_sort?: string;
  filters?: Record<string, unknown>;
}

export interface BoardMonitors {
  alert_when_empty?: string[];
  max_time_in_status?: Record<string, string>;
  idle_after?: string;
}

export interface Board {
  id: string;
  name: string;
  description?: string;
  columns: string[];
  card_type_ids: string[];
  default_filter?: Record<string, unknown>;
  transitions?: Record<string, string[]>;
  wip_limits?: Record<string, number>;
  monitors?: BoardMonitors;
  presentation?: BoardPresentation;
  theme?: Record<string, string>;
  settings?: { enforce_transitions?: boolean };
}

export interface Workspace {
  id: string;
  name: string;
  columns: Column[];
  tag_set: string[];
  link_types: LinkType[];
  users: User[];
  settings: { default_user?: string; default_board?: string; tag_policy?: "open" | "locked"; enforce_transitions?: boolean };
}

export interface WorkspaceInfo {
  workspace: Workspace;
  card_types: Record<string, CardType>;
  boards: Record<string, Board>;
}

export interface Link { type_id: string; target: string; note?: string; created_by: string; created_at: string }
export interface Comment { id: string; author: string; body: string; created_at: string; edited_at?: string }

export interface Card {
  id: string;
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

export interface CardPage { items: Card[]; next_cursor?: string }
/** GET /boards/{id}/counts: cards per board column (every column, 0 included). */
export interface BoardCounts { board_id: string; counts: Record<string, number>; total: number }
export interface HistoryItem { at: string; actor: string; type: string; summary: string }

/** One item of GET /breaches (SPEC "Conditions"); a drained watched lane is a `lane_limit` item. */
export interface Breach {
  kind: "wip_exceeded" | "lane_limit" | "card_blocked" | "status_timeout" | "card_idle";
  board_id: string;
  card_id?: string;
  column?: string;
  count?: number;
  limit?: number;
  status?: string;
  since?: string;
  max?: string;
  threshold?: string;
}

export interface Breaches { as_of: string; items: Breach[]; truncated?: boolean }

export interface ErrorBody {
  error: string;
  message: string;
  field?: string;
  value?: unknown;
  valid_options?: unknown[];
  hint?: string;
  card?: Card;
}

export interface ServiceEvent {
  id?: string;
  type: string;
  actor: string;
  at: string;
  card_id?: string;
  scope?: "card" | "board";
  board_id?: string;
  diff: Record<string, unknown>;
}

/** Every event type of SPEC.md "Events": SSE names each frame by its type. */
export const EVENT_TYPES: readonly string[] = [
  "card_created", "card_deleted", "field_updated", "status_changed", "owner_changed",
  "tags_changed", "item_appended", "item_updated", "item_removed", "link_added",
  "link_removed", "comment_added", "comment_edited", "schema_upgraded", "artifact_added",
  "definition_reloaded", "definition_reload_failed",
  "wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled", "card_blocked",
  "card_unblocked", "transition_rejected", "status_timeout", "card_idle",
];
