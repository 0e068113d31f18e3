/**
 * What every extension process gets: the service's environment, the extension's `env`,
 * then the CARDS_* variables of DECISIONS.md (which win), and its working directory (the
 * workspace root, or `cwd` resolved against it).
 */
import { resolve } from "node:path";
import { CARDS_ENV } from "../domain/extension-env.ts";
import type { ExtensionDef } from "../domain/types.ts";
import type { ExitStatus } from "../platform/spawn.ts";

/** Builds a child environment: `base`, then `ext.env`, then `vars` (undefined values are left out). */
export function extensionEnv(
  base: Record<string, string | undefined>,
  ext: ExtensionDef,
  vars: Record<string, string | undefined>,
): Record<string, string> {
  // the list `cards check` reads (its notice of a declared key cards replaces) must name every one set here
  const listed = CARDS_ENV[ext.kind];
  for (const k of Object.keys(vars)) {
    if (!listed.always.includes(k) && !listed.when_given.includes(k)) throw new Error(`${k} is set for a ${ext.kind} but missing from CARDS_ENV (src/domain/extension-env.ts)`);
  }
  const env: Record<string, string> = {};
  for (const layer of [base, ext.env ?? {}, vars]) {
    for (const [k, v] of Object.entries(layer)) if (v !== undefined) env[k] = v;
  }
  return env;
}

/** The extension's working directory: the workspace root, or its `cwd` resolved against the root. */
export function extensionCwd(root: string, ext: ExtensionDef): string {
  return resolve(root, ext.cwd ?? ".");
}

/** A short human description of how a process ended, for log lines. */
export function describeExit(s: ExitStatus, argv0: string): string {
  if (s.error !== undefined && s.errorIn === "cwd") return `could not start: ${s.error} (check \`cwd\`)`;
  if (s.error !== undefined) return `could not start ${JSON.stringify(argv0)}: ${s.error}`;
  if (s.signal) return `killed by ${s.signal}`;
  return `exited with code ${s.code}`;
}

/** The last part of a process's stderr as one quoted line (empty when there was none). */
export function stderrNote(tail: string, max = 2048): string {
  if (!tail) return "";
  const t = tail.length > max ? `...${tail.slice(-max)}` : tail;
  return `; stderr: ${JSON.stringify(t)}`;
}
