/** `cards serve`: the HTTP API under /v1 (loopback by default). */
import { defineCommand } from "citty";
import { CardsError } from "../domain/errors.ts";
import { givenActor } from "../domain/text.ts";

/** The globals the CLI runner passes to every command. */
interface Globals { dir?: string; cwd: string; env: Record<string, string | undefined> }

export default defineCommand({
  meta: { name: "serve", description: "Serve the HTTP API (/v1), events and the board UI (/ui)" },
  args: {
    host: { type: "string", description: "address to bind", default: "127.0.0.1" },
    port: { type: "string", description: "port (0 picks a free one)", default: "4777" },
    watch: { type: "boolean", description: "reload definitions when their files change" },
    "allow-remote": { type: "boolean", description: "allow binding a non-loopback address (the API has no authentication)" },
    "public-url": { type: "string", description: "the address people open through a reverse proxy, e.g. https://cards.example.com (also CARDS_PUBLIC_URL): its host and origin are accepted" },
    "access-log": { type: "boolean", description: "log one line per request: method, path, status, milliseconds, actor (also CARDS_ACCESS_LOG=1)" },
  },
  run: async ({ args, data }) => {
    const g = data as Globals;
    const port = Number(args.port);
    if (!/^\d+$/.test(args.port) || port > 65535) throw new CardsError("usage", "--port must be 0-65535", { field: "--port", value: args.port });
    if (!isLoopback(args.host) && !args["allow-remote"]) {
      throw new CardsError("usage", `refusing to bind ${args.host}: the API has no authentication`, {
        field: "--host", hint: "bind 127.0.0.1, or pass --allow-remote if the network is trusted",
      });
    }
    // a blank CARDS_ACTOR would answer 400 to every request that names no actor: said at start
    givenActor(g.env.CARDS_ACTOR, "CARDS_ACTOR");
    const publicUrl = args["public-url"] ?? (g.env.CARDS_PUBLIC_URL?.trim() || undefined);
    const accessLog = args["access-log"] === true || g.env.CARDS_ACCESS_LOG === "1";
    const { startService } = await import("./server.ts");
    await startService({ dir: g.dir, cwd: g.cwd, env: g.env, host: args.host, port, watch: args.watch === true, accessLog, ...(publicUrl !== undefined ? { publicUrl } : {}) });
    return undefined;
  },
});

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
