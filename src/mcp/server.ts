/**
 * The MCP tool server: initialize (version negotiation), ping, tools/list, tools/call,
 * and notifications/tools/list_changed after the definitions change on disk.
 * stdout carries only protocol lines; every log line goes to stderr.
 */
import type { Definitions } from "../domain/types.ts";
import { unregistrableHint } from "../domain/errors.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { agentLoopColumns, agentLoopScope } from "../domain/transitions.ts";
import type { Service } from "../service/index.ts";
import { INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, RpcPeer } from "./jsonrpc.ts";
import { ToolRegistry } from "./tools.ts";

/** Newest first; the first is the answer to a client version we do not know. */
export const PROTOCOL_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

export interface ServerOptions {
  svc: Service;
  /** the session's actor; undefined: none resolved, so reads work and writes are actor_required */
  actor: string | undefined;
  /** false: the actor is not a registered user (the instructions say so) */
  registered?: boolean;
  version: string;
  write: (line: string) => void;
  log: (message: string) => void;
}

/** Short: agents pay for it on every session. */
export function instructions(actor: string | undefined, defs: Pick<Definitions, "workspace" | "boards" | "cardTypes">, registered = true): string {
  const ws = defs.workspace;
  const scope = agentLoopScope(ws, defs.boards, defs.cardTypes);
  const { ready, doing, review, done } = agentLoopColumns(ws, scope.board, scope.type);
  return [
    actor === undefined
      ? `Shared work cards for agents and people. No actor is set: reads work, every write fails with actor_required until this server starts with --actor or CARDS_ACTOR.`
      : `Shared work cards for agents and people. You act as "${actor}" ("me" in filters).`,
    ...(registered || actor === undefined ? [] : [USER_ID_PATTERN.test(actor)
      ? `"${actor}" is not a registered user: claim and owner changes fail until \`cards users add ${actor} --kind agent\`.`
      : `"${actor}" is not a registered user: claim and owner changes fail; ${unregistrableHint("actor", actor)} (restart with --actor).`]),
    `Loop: 1) workspace: columns, card types, boards, allowed transitions. Holding work? list_cards {"owner":"me"}.`,
    `2) take_next {"filter":{"blocked":false,"status":"${ready}"},"status":"${doing}"} claims the oldest unblocked ${ready} card and moves it to ${doing}; {"card":null}: none is ready.`,
    "3) Work: append_entry (the type's repeating field) as you go; attach_artifact for files.",
    `4) Hand off: add_comment (done, next), then release {card_id, version, status:"${review}"}: moves it on, frees it for the next agent. Pass the version of the card you last got (every write returns it).`,
    "5) To move a card and keep it: update_<type> {card_id, version, status}.",
    ...(review !== done ? [`Reviewers: take_next {"filter":{"status":"${review}"}} claims in place; approve: release {card_id, version, status:"${done}"}; changes: add_comment, update_<type> {card_id, version, status:"${doing}", owner: the worker}.`] : []),
    "Resume: list_cards {\"owner\":\"me\"}, get_card, history.",
    "Errors carry valid_options: correct and retry. version_conflict includes the current card.",
  ].join("\n");
}

export class McpServer {
  readonly peer: RpcPeer;
  private registry: ToolRegistry;
  private initialized = false;

  constructor(private readonly o: ServerOptions) {
    this.registry = new ToolRegistry(o.svc.defs);
    this.peer = new RpcPeer({ dispatch: (m, p, n) => this.dispatch(m, p, n), write: o.write, log: o.log });
  }

  /** Swaps in tools for new definitions and tells an initialized client. */
  definitionsChanged(defs: Definitions): void {
    this.registry = new ToolRegistry(defs);
    if (this.initialized) this.peer.notify("notifications/tools/list_changed");
  }

  private async dispatch(method: string, params: unknown, isNotification: boolean): Promise<unknown> {
    switch (method) {
      case "initialize":
        return this.initialize(params);
      case "notifications/initialized":
        this.initialized = true;
        return undefined;
      case "ping":
        return {};
      case "tools/list":
        return { tools: this.registry.specs };
      case "tools/call":
        return this.callTool(params);
      default:
        if (isNotification) return undefined; // notifications are never answered, not even with -32601
        throw new RpcError(METHOD_NOT_FOUND, `method not found: ${method}`);
    }
  }

  private initialize(params: unknown): Record<string, unknown> {
    const asked = (params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (typeof asked !== "string") throw new RpcError(INVALID_PARAMS, "initialize: protocolVersion (string) is required");
    return {
      protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: "cards", version: this.o.version },
      instructions: instructions(this.o.actor, this.o.svc.defs, this.o.registered !== false),
    };
  }

  private async callTool(params: unknown): Promise<unknown> {
    const p = (params ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof p.name !== "string") throw new RpcError(INVALID_PARAMS, "tools/call: name (string) is required");
    const registry = this.registry;
    if (!registry.has(p.name)) {
      throw new RpcError(INVALID_PARAMS, `unknown tool: ${p.name}`, { valid_options: registry.specs.map((t) => t.name) });
    }
    // pinned: one call sees either the old or the new definitions across a reload, never a mix
    return registry.call(p.name, p.arguments, { svc: this.o.svc.pin(), actor: this.o.actor }, this.o.log);
  }
}
