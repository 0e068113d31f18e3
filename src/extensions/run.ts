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
  /** the caller's --actor, passed as CARDS_ACTOR (overrides env.CARDS_ACTOR): the `cards` calls it makes act as that user */
  actor?: string;
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
    env: extensionEnv(base, ext, { CARDS_WORKSPACE: host.root, CARDS_URL: opts.url ?? base.CARDS_URL, ...(opts.actor ? { CARDS_ACTOR: opts.actor } : {}) }),
  });
  if (status.error !== undefined && status.errorIn === "cwd") {
    throw new CardsError("not_found", `extension ${id}: ${status.error}`, {
      field: "cwd", value: ext.cwd ?? ".",
      hint: `create the directory, or fix \`cwd\` of ${id} in definitions/extensions.yaml (it is resolved against the workspace root)`,
    });
  }
  if (status.error !== undefined) {
    // a file that is not there, or not a program (not executable, a directory): the
    // declaration is wrong, not the machine busy (unavailable, exit 7, is for retrying)
    const missing = status.errorCode === "ENOENT";
    const notRunnable = status.errorCode === "EACCES" || status.errorCode === "EISDIR" || status.errorCode === "ENOEXEC";
    throw new CardsError(missing ? "not_found" : notRunnable ? "bad_request" : "unavailable", `extension ${id}: could not start ${JSON.stringify(ext.run[0])}: ${status.error}`, {
      field: "run", value: ext.run[0],
      hint: notRunnable
        ? `${JSON.stringify(ext.run[0])} is not a program that can run: make a script executable (chmod +x) or name its interpreter first (run: ["sh", "script.sh"]); a path is resolved against ${ext.cwd ? `the cwd ${JSON.stringify(ext.cwd)}` : "the workspace root"}`
        : `check \`run\` of ${id} in definitions/extensions.yaml (a path is resolved against ${ext.cwd ? `the cwd ${JSON.stringify(ext.cwd)}` : "the workspace root"})`,
    });
  }
  return exitCodeOf(status);
}
