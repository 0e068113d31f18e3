/**
 * `cards ext`: extensions declared in definitions/extensions.yaml.
 * `ext run ID [-- ARGS...]` starts a run extension in the foreground and exits with its
 * exit code; `ext list` shows every declaration and, for services, the state reported by
 * the `cards serve` supervising them (`not running` when no live server supervises them).
 */
import type { ArgDef } from "citty";
import { defineCommand } from "../define.ts";
import { loadDefinitions } from "../../definitions/load.ts";
import type { ExtensionDef } from "../../domain/types.ts";
import { runExtension } from "../../extensions/run.ts";
import { liveServiceStates, liveSnapshots } from "../../extensions/state.ts";
import { requestService, type ServiceAction } from "../../extensions/control.ts";
import { CardsError } from "../../domain/errors.ts";
import { findRoot } from "../../service/index.ts";
import { serverUrl, type CliGlobals } from "../client.ts";
import { outcome } from "../runner.ts";

/**
 * The workspace's root and definitions. An existing workspace is opened as any one-shot
 * call opens it, so edited definitions are announced: the server supervising hooks and
 * services loads them within a second (else `ext start` met a server that did not know a
 * service just declared, and `ext list` showed hooks the server did not run).
 */
const workspace = async (g: CliGlobals): Promise<{ root: string; defs: { extensions: ExtensionDef[] } }> => {
  const root = await findRoot(g.dir, g.cwd, g.env);
  const { openAndAnnounce } = await import("../../platform/open.ts");
  // the announcement is a courtesy: a database it cannot open (busy, read-only) leaves the
  // files, read as before; definitions that do not load stop the command either way
  const opened = await openAndAnnounce(root, g.env).catch((e) => {
    if ((e as { code?: string }).code === "invalid_definitions") throw e;
    return undefined;
  });
  return { root, defs: opened ?? await loadDefinitions(root) };
};

const run = defineCommand({
  meta: {
    name: "run",
    description: "Run a run extension with ARGS appended; exits with its exit code (put -- before arguments that start with a dash)",
  },
  args: {
    id: { type: "positional", description: "extension id", required: true },
    // variadic: every word after the id goes to the extension (args.ts takes it whole)
    args: { type: "positional", description: "arguments appended to the extension's `run`", required: false, variadic: true } as ArgDef,
  },
  run: async ({ args, rawArgs, data }) => {
    const g = data as CliGlobals;
    const rest = rawArgs.slice(rawArgs.indexOf(args.id) + 1);
    if (rest[0] === "--") rest.shift();
    const exitCode = await runExtension(await workspace(g), args.id, rest, { env: g.env, url: g.url, ...(g.actor ? { actor: g.actor } : {}) });
    return outcome({ exitCode });
  },
});

const list = defineCommand({
  meta: { name: "list", description: "Declared extensions; services with their state under `cards serve`" },
  run: async ({ data }) => {
    const { root, defs } = await workspace(data as CliGlobals);
    // every live supervisor's view (two servers on one workspace both supervise)
    const states = liveServiceStates(root);
    return {
      extensions: defs.extensions.map((e) => {
        const { env: _env, ...decl } = e; // env may hold secrets
        if (e.kind !== "service") return decl;
        const s = states.get(e.id);
        if (!s) return { ...decl, state: "not running" };
        const { id: _id, kind: _kind, ...live } = s;
        return { ...decl, ...live };
      }),
    };
  },
});

/**
 * `ext start|stop|restart ID`: asks every `cards serve` supervising the workspace
 * (control.ts) and prints the service as `ext list` shows it once they are done.
 */
