/**
 * Run extensions: one-shot commands started by hand (`cards ext run ID [ARGS...]`).
 * Synchronous from the caller's view: stdio is shared, extra arguments are appended to
 * `run`, and the child's exit code is the result (128 + N when killed by signal N).
 */
import { CardsError } from "../domain/errors.ts";
import type { ExtensionDef } from "../domain/types.ts";
import { exitCodeOf, runForeground } from "../platform/spawn.ts";
import { extensionCwd, extensionEnv } from "./env.ts";

/** What a run needs: the workspace root and its extension declarations (a Service satisfies it). */
export interface RunHost {
  readonly root: string;
  readonly defs: { readonly extensions: readonly ExtensionDef[] };
}

export interface RunOptions {
  /** the base environment (default process.env); its CARDS_URL, if any, is passed on */
  env?: Record<string, string | undefined>;
  /** a server URL to pass as CARDS_URL (overrides env.CARDS_URL) */
  url?: string;
}

/**
 * Runs the run extension `id` with `args` appended and resolves with its exit code.
 * Throws not_found for an unknown id and usage for a hook or service id (both listing the
 * run extensions), and not_found/unavailable when the executable cannot be started.
 */
export async function runExtension(host: RunHost, id: string, args: readonly string[], opts: RunOptions = {}): Promise<number> {
  const runnable = host.defs.extensions.filter((e) => e.kind === "run").map((e) => e.id);
  const ext = host.defs.extensions.find((e) => e.id === id);
  if (!ext) {
    throw new CardsError("not_found", `extension ${JSON.stringify(id)} not found`, { value: id, valid_options: runnable, hint: "see `cards ext list`" });
  }
  if (ext.kind !== "run") {
    throw new CardsError("usage", `extension ${JSON.stringify(id)} is a ${ext.kind}, not a run extension; only kind run is started by hand`, {
      value: id, valid_options: runnable,
      hint: ext.kind === "service" ? "services are started and supervised by `cards serve`" : "hooks run on matching events while `cards serve` runs",
    });
  }
  const base = opts.env ?? (process.env as Record<string, string | undefined>);
  const status = await runForeground({
    argv: [...ext.run, ...args],
    cwd: extensionCwd(host.root, ext),
    env: extensionEnv(base, ext, { CARDS_WORKSPACE: host.root, CARDS_URL: opts.url ?? base.CARDS_URL }),
  });
  if (status.error !== undefined && status.errorIn === "cwd") {
    throw new CardsError("not_found", `extension ${id}: ${status.error}`, {
      field: "cwd", value: ext.cwd ?? ".",
      hint: `create the directory, or fix \`cwd\` of ${id} in definitions/extensions.yaml (it is resolved against the workspace root)`,
    });
  }
  if (status.error !== undefined) {
    throw new CardsError(status.errorCode === "ENOENT" ? "not_found" : "unavailable", `extension ${id}: could not start ${JSON.stringify(ext.run[0])}: ${status.error}`, {
      field: "run", value: ext.run[0],
      hint: `check \`run\` of ${id} in definitions/extensions.yaml (a path is resolved against the extension's cwd)`,
    });
  }
  return exitCodeOf(status);
}
