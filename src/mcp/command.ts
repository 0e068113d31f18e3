/** `cards mcp [--dir D]`: the agent tool server (MCP, JSON-RPC 2.0) on stdin/stdout; logs only on stderr. */
import { defineCommand } from "citty";
import { CardsError } from "../domain/errors.ts";

/** The globals the CLI runner passes to every command. */
interface Globals { dir?: string; url?: string; actor?: string; cwd: string; env: Record<string, string | undefined> }

declare const CARDS_VERSION: string | undefined;
const VERSION = typeof CARDS_VERSION === "string" ? CARDS_VERSION : "0.1.0-dev";

export default defineCommand({
  meta: {
    name: "mcp",
    description: "Agent tool server: MCP (JSON-RPC 2.0, one message per line) on stdin/stdout. The actor, fixed for the session: --actor A, else CARDS_ACTOR, else settings.default_user (none: reads only, writes are actor_required). The workspace: --dir D (or CARDS_DIR)",
  },
  run: async ({ data }) => {
    const g = data as Globals;
    if (g.url) {
      throw new CardsError("usage", "cards mcp opens the workspace itself; --url is not supported", {
        field: "--url", hint: "pass --dir (or set CARDS_DIR) to name the workspace",
      });
    }
    // an agent set up with only CARDS_URL would otherwise write to whatever workspace the
    // working directory holds, believing it works on the server's (--dir wins, as for every command)
    if (g.dir === undefined && !g.env.CARDS_DIR && g.env.CARDS_URL) {
      throw new CardsError("usage", "cards mcp opens the workspace itself; it does not work through CARDS_URL", {
        field: "CARDS_URL", value: g.env.CARDS_URL,
        hint: "run it on the machine that holds the workspace with --dir D (or CARDS_DIR; --dir wins over CARDS_URL), or unset CARDS_URL",
      });
    }
    const { startMcp } = await import("./start.ts");
    return startMcp({ dir: g.dir, cwd: g.cwd, env: g.env, actor: g.actor, version: VERSION });
  },
});