function serviceCommand(action: ServiceAction, description: string) {
  return defineCommand({
    meta: { name: action, description },
    args: { id: { type: "positional", description: "service id", required: true } },
    run: async ({ args, data }) => {
      const g = data as CliGlobals;
      if (serverUrl(g)) {
        // it changes what runs on this machine: never the workspace a URL did not name
        throw new CardsError("usage", `ext ${action} works with the server on this machine, not through CARDS_URL / --url`, {
          hint: "run it with --dir on the machine that holds the workspace, without CARDS_URL / --url",
        });
      }
      const { root, defs } = await workspace(g);
      const services = defs.extensions.filter((e) => e.kind === "service");
      const def = defs.extensions.find((e) => e.id === args.id);
      if (!def || def.kind !== "service") {
        throw new CardsError(def ? "bad_request" : "not_found", def ? `extension ${JSON.stringify(args.id)} is a ${def.kind}, not a service` : `no service ${JSON.stringify(args.id)} is declared`, {
          field: "id", value: args.id, valid_options: services.map((e) => e.id),
          hint: def?.kind === "run" ? `run it with \`cards ext run ${args.id}\`` : "services are declared in definitions/extensions.yaml (kind: service)",
        });
      }
      // a service declared since the server loaded its definitions: workspace() announced
      // the set, and the server loads it within a second; it is asked once it knows it
      await waitUntilKnown(root, def.id, KNOWN_WAIT_MS);
      const { asked, late, old } = await requestService(root, { action, id: def.id }, CONTROL_TIMEOUT_MS);
      if (asked.length === 0) {
        throw new CardsError("unavailable", old.length ? `the \`cards serve\` on this workspace (pid ${old.join(", ")}) is an older version that takes no requests` : `no \`cards serve\` runs on this workspace: services run under it`, {
          hint: old.length ? "restart the server with this version of cards" : "start `cards serve` (services whose autostart is not false start with it), then ask again",
        });
      }
      if (late.length) {
        throw new CardsError("unavailable", `the server${late.length > 1 ? "s" : ""} (pid ${late.join(", ")}) did not take the request within ${CONTROL_TIMEOUT_MS / 1000} s`, { hint: "see the server's log; `cards ext list` shows the state" });
      }
      const { env: _env, ...decl } = def; // env may hold secrets
      const s = liveServiceStates(root).get(def.id);
      // asked to run, it does not: the server has not loaded this declaration yet (it follows
      // edited definitions within a second), or the service exited at once (backoff: it
      // waits to be started again, as one that cannot be spawned does)
      if (action !== "stop" && !(s && ["running", "starting"].includes(s.state))) {
        const exit = s?.last_exit ? ` (last exit: ${s.last_exit.error ?? (s.last_exit.signal ? `signal ${s.last_exit.signal}` : `code ${s.last_exit.code}`)})` : "";
        throw new CardsError("unavailable", `service ${def.id} does not run after ${action}: ${s?.state ?? "not known to the server"}${exit}`, {
          hint: s ? "see the server's log for its output" : `the server has not loaded this declaration (see its log: the definitions it runs may be refused); \`cards check\` lists problems, \`cards --url <server> workspace reload\` asks it to load them`,
        });
      }
      if (!s) return { ...decl, state: "not running" };
      const { id: _id, kind: _kind, ...live } = s;
      return { ...decl, ...live };
    },
  });
}

/** How long `ext start|stop|restart` waits for live servers to load a service declared since they started. */
const KNOWN_WAIT_MS = 3_000;

/** Waits (at most `ms`) until every live supervisor of `root` reports the service `id`. */
async function waitUntilKnown(root: string, id: string, ms: number): Promise<void> {
  const end = performance.now() + ms; // monotonic: a clock step must not end or stretch the wait
  for (;;) {
    const snaps = liveSnapshots(root);
    if (snaps.length === 0 || snaps.every((s) => s.services.some((x) => x.id === id)) || performance.now() > end) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How long `ext stop` waits for servers to stop a service (their grace is 5 s before SIGKILL). */
const CONTROL_TIMEOUT_MS = 15_000;

export default defineCommand({
  meta: { name: "ext", description: "Extensions: list them, run a run extension, start or stop a service" },
  subCommands: {
    run,
    list,
    start: serviceCommand("start", "Start a service under the running `cards serve` (an autostart: false one, or one that exited or was stopped)"),
    stop: serviceCommand("stop", "Stop a service; it stays stopped until started again or the server restarts"),
    restart: serviceCommand("restart", "Stop a service and start it again"),
  },
});
