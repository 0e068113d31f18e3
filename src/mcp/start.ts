/**
 * `cards mcp` lifecycle: open the workspace, fix the actor for the session (--actor,
 * then CARDS_ACTOR, then settings.default_user; without one, reads only), serve
 * JSON-RPC lines from stdin until it closes, watch the definitions, shut down cleanly.
 */
import { isRegisteredUser, onReload, watchDefinitions } from "../service/index.ts";
import { openService } from "../platform/open.ts";
import { unregistrableHint } from "../domain/errors.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { givenActor } from "../domain/text.ts";
import { McpServer } from "./server.ts";

export interface McpOptions {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  /** the global --actor flag, when given */
  actor?: string;
  version: string;
}

const log = (message: string): void => { console.error(`cards mcp: ${message}`); };

/** Runs until stdin closes or a termination signal; resolves when the server has stopped. */
export async function startMcp(o: McpOptions): Promise<undefined> {
  const svc = await openService({ dir: o.dir, cwd: o.cwd, env: o.env, mode: "mcp" });
  let actor: string | undefined;
  try {
    // the same rule as every surface's actor (its length bound included); none at all is
    // as over HTTP: reads work, writes are actor_required (the client sees why, in a tool
    // result, instead of a server that exits before it answers)
    const given = givenActor(o.actor, "--actor");
    actor = svc.resolveActor(given) === undefined ? undefined : svc.requireActor(given);
  } catch (e) {
    svc.close();
    throw e;
  }
  if (actor === undefined) log(`no actor (--actor, CARDS_ACTOR, settings.default_user): reads work, every write fails with actor_required`);
  // take_next works for anyone, but claims and owner changes name a registered user:
  // say so now rather than at the agent's first claim
  const registered = actor === undefined || isRegisteredUser(svc, actor);
  if (!registered && actor !== undefined) {
    log(`actor ${JSON.stringify(actor)} is not a registered user: claim and owner changes will fail with unknown_user (${USER_ID_PATTERN.test(actor) ? `register it: cards users add ${actor} --kind agent` : unregistrableHint("actor", actor)})`);
  }
  const out = process.stdout;
  let stopping = false;
  // a client that stops reading our answers: stdin rests until stdout drains, so requests
  // are not read (and answers not piled up in memory) faster than the client takes them
  let outBlocked = false;
  const write = (line: string): void => {
    if (out.write(`${line}\n`) || outBlocked) return;
    outBlocked = true;
    process.stdin.pause();
    out.once("drain", () => {
      outBlocked = false;
      if (!stopping) process.stdin.resume();
    });
  };
  const server = new McpServer({ svc, actor, registered, version: o.version, log, write });
  onReload(svc, (defs) => server.definitionsChanged(defs));
  const stopWatch = watchDefinitions(svc, log);

  return new Promise((resolve) => {
    let outGone = false;
    const stop = async (): Promise<void> => {
      if (stopping) return;
      stopping = true;
      stopWatch();
      process.stdin.pause();
      await server.peer.drain().catch((e) => log(String(e)));
      svc.close();
      process.stdin.destroy(); // on a signal stdin may still be open: let the process end
      // answers must reach the client before the process ends
      if (outGone) resolve(undefined);
      else out.write("", () => resolve(undefined));
    };
    // the client closed our stdout (EPIPE): no answer can reach it, so take no more work
    out.on("error", (e) => {
      if (outGone) return;
      outGone = true;
      log(`stdout closed (${(e as NodeJS.ErrnoException).code ?? e.message}): stopping`);
      server.peer.discardUnread(); // a line still arriving is no request anyone can hear the answer to
      void stop();
    });
    // input that never pauses (a line without end, `</dev/zero`) kept the loop reading it
    // and never ran the signal handlers: after each MiB read, stdin rests for a turn of
    // the loop, so SIGTERM and SIGINT are heard
    let sinceRest = 0;
    process.stdin.on("data", (chunk: Uint8Array) => {
      server.peer.feedBytes(chunk);
      sinceRest += chunk.length;
      if (sinceRest >= 1 << 20 && !stopping) {
        sinceRest = 0;
        process.stdin.pause();
        setTimeout(() => { if (!stopping && !outBlocked) process.stdin.resume(); }, 0);
      }
    });
    process.stdin.on("end", () => void stop());
    process.stdin.on("error", () => void stop());
    process.on("SIGINT", () => void stop());
    process.on("SIGTERM", () => void stop());
  });
}
