/**
 * `cards prime`: a compact markdown guide for an agent that knows nothing, generated from
 * the live definitions (GET /workspace, so embedded and remote mode alike): columns and
 * allowed moves per board, card types with their fields, link types, and the agent loop
 * with the exact commands. Kept small on purpose: an agent reads it into its context.
 */
import { defineCommand } from "../define.ts";
import { callApi, type CliGlobals } from "../client.ts";
import { outcome, type CliOutcome } from "../runner.ts";
import type { Board, CardType, FieldDef, WorkspaceDef } from "../../domain/types.ts";
import { storesBytes } from "../../domain/fields.ts";
import { agentLoopColumns, agentLoopScope, doneColumn } from "../../domain/transitions.ts";
import { governingBoard, isEnforced } from "../../domain/moves.ts";

interface WorkspaceView {
  workspace: WorkspaceDef;
  card_types: Record<string, CardType>;
  boards: Record<string, Board>;
}

export default defineCommand({
  meta: { name: "prime", description: "A compact guide for agents, from the live definitions: columns, moves, card types, the agent loop" },
  run: async ({ data }): Promise<{ __cli: CliOutcome }> => {
    const g = data as CliGlobals;
    const view = (await callApi(g, { method: "GET", path: "/workspace" })) as WorkspaceView;
    return outcome({ text: primeText(view, g.actor ?? g.env.CARDS_ACTOR) });
  },
});

/** The guide as markdown. */
export function primeText(v: WorkspaceView, actor?: string): string {
  const ws = v.workspace;
  const types = Object.values(v.card_types);
  const boards = Object.values(v.boards);
  const byId = new Map(boards.map((b) => [b.id, b]));
  const me = actor?.trim() || ws.settings.default_user;
  const out: string[] = [
    `# cards: ${ws.name} (${ws.id})`,
    `Typed work cards shared by agents and people. ${me ? `You act as "${me}"` : "Set CARDS_ACTOR to act as yourself"} (CARDS_ACTOR, else settings.default_user). Commands print JSON on stdout (artifact bytes and this guide excepted); errors are JSON on stderr.`,
    "",
    "## Columns (status values)",
    ws.columns.map((c) => (c.name && c.name !== c.id ? `${c.id} (${c.name})` : c.id)).join(", "),
    "",
    "## Boards",
    ...boards.map((b) => boardLine(b, ws, byId)),
    "",
    "## Card types (* required, =default)",
    ...types.flatMap((t) => typeLines(t)),
    "",
    "## Links",
    ws.link_types.map((l) => `${l.id}${l.type === "bidirectional" ? " (both ways)" : ""}`).join(", ") +
      `. depends-on and blocked-by keep a card blocked until the target is in ${doneColumn(ws)}. Add: \`cards cards links add ID TYPE TARGET_ID\`.`,
    ws.tag_set.length ? `Tags${ws.settings.tag_policy === "locked" ? " (only these)" : ""}: ${ws.tag_set.join(", ")}` : "",
    "",
    ...loop(byDefaultBoard(types, v.boards[ws.settings.default_board ?? ""]), ws, agentLoopScope(ws, byId, new Map(types.map((t) => [t.id, t])))),
    ...(me && !(ws.users ?? []).some((u) => u.id === me)
      ? ["", `Note: "${me}" is not a registered user: take-next works, but claim and owner changes fail with unknown_user until \`cards users add ${me} --kind agent\`.`]
      : []),
  ];
  return out.filter((l, i, a) => !(l === "" && a[i - 1] === "")).join("\n").trim();
}

function boardLine(b: Board, ws: WorkspaceDef, all: Map<string, Board>): string {
  const parts = [`- ${b.id}${b.id === ws.settings.default_board ? " (default)" : ""}: ${b.card_type_ids.join(", ")}`];
  if (b.default_filter) parts.push(`scope ${JSON.stringify(b.default_filter)}`);
  // a card's moves follow one board's graph, whichever board shows it (docs/decisions.md)
  const governs = (t: string) => governingBoard(all, ws.settings.default_board, t)?.id ?? b.id;
  const own = b.card_type_ids.filter((t) => governs(t) === b.id);
  if (own.length > 0) {
    if (isEnforced(ws, b) && b.transitions) {
      parts.push(`moves ${b.columns.map((c) => `${c}>${(b.transitions![c] ?? []).join("|") || "none"}`).join(", ")}`);
    } else {
      parts.push("any move");
    }
  }
  const elsewhere = new Map<string, string[]>();
  for (const t of b.card_type_ids) if (governs(t) !== b.id) elsewhere.set(governs(t), [...(elsewhere.get(governs(t)) ?? []), t]);
  for (const [g, ts] of elsewhere) parts.push(`${ts.join(", ")} move${ts.length === 1 ? "s" : ""} by ${g}'s graph`);
  const wip = Object.entries(b.wip_limits ?? {});
  if (wip.length) parts.push(`WIP ${wip.map(([c, n]) => `${c} ${n}`).join(", ")}`);
  return parts.join("; ");
}

