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
import { liveServiceStates } from "../../extensions/state.ts";
import { findRoot } from "../../service/index.ts";
import type { CliGlobals } from "../client.ts";
import { outcome } from "../runner.ts";

const workspace = async (g: CliGlobals): Promise<{ root: string; defs: { extensions: ExtensionDef[] } }> => {
  const root = await findRoot(g.dir, g.cwd, g.env);
  return { root, defs: await loadDefinitions(root) };
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
    const exitCode = await runExtension(await workspace(g), args.id, rest, { env: g.env, url: g.url });
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

export default defineCommand({
  meta: { name: "ext", description: "Extensions: list them, run a run extension" },
  subCommands: { run, list },
});