function typeLines(t: CardType): string[] {
  const head = `- ${t.id}${t.description ? `: ${t.description}` : ""}${t.allowed_columns ? ` Statuses: ${t.allowed_columns.join(", ")}.` : ""}`;
  return [head, `  fields: ${t.fields.map(fieldText).join("; ")}`];
}

function fieldText(f: FieldDef): string {
  let s = `${f.id}${f.required ? "*" : ""} ${f.type}`;
  if (f.options) s += `${f.multiple ? "[]" : ""} ${f.options.join("|")}`;
  else if (f.multiple) s += "[]";
  if (f.type === "number" && (f.min !== undefined || f.max !== undefined)) s += ` ${f.min ?? ""}..${f.max ?? ""}`;
  if (f.type === "card_link" && f.target_type) s += `>${f.target_type}`;
  if (f.type === "repeating") s += ` {${(f.item_fields ?? []).map((i) => `${i.id}${i.required ? "*" : ""}`).join(", ")}}`;
  if (f.default !== undefined) s += ` =${Array.isArray(f.default) ? f.default.join(",") : String(f.default)}`;
  return s;
}

/** The agent loop with real commands; the example fields come from the definitions. */
function loop(types: CardType[], ws: WorkspaceDef, scope: { board?: Board; type?: CardType }): string[] {
  // take from the queue column: a card already past doing (in review) must not be pulled
  // back into doing by the next worker
  const { ready, doing, review, done } = agentLoopColumns(ws, scope.board, scope.type);
  const rep = firstField(types, "repeating");
  const item = rep?.field.item_fields?.find((i) => i.required && (i.type === "text" || i.type === "string"));
  const art = firstField(types, "artifact", storesBytes);
  const take = `{"blocked":false,"status":"${ready}"}`;
  // entries and files go in the card's own fields: each type names its own
  const perType = (kind: FieldDef["type"], ok: (f: FieldDef) => boolean = () => true): string =>
    types.flatMap((t) => t.fields.filter((f) => f.type === kind && ok(f)).map((f) => `${t.id} ${f.id}`)).join(", ");
  const logs = perType("repeating");
  const files = perType("artifact", storesBytes);
  return [
    "## Agent loop",
    `1. Learn the rules: \`cards workspace\` (full definitions) or this guide. Already holding work? \`cards cards list --owner me\`.`,
    `2. Take work: \`cards cards take-next --filter '${take}' --status ${doing}\`. It claims the oldest unowned, unblocked ${ready} card and moves it to ${doing}; \`{"card":null}\` means none is ready. Note the card's id, type and version.`,
    rep && item
      ? `3. Work, logging as you go: \`cards cards entries append ID ${rep.field.id} '{"${item.id}":"..."}' --version N\` (${rep.type}; each type logs to its own field: ${logs}).`
      : "3. Do the work; record results in the card's fields.",
    ...(art ? [`   Files: \`cards cards artifacts put ID ${art.field.id} FILE\` (file fields: ${files}).`] : []),
    `4. Hand off: \`cards cards comments add ID "what was done, what is next"\`, then \`cards cards release ID --version N --status ${review}\`: it moves the card on and frees it for the next agent (take-next hands out unowned cards only). N = the version of the card you last got: every write returns the card, take-next and entries append as \`.card\`.`,
    `5. To move a card and keep it: \`cards cards patch ID --version N --status X\`. Fields: \`--fields '{"key":"value"}'\`.`,
    ...(review !== done
      ? [`   Reviewing: \`cards cards take-next --filter '{"status":"${review}"}'\` claims a card where it is (no --status: it is not done before it is reviewed). Approve: \`cards cards release ID --version N --status ${done}\`. Changes needed: comment, then \`cards cards patch ID --version N --status ${doing} --owner WORKER\` (\`cards cards history ID\` shows who worked on it).`]
      : []),
    "6. Resume after an interruption: `cards cards list --owner me`, then `cards cards get ID` and `cards cards history ID`.",
    `New work: \`cards cards create --type TYPE --title "..." --status ${ready} --fields '{...}'\` (without --status it starts in its type's first column, ${ws.columns[0]?.id ?? ready} for most, where take-next above does not look). Find: \`cards cards list --status ${ready} --brief\` (no fields: small), \`--q text\`. take-next hands out the oldest first (updated_at): any write re-queues a card at the back.`,
    "Errors: JSON on stderr with valid_options; fix and retry. Exit 4 = conflict: re-read the card; retry with its version unless another actor owns it now (then leave it, or take it over with `patch ID --version N --owner YOU`) or nobody does (it was released: claim it again). Status moves outside the board's moves fail unless --force.",
  ];
}

function firstField(types: CardType[], kind: FieldDef["type"], ok: (f: FieldDef) => boolean = () => true): { type: string; field: FieldDef } | undefined {
  for (const t of types) for (const f of t.fields) if (f.type === kind && ok(f)) return { type: t.id, field: f };
  return undefined;
}

/** The default board's types first, in its order: the examples should fit the usual work. */
function byDefaultBoard(types: CardType[], board: Board | undefined): CardType[] {
  const order = board?.card_type_ids ?? [];
  const rank = (t: CardType): number => (order.includes(t.id) ? order.indexOf(t.id) : order.length);
  return [...types].sort((a, b) => rank(a) - rank(b));
}
